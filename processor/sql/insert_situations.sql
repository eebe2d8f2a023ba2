-- The registered Arrow table new_situations holds the situations, named as the table's
-- columns (coordinates and cells as JSON text).
INSERT INTO situations BY NAME SELECT * FROM new_situations;
