-- name: sync-long
-- description: the longest CUDA synchronizations of each thread (device, stream, event waits)
-- param: per_thread:count=5 most synchronizations shown per thread
-- param: limit:count=50 most rows shown
--
-- A thread's per_thread longest waits all reach the per_thread-th
-- longest of its minutes' longest waits (sum_sync: that many minutes
-- hold a wait at least so long), so only the minutes whose longest wait
-- reaches it are read raw: a few per thread instead of every wait.  A
-- wait with no duration yet counts 0 in sum_sync and is never listed.
WITH m AS (
  SELECT host, pid, tid, minute, max(dur_max) AS mx
  FROM sum_sync WHERE minute IS NOT NULL
  GROUP BY host, pid, tid, minute
), f AS (
  SELECT *, nth_value(mx, max(:per_thread, 1)) OVER (
              PARTITION BY pid, tid ORDER BY mx DESC
              ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
            AS floor_ns
  FROM m
), c AS MATERIALIZED (
  -- The minutes to read; a floor of 0 or less bounds nothing.
  SELECT host, pid, tid, minute,
         CASE WHEN floor_ns > 0 THEN floor_ns END AS floor_ns
  FROM f WHERE floor_ns IS NULL OR floor_ns <= 0 OR mx >= floor_ns
), s AS (
  SELECT x.pid, x.tid, x.comm, x.api, x.dur, x.stream, x.ret, x.ts
  FROM c CROSS JOIN cuda_sync x
    ON x.host = c.host AND x.pid = c.pid AND x.ts >= c.minute
   AND x.ts < c.minute + 60000000000
  WHERE x.tid IS c.tid AND x.dur IS NOT NULL
    AND x.dur >= coalesce(c.floor_ns, x.dur)
)
SELECT pid, tid, comm, api, dur AS dur_ns, stream, ret, ts
FROM (SELECT *, row_number() OVER (PARTITION BY pid, tid
                                   ORDER BY dur DESC, ts) AS r
      FROM s)
WHERE r <= :per_thread
ORDER BY dur_ns DESC, ts
LIMIT :limit
-- raw:
SELECT pid, tid, comm, api, dur AS dur_ns, stream, ret, ts
FROM (SELECT *, row_number() OVER (PARTITION BY pid, tid
                                   ORDER BY dur DESC, ts) AS r
      FROM cuda_sync WHERE dur IS NOT NULL)
WHERE r <= :per_thread
ORDER BY dur_ns DESC, ts
LIMIT :limit
