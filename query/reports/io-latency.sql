-- name: io-latency
-- description: block I/O latency per device (major:minor and the name the recording host gave it) and op (count, bytes, p50, p99, max, then a log2 histogram, bucket_us its lower bound), and file calls per process and call
WITH b AS (
  -- A device is its major:minor and its name, as recorded (NULL in
  -- recordings made before names were kept).
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
       sum(bytes) AS bytes, round(median(dur) / 1e3, 1) AS p50_us,
       round(percentile(dur, 99) / 1e3, 1) AS p99_us,
       round(max(dur) / 1e3, 1) AS max_us, NULL AS bar, 0 AS o
FROM b GROUP BY dev, op
UNION ALL
SELECT 'block', dev, op, bucket, n, NULL, NULL, NULL, NULL,
       substr('########################################', 1,
              CAST(40.0 * n / top + 0.999 AS INTEGER)), 1
FROM h
UNION ALL
SELECT 'file', pid || ' ' || min(comm), syscall, NULL, count(*),
       sum(max(bytes, 0)), round(median(dur) / 1e3, 1),
       round(percentile(dur, 99) / 1e3, 1), round(max(dur) / 1e3, 1),
       NULL, 2
FROM file_io GROUP BY pid, syscall
)
ORDER BY o, what, op, bucket_us
