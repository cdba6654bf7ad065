-- name: memcpy-sum
-- description: copies by direction and sync/async: count, bytes, time, effective GB/s
SELECT kind, CASE async WHEN 1 THEN 'async' ELSE 'sync' END AS mode,
       sum(copies) AS copies, sum(bytes) AS bytes, sum(dur_total) AS total_ns,
       hist_quantile(hist, 50) AS med_ns,
       CASE WHEN sum(dur_total) > 0
            THEN round(1.0 * sum(bytes) / sum(dur_total), 3) END
           AS host_gb_per_s,
       sum(errors) AS errors
FROM sum_memcpy
GROUP BY kind, async
ORDER BY bytes DESC, kind, mode
-- raw:
SELECT kind, CASE async WHEN 1 THEN 'async' ELSE 'sync' END AS mode,
       count(*) AS copies, sum(bytes) AS bytes, sum(dur) AS total_ns,
       hist_quantile(dur, 50) AS med_ns,
       CASE WHEN sum(dur) > 0 THEN round(1.0 * sum(bytes) / sum(dur), 3) END
           AS host_gb_per_s,
       sum(ret IS NOT NULL AND ret != 0) AS errors
FROM cuda_memcpy
GROUP BY kind, async
ORDER BY bytes DESC, kind, mode
