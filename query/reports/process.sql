-- name: process
-- description: one process's story: identity, container and pod, CUDA calls and errors by minute, off-CPU and I/O, exit
-- param: pid:pid= the process id
WITH p AS (
  SELECT * FROM process WHERE pid = :pid
  ORDER BY exit_ts IS NULL, ts DESC LIMIT 1
), m AS (
  SELECT minute, sum(calls) AS calls, sum(errors) AS errors,
         coalesce(sum(calls) FILTER (WHERE api LIKE '%Launch%'), 0)
             AS launches
  FROM sum_api WHERE pid = :pid GROUP BY minute
)
-- value, the long column (cmdline, cgroup), last.
SELECT 'identity' AS section, 'comm' AS item, NULL AS n, comm AS value FROM p
UNION ALL SELECT 'identity', 'ppid', NULL, ppid FROM p
UNION ALL SELECT 'identity', 'exe', NULL, exe FROM p
UNION ALL SELECT 'identity', 'cmdline', NULL, cmdline FROM p
UNION ALL SELECT 'identity', 'cgroup', NULL, cgroup FROM p
UNION ALL SELECT 'identity', 'container_id', NULL, container_id FROM p
UNION ALL SELECT 'identity', 'pod_uid', NULL, pod_uid FROM p
UNION ALL SELECT 'identity', 'start_ts', NULL, iso(start_ts) FROM p
UNION ALL SELECT 'cuda', 'minute ' || iso(minute), calls,
                 launches || ' launches, ' || errors || ' errors'
          FROM m
-- Failing calls by code: read raw only in the minutes where sum_api
-- counted errors of the process (it keeps no codes).
UNION ALL SELECT 'cuda errors', c.api || ' ' || c.ret, count(*),
                 cuda_error_name(c.api, c.ret)
          FROM (SELECT DISTINCT minute FROM sum_api
                WHERE pid = :pid AND errors > 0) e
          CROSS JOIN cuda_api c -- e outermost: each minute is a ts range
          WHERE c.pid = :pid AND c.ts >= e.minute
            AND c.ts < e.minute + 60000000000
            AND c.ret IS NOT NULL AND c.ret != 0
          GROUP BY c.api, c.ret
UNION ALL SELECT 'off-cpu', 'state ' || state, sum(intervals),
                 round(sum(dur_total) / 1e9, 3) || ' s'
          FROM sum_offcpu WHERE pid = :pid GROUP BY state
-- I/O from sum_io: its file rows count only calls that did not fail.
UNION ALL SELECT 'file i/o', syscall, sum(calls), sum(bytes) || ' bytes'
          FROM sum_io WHERE pid = :pid AND block = 0 GROUP BY syscall
UNION ALL SELECT 'block i/o', op, sum(calls), sum(bytes) || ' bytes'
          FROM sum_io WHERE pid = :pid AND block = 1 GROUP BY op
UNION ALL SELECT 'exit', 'exit_ts', NULL, iso(exit_ts) FROM p WHERE exit_ts IS NOT NULL
UNION ALL SELECT 'exit', 'exit_code', NULL, exit_code FROM p WHERE exit_ts IS NOT NULL
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
-- value, the long column (cmdline, cgroup), last.
SELECT 'identity' AS section, 'comm' AS item, NULL AS n, comm AS value FROM p
UNION ALL SELECT 'identity', 'ppid', NULL, ppid FROM p
UNION ALL SELECT 'identity', 'exe', NULL, exe FROM p
UNION ALL SELECT 'identity', 'cmdline', NULL, cmdline FROM p
UNION ALL SELECT 'identity', 'cgroup', NULL, cgroup FROM p
UNION ALL SELECT 'identity', 'container_id', NULL, container_id FROM p
UNION ALL SELECT 'identity', 'pod_uid', NULL, pod_uid FROM p
UNION ALL SELECT 'identity', 'start_ts', NULL, iso(start_ts) FROM p
UNION ALL SELECT 'cuda', 'minute ' || iso(minute), calls,
                 launches || ' launches, ' || errors || ' errors'
          FROM m
UNION ALL SELECT 'cuda errors', api || ' ' || ret, count(*),
                 cuda_error_name(api, ret)
          FROM cuda_api WHERE pid = :pid AND ret IS NOT NULL AND ret != 0
          GROUP BY api, ret
UNION ALL SELECT 'off-cpu', 'state ' || state, count(*),
                 round(sum(dur) / 1e9, 3) || ' s'
          FROM offcpu WHERE pid = :pid GROUP BY state
UNION ALL SELECT 'file i/o', syscall, count(*), sum(max(bytes, 0)) || ' bytes'
          FROM file_io WHERE pid = :pid GROUP BY syscall
UNION ALL SELECT 'block i/o', op, count(*), sum(bytes) || ' bytes'
          FROM block_io WHERE pid = :pid GROUP BY op
UNION ALL SELECT 'exit', 'exit_ts', NULL, iso(exit_ts) FROM p WHERE exit_ts IS NOT NULL
UNION ALL SELECT 'exit', 'exit_code', NULL, exit_code FROM p WHERE exit_ts IS NOT NULL
