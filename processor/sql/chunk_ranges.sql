-- Each chunk of the plan (chunk_plan.sql, chunk_records.sql): its number, the first and
-- last row of its spans, of its log records (NULL when it has none), and whether any
-- label applies to it.
SELECT s.chunk, s.first_row, s.last_row, l.first_row, l.last_row, b.chunk IS NOT NULL
FROM (SELECT chunk, min(span_row) AS first_row, max(span_row) AS last_row
      FROM span_chunks GROUP BY chunk) AS s
LEFT JOIN (SELECT chunk, min(log_row) AS first_row, max(log_row) AS last_row
           FROM log_chunks GROUP BY chunk) AS l USING (chunk)
LEFT JOIN (SELECT DISTINCT chunk FROM label_chunks) AS b USING (chunk)
ORDER BY s.chunk;
