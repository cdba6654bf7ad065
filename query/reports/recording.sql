-- name: recording
-- description: what the recording holds: segments per host, span, disk use, events per table, drops by source, the recorder's runs and the unrecorded time between them (a restart or a crash), gaps between segments
-- param: gap_s:duration=60s a gap between consecutive segments longer than this is listed (digits alone: seconds)
WITH s AS (
  SELECT *, lag(end_ts) OVER (PARTITION BY host ORDER BY start_ts) AS prev_end
  FROM segments
), r AS (
  SELECT *, lag(ended) OVER (PARTITION BY dir ORDER BY run) AS prev_ended
  FROM runs
), e(tbl, n) AS (
  -- table_rows() counts a table's rows from its blocks' headers, decoding
  -- only the blocks across the window's ends: count(*) would walk every
  -- row of a busy day.
  SELECT 'cuda_kernel', table_rows('cuda_kernel')
  UNION ALL SELECT 'cuda_memcpy', table_rows('cuda_memcpy')
  UNION ALL SELECT 'cuda_memset', table_rows('cuda_memset')
  UNION ALL SELECT 'cuda_mem', table_rows('cuda_mem')
  UNION ALL SELECT 'cuda_sync', table_rows('cuda_sync')
  UNION ALL SELECT 'cuda_graph', table_rows('cuda_graph')
  UNION ALL SELECT 'nccl', table_rows('nccl')
  UNION ALL SELECT 'offcpu', table_rows('offcpu')
  UNION ALL SELECT 'runq', table_rows('runq')
  UNION ALL SELECT 'block_io', table_rows('block_io')
  UNION ALL SELECT 'file_io', table_rows('file_io')
  UNION ALL SELECT 'process', table_rows('process')
)
-- value, the long column, last.
SELECT 'segments' AS section, host AS item, count(*) AS n,
       sum(sealed) || ' sealed, ' || sum(bytes) || ' bytes' AS value
FROM segments GROUP BY host
UNION ALL
SELECT 'span', host, round((max(end_ts) - min(start_ts)) / 1e9, 3),
       iso(min(start_ts)) || ' .. ' || iso(max(end_ts))
FROM segments GROUP BY host
UNION ALL
SELECT 'events', tbl, n, NULL FROM e WHERE n > 0
UNION ALL
SELECT 'drops', source, sum(count), NULL FROM drops GROUP BY source
UNION ALL
SELECT 'run', coalesce(host, dir) || ' #' || run || ' pid ' || pid,
       round((end_ts - start_ts) / 1e9, 3),
       iso(start_ts) || ' .. ' || coalesce(iso(end_ts), 'now') || ' ' ||
       ended
FROM r
UNION ALL
SELECT 'unrecorded', coalesce(host, dir) || ' ' || iso(start_ts - gap_ns) ||
       ' .. ' || iso(start_ts), round(gap_ns / 1e9, 3),
       CASE prev_ended WHEN 'stopped' THEN 'restart: run ' || (run - 1) ||
         ' stopped, run ' || run || ' started'
       ELSE 'crash: run ' || (run - 1) || ' wrote no stop line, run ' ||
         run || ' started' END
FROM r WHERE gap_ns IS NOT NULL
UNION ALL
SELECT 'gap', host || ' ' || iso(prev_end) || ' .. ' || iso(start_ts),
       round((start_ts - prev_end) / 1e9, 3), path
FROM s WHERE prev_end IS NOT NULL AND start_ts - prev_end > :gap_s
-- raw:
WITH s AS (
  SELECT *, lag(end_ts) OVER (PARTITION BY host ORDER BY start_ts) AS prev_end
  FROM segments
), r AS (
  SELECT *, lag(ended) OVER (PARTITION BY dir ORDER BY run) AS prev_ended
  FROM runs
), e(tbl, n) AS (
  SELECT 'cuda_kernel', count(*) FROM cuda_kernel
  UNION ALL SELECT 'cuda_memcpy', count(*) FROM cuda_memcpy
  UNION ALL SELECT 'cuda_memset', count(*) FROM cuda_memset
  UNION ALL SELECT 'cuda_mem', count(*) FROM cuda_mem
  UNION ALL SELECT 'cuda_sync', count(*) FROM cuda_sync
  UNION ALL SELECT 'cuda_graph', count(*) FROM cuda_graph
  UNION ALL SELECT 'nccl', count(*) FROM nccl
  UNION ALL SELECT 'offcpu', count(*) FROM offcpu
  UNION ALL SELECT 'runq', count(*) FROM runq
  UNION ALL SELECT 'block_io', count(*) FROM block_io
  UNION ALL SELECT 'file_io', count(*) FROM file_io
  UNION ALL SELECT 'process', count(*) FROM process
)
-- value, the long column, last.
SELECT 'segments' AS section, host AS item, count(*) AS n,
       sum(sealed) || ' sealed, ' || sum(bytes) || ' bytes' AS value
FROM segments GROUP BY host
UNION ALL
SELECT 'span', host, round((max(end_ts) - min(start_ts)) / 1e9, 3),
       iso(min(start_ts)) || ' .. ' || iso(max(end_ts))
FROM segments GROUP BY host
UNION ALL
SELECT 'events', tbl, n, NULL FROM e WHERE n > 0
UNION ALL
SELECT 'drops', source, sum(count), NULL FROM drops GROUP BY source
UNION ALL
SELECT 'run', coalesce(host, dir) || ' #' || run || ' pid ' || pid,
       round((end_ts - start_ts) / 1e9, 3),
       iso(start_ts) || ' .. ' || coalesce(iso(end_ts), 'now') || ' ' ||
       ended
FROM r
UNION ALL
SELECT 'unrecorded', coalesce(host, dir) || ' ' || iso(start_ts - gap_ns) ||
       ' .. ' || iso(start_ts), round(gap_ns / 1e9, 3),
       CASE prev_ended WHEN 'stopped' THEN 'restart: run ' || (run - 1) ||
         ' stopped, run ' || run || ' started'
       ELSE 'crash: run ' || (run - 1) || ' wrote no stop line, run ' ||
         run || ' started' END
FROM r WHERE gap_ns IS NOT NULL
UNION ALL
SELECT 'gap', host || ' ' || iso(prev_end) || ' .. ' || iso(start_ts),
       round((start_ts - prev_end) / 1e9, 3), path
FROM s WHERE prev_end IS NOT NULL AND start_ts - prev_end > :gap_s
