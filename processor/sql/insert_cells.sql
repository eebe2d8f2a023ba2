-- The registered Arrow table new_cells holds the map's rows, named as the table's columns.
INSERT INTO failure_map BY NAME SELECT * FROM new_cells;
