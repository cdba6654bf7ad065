-- name: cuda-errors
-- description: failing CUDA calls by API, code (with its name) and process, first and last seen
-- param: limit:count=100 most rows shown
SELECT api, ret AS code, cuda_error_name(api, ret) AS error, pid, comm,
       count(*) AS calls, min(ts) AS first_ts, max(ts) AS last_ts
FROM cuda_api
WHERE ret IS NOT NULL AND ret != 0
GROUP BY api, ret, pid, comm
ORDER BY calls DESC, api, code, pid
LIMIT :limit
