-- name: process
-- description: one process's story: identity, container and pod, CUDA calls and errors by minute, off-CPU and I/O, exit
-- param: pid= the process id
WITH p AS (
  SELECT * FROM process WHERE pid = :pid
  ORDER BY exit_ts IS NULL, ts DESC LIMIT 1
), m AS (
  SELECT minute, sum(calls) AS calls, sum(errors) AS errors,
         coalesce(sum(calls) FILTER (WHERE api LIKE '%Launch%'), 0)
             AS launches
  FROM sum_api WHERE pid = :pid GROUP BY minute
)
SELECT 'identity' AS section, 'comm' AS item, comm AS value, NULL AS n FROM p
UNION ALL SELECT 'identity', 'ppid', ppid, NULL FROM p
UNION ALL SELECT 'identity', 'exe', exe, NULL FROM p
UNION ALL SELECT 'identity', 'cmdline', cmdline, NULL FROM p
UNION ALL SELECT 'identity', 'cgroup', cgroup, NULL FROM p
UNION ALL SELECT 'identity', 'container_id', container_id, NULL FROM p
UNION ALL SELECT 'identity', 'pod_uid', pod_uid, NULL FROM p
UNION ALL SELECT 'identity', 'start_ts', start_ts, NULL FROM p
UNION ALL SELECT 'cuda', 'minute ' || minute,
                 launches || ' launches, ' || errors || ' errors', calls
          FROM m
UNION ALL SELECT 'cuda errors', api || ' ' || ret,
                 cuda_error_name(api, ret), count(*)
          FROM cuda_api WHERE pid = :pid AND ret IS NOT NULL AND ret != 0
          GROUP BY api, ret
UNION ALL SELECT 'off-cpu', 'state ' || state,
                 round(sum(dur) / 1e9, 3) || ' s', count(*)
          FROM offcpu WHERE pid = :pid GROUP BY state
UNION ALL SELECT 'file i/o', syscall, sum(max(bytes, 0)) || ' bytes', count(*)
          FROM file_io WHERE pid = :pid GROUP BY syscall
UNION ALL SELECT 'block i/o', op, sum(bytes) || ' bytes', count(*)
          FROM block_io WHERE pid = :pid GROUP BY op
UNION ALL SELECT 'exit', 'exit_ts', exit_ts, NULL FROM p WHERE exit_ts IS NOT NULL
UNION ALL SELECT 'exit', 'exit_code', exit_code, NULL FROM p WHERE exit_ts IS NOT NULL
-- raw:
WITH p AS (
  SELECT * FROM process WHERE pid = :pid
  ORDER BY exit_ts IS NULL, ts DESC LIMIT 1
), m AS (
  SELECT ts / 60000000000 * 60000000000 AS minute, count(*) AS calls,
         sum(ret IS NOT NULL AND ret != 0) AS errors,
         sum(api LIKE '%Launch%') AS launches
  FROM cuda_api WHERE pid = :pid GROUP BY minute
)
SELECT 'identity' AS section, 'comm' AS item, comm AS value, NULL AS n FROM p
UNION ALL SELECT 'identity', 'ppid', ppid, NULL FROM p
UNION ALL SELECT 'identity', 'exe', exe, NULL FROM p
UNION ALL SELECT 'identity', 'cmdline', cmdline, NULL FROM p
UNION ALL SELECT 'identity', 'cgroup', cgroup, NULL FROM p
UNION ALL SELECT 'identity', 'container_id', container_id, NULL FROM p
UNION ALL SELECT 'identity', 'pod_uid', pod_uid, NULL FROM p
UNION ALL SELECT 'identity', 'start_ts', start_ts, NULL FROM p
UNION ALL SELECT 'cuda', 'minute ' || minute,
                 launches || ' launches, ' || errors || ' errors', calls
          FROM m
UNION ALL SELECT 'cuda errors', api || ' ' || ret,
                 cuda_error_name(api, ret), count(*)
          FROM cuda_api WHERE pid = :pid AND ret IS NOT NULL AND ret != 0
          GROUP BY api, ret
UNION ALL SELECT 'off-cpu', 'state ' || state,
                 round(sum(dur) / 1e9, 3) || ' s', count(*)
          FROM offcpu WHERE pid = :pid GROUP BY state
UNION ALL SELECT 'file i/o', syscall, sum(max(bytes, 0)) || ' bytes', count(*)
          FROM file_io WHERE pid = :pid GROUP BY syscall
UNION ALL SELECT 'block i/o', op, sum(bytes) || ' bytes', count(*)
          FROM block_io WHERE pid = :pid GROUP BY op
UNION ALL SELECT 'exit', 'exit_ts', exit_ts, NULL FROM p WHERE exit_ts IS NOT NULL
UNION ALL SELECT 'exit', 'exit_code', exit_code, NULL FROM p WHERE exit_ts IS NOT NULL
