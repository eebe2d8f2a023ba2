-- How many cells the failure map holds (0: no map has been computed; a computed map with
-- nothing failing has cells but no situations).
SELECT count(*) FROM failure_map;
