-- name: nccl-skew
-- description: the straggler table: per rank, how late it enters collectives (ts minus the first rank's, same communicator and seq, across hosts): mean, p99, max, times last; latest first
-- param: limit:count=100 most ranks shown
-- Grouped in C (query/nccl_fleet.c): every collective's first and last
-- arrival, each rank's lateness and its p99, in one pass over the calls.
SELECT host, rank, pid, comm_id, n || '/' || nranks AS ranks,
       collectives, last,
       round(mean_late / 1e6, 3) AS mean_late_ms,
       round(p99_late / 1e6, 3) AS p99_late_ms,
       round(max_late / 1e6, 3) AS max_late_ms,
       round(host_late / 1e6, 3) AS host_late_ms
FROM nccl_rank_skew
ORDER BY mean_late DESC, host, rank
LIMIT :limit
-- raw:
WITH c AS (
  SELECT comm_id, seq, host, pid, rank, nranks, ts,
         min(ts) OVER w AS first, max(ts) OVER w AS last,
         count(*) OVER w AS n
  FROM nccl
  WHERE seq IS NOT NULL AND comm_id IS NOT NULL
    AND +op IN ('AllReduce', 'AllGather', 'ReduceScatter', 'Broadcast',
                'Reduce', 'AllToAll')
  WINDOW w AS (PARTITION BY comm_id, seq)
), d AS (
  SELECT *, ts - first AS late,
         sum(ts = last) OVER (PARTITION BY comm_id, seq) AS nlast,
         -- Against the host's own first rank: no clock between hosts.
         CASE WHEN count(*) OVER h > 1 THEN ts - min(ts) OVER h END
             AS host_late,
         max(n) OVER (PARTITION BY comm_id) AS most
  FROM c
  WINDOW h AS (PARTITION BY comm_id, seq, host)
)
-- Only collectives seen on as many ranks as the communicator's best
-- covered ones: a window's edge or a missing host cannot name a rank late.
SELECT host, rank, pid, comm_id, max(n) || '/' || max(nranks) AS ranks,
       count(*) AS collectives, sum(ts = last AND nlast = 1) AS last,
       round(avg(late) / 1e6, 3) AS mean_late_ms,
       round(hist_quantile(late, 99) / 1e6, 3) AS p99_late_ms,
       round(max(late) / 1e6, 3) AS max_late_ms,
       round(avg(host_late) / 1e6, 3) AS host_late_ms
FROM d
WHERE n = most AND n > 1
GROUP BY comm_id, host, pid, rank
ORDER BY avg(late) DESC, host, rank
LIMIT :limit
