-- name: io-latency
-- description: block I/O latency per device (major:minor and the name the recording host gave it) and op (count, bytes, p50, p99, max, then a log2 histogram, bucket_us its lower bound), and file calls per process and call
-- p50 and p99 come from sum_io's histograms (within 0.4 %), and --raw
-- reads the same quantiles from the events themselves (hist_quantile).
WITH b AS (
  -- A device is its major:minor and its name, as recorded (NULL in
  -- recordings made before names were kept).
  SELECT dev || coalesce(' ' || disk, '') AS dev, op, bucket_us AS bucket,
         calls, bytes, dur_max, hist
  FROM sum_io WHERE block = 1
), h AS (
  SELECT dev, op, bucket, sum(calls) AS n,
         max(sum(calls)) OVER (PARTITION BY dev, op) AS top
  FROM b GROUP BY dev, op, bucket
)
SELECT source, what, op, bucket_us, n, bytes, p50_us, p99_us, max_us, bar
FROM (
SELECT 'block' AS source, dev AS what, op, NULL AS bucket_us,
       sum(calls) AS n, sum(bytes) AS bytes,
       round(hist_quantile(hist, 50) / 1e3, 1) AS p50_us,
       round(hist_quantile(hist, 99) / 1e3, 1) AS p99_us,
       round(max(dur_max) / 1e3, 1) AS max_us, NULL AS bar, 0 AS o
FROM b GROUP BY dev, op
UNION ALL
SELECT 'block', dev, op, bucket, n, NULL, NULL, NULL, NULL,
       substr('########################################', 1,
              CAST(40.0 * n / top + 0.999 AS INTEGER)), 1
FROM h
UNION ALL
SELECT 'file', pid || ' ' || min(comm), syscall, NULL, sum(calls),
       sum(bytes), round(hist_quantile(hist, 50) / 1e3, 1),
       round(hist_quantile(hist, 99) / 1e3, 1), round(max(dur_max) / 1e3, 1),
       NULL, 2
FROM sum_io WHERE block = 0 GROUP BY pid, syscall
)
ORDER BY o, what, op, bucket_us
-- raw:
WITH b AS (
  SELECT dev || coalesce(' ' || disk, '') AS dev, op, dur, bytes,
         CASE WHEN dur < 1000 THEN 0
              ELSE CAST(power(2, CAST(log2(dur / 1000.0) AS INTEGER))
                        AS INTEGER) END AS bucket
  FROM block_io
), h AS (
  SELECT dev, op, bucket, count(*) AS n,
         max(count(*)) OVER (PARTITION BY dev, op) AS top
  FROM b GROUP BY dev, op, bucket
)
SELECT source, what, op, bucket_us, n, bytes, p50_us, p99_us, max_us, bar
FROM (
SELECT 'block' AS source, dev AS what, op, NULL AS bucket_us, count(*) AS n,
       sum(bytes) AS bytes, round(hist_quantile(dur, 50) / 1e3, 1) AS p50_us,
       round(hist_quantile(dur, 99) / 1e3, 1) AS p99_us,
       round(max(dur) / 1e3, 1) AS max_us, NULL AS bar, 0 AS o
FROM b GROUP BY dev, op
UNION ALL
SELECT 'block', dev, op, bucket, n, NULL, NULL, NULL, NULL,
       substr('########################################', 1,
              CAST(40.0 * n / top + 0.999 AS INTEGER)), 1
FROM h
UNION ALL
SELECT 'file', pid || ' ' || min(comm), syscall, NULL, count(*),
       sum(max(bytes, 0)), round(hist_quantile(dur, 50) / 1e3, 1),
       round(hist_quantile(dur, 99) / 1e3, 1), round(max(dur) / 1e3, 1),
       NULL, 2
FROM file_io GROUP BY pid, syscall
)
ORDER BY o, what, op, bucket_us
