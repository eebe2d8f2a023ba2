-- Each chunk of the plan (chunk_plan.sql, chunk_records.sql): its number, the commit and
-- start-time ranges of its spans, the commit range of its log records (NULL when it has
-- none), and whether any label applies to it.
SELECT s.chunk, s.first_seq, s.last_seq, s.first_start, s.last_start, l.first_seq,
       l.last_seq, b.chunk IS NOT NULL
FROM (SELECT chunk, min(first_seq) AS first_seq, max(last_seq) AS last_seq,
             min(first_start) AS first_start, max(last_start) AS last_start
      FROM trace_chunks GROUP BY chunk) AS s
LEFT JOIN log_chunks AS l USING (chunk)
LEFT JOIN (SELECT DISTINCT chunk FROM label_chunks) AS b USING (chunk)
ORDER BY s.chunk;
