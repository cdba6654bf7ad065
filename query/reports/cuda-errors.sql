-- name: cuda-errors
-- description: failing CUDA calls by API, code (with its name) and process, first and last seen
-- param: limit:count=100 most rows shown
--
-- sum_api counts each process's failing calls per API and minute (errors:
-- ret not 0, as here), but not their codes: only the minutes where a
-- process failed a call are read raw, which over a busy day is almost
-- none of it.
WITH e AS MATERIALIZED (
  SELECT DISTINCT pid, minute FROM sum_api WHERE errors > 0
)
SELECT c.api, c.ret AS code, cuda_error_name(c.api, c.ret) AS error, c.pid,
       c.comm, count(*) AS calls, min(c.ts) AS first_ts, max(c.ts) AS last_ts
FROM e CROSS JOIN cuda_api c -- e outermost: each minute is a ts range
WHERE c.pid = e.pid AND c.ts >= e.minute AND c.ts < e.minute + 60000000000
  AND c.ret IS NOT NULL AND c.ret != 0
GROUP BY c.api, c.ret, c.pid, c.comm
ORDER BY calls DESC, c.api, code, c.pid
LIMIT :limit
-- raw:
SELECT api, ret AS code, cuda_error_name(api, ret) AS error, pid, comm,
       count(*) AS calls, min(ts) AS first_ts, max(ts) AS last_ts
FROM cuda_api
WHERE ret IS NOT NULL AND ret != 0
GROUP BY api, ret, pid, comm
ORDER BY calls DESC, api, code, pid
LIMIT :limit
