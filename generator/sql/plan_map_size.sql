-- How many cells the failure map holds (0: no map has been computed).
SELECT count(*) FROM failure_map;
