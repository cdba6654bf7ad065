-- name: cuda-api-sum
-- description: per CUDA API: calls, total/avg/median/p99/max time, errors
-- param: limit=50 most rows shown, by total time
SELECT api,
       count(*) AS calls,
       round(100.0 * sum(dur) / (SELECT sum(dur) FROM cuda_api), 1) AS time_pct,
       sum(dur) AS total_ns,
       CAST(avg(dur) AS INTEGER) AS avg_ns,
       CAST(median(dur) AS INTEGER) AS med_ns,
       CAST(percentile(dur, 99) AS INTEGER) AS p99_ns,
       max(dur) AS max_ns,
       sum(ret IS NOT NULL AND ret != 0) AS errors
FROM cuda_api
GROUP BY api
ORDER BY total_ns DESC, api
LIMIT :limit
