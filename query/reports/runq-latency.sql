-- name: runq-latency
-- description: run-queue latency per GPU process: waits, p50, p99, max; then a log2 histogram, bucket_us its lower bound (0: under 1 us)
-- One comm per pid: its main thread's, else the least; the histogram
-- rows carry the same one as the summary row (a bucket's own threads
-- would give each bucket another).  p50 and p99 come from sum_runq's
-- histograms (within 0.4 %), and --raw reads the same quantiles from the
-- waits themselves (hist_quantile), so both halves print the same.
WITH c AS (
  SELECT pid, coalesce(max(CASE WHEN main = 1 THEN comm END), min(comm))
             AS comm
  FROM sum_runq GROUP BY pid
)
SELECT r.pid, c.comm, bucket_us, waits,
       CASE WHEN bucket_us IS NULL THEN p50_us END AS p50_us,
       CASE WHEN bucket_us IS NULL THEN p99_us END AS p99_us,
       CASE WHEN bucket_us IS NULL THEN max_us END AS max_us,
       CASE WHEN bucket_us IS NOT NULL
            THEN substr('########################################', 1,
                        CAST(40.0 * waits / max_waits + 0.999 AS INTEGER))
       END AS bar
FROM (
  SELECT pid, NULL AS bucket_us, sum(waits) AS waits,
         round(hist_quantile(hist, 50) / 1e3, 1) AS p50_us,
         round(hist_quantile(hist, 99) / 1e3, 1) AS p99_us,
         round(max(dur_max) / 1e3, 1) AS max_us, 1 AS max_waits, 0 AS o
  FROM sum_runq GROUP BY pid
  UNION ALL
  SELECT pid, bucket_us, sum(waits), NULL, NULL, NULL,
         max(sum(waits)) OVER (PARTITION BY pid), 1
  FROM sum_runq GROUP BY pid, bucket_us
) r LEFT JOIN c ON c.pid IS r.pid
ORDER BY r.pid, o, bucket_us
-- raw:
WITH c AS (
  SELECT pid, coalesce(max(CASE WHEN tid = pid THEN comm END), min(comm))
             AS comm
  FROM runq GROUP BY pid
)
SELECT r.pid, c.comm, bucket_us, waits,
       CASE WHEN bucket_us IS NULL THEN p50_us END AS p50_us,
       CASE WHEN bucket_us IS NULL THEN p99_us END AS p99_us,
       CASE WHEN bucket_us IS NULL THEN max_us END AS max_us,
       CASE WHEN bucket_us IS NOT NULL
            THEN substr('########################################', 1,
                        CAST(40.0 * waits / max_waits + 0.999 AS INTEGER))
       END AS bar
FROM (
  SELECT pid, NULL AS bucket_us, count(*) AS waits,
         round(hist_quantile(dur, 50) / 1e3, 1) AS p50_us,
         round(hist_quantile(dur, 99) / 1e3, 1) AS p99_us,
         round(max(dur) / 1e3, 1) AS max_us, 1 AS max_waits, 0 AS o
  FROM runq GROUP BY pid
  UNION ALL
  SELECT pid, b, count(*), NULL, NULL, NULL,
         max(count(*)) OVER (PARTITION BY pid), 1
  FROM (SELECT pid,
               CASE WHEN dur < 1000 THEN 0
                    ELSE CAST(power(2, CAST(log2(dur / 1000.0) AS INTEGER))
                              AS INTEGER) END AS b
        FROM runq)
  GROUP BY pid, b
) r LEFT JOIN c ON c.pid IS r.pid
ORDER BY r.pid, o, bucket_us
