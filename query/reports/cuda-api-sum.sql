-- name: cuda-api-sum
-- description: per CUDA API: calls, share and total of the time in CUDA calls, avg/min/median/p99/max time and standard deviation, errors, then the API
-- param: limit:count=50 most rows shown, by total time
SELECT sum(calls) AS calls,
       round(100.0 * sum(dur_total) / (SELECT sum(dur_total) FROM sum_api),
             1) AS time_pct,
       sum(dur_total) AS total_ns,
       sum(dur_total) / sum(calls) AS avg_ns,
       min(dur_min) AS min_ns,
       hist_quantile(hist, 50) AS med_ns,
       hist_quantile(hist, 99) AS p99_ns,
       max(dur_max) AS max_ns,
       round(stddev_ns(calls, dur_total, dur_sq), 1) AS stddev_ns,
       sum(errors) AS errors,
       api
FROM sum_api
GROUP BY api
ORDER BY total_ns DESC, api
LIMIT :limit
-- raw:
SELECT count(*) AS calls,
       round(100.0 * sum(dur) / (SELECT sum(dur) FROM cuda_api), 1)
           AS time_pct,
       sum(dur) AS total_ns,
       sum(dur) / count(*) AS avg_ns,
       min(dur) AS min_ns,
       hist_quantile(dur, 50) AS med_ns,
       hist_quantile(dur, 99) AS p99_ns,
       max(dur) AS max_ns,
       round(stddev_ns(dur), 1) AS stddev_ns,
       sum(ret IS NOT NULL AND ret != 0) AS errors,
       api
FROM cuda_api
GROUP BY api
ORDER BY total_ns DESC, api
LIMIT :limit
