-- The profiles (profiles.sql) one row per profile and axis, for the situation search.
SELECT profile, period, failed, n, coordinate.axis, coordinate.value
FROM (SELECT profile, period, failed, n, unnest(coordinates) AS coordinate
      FROM coordinate_profiles)
ORDER BY profile, coordinate.axis;
