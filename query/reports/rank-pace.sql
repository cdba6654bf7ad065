-- name: rank-pace
-- description: per NCCL rank: collectives, last seq and how far behind the communicator's furthest rank, iteration time (median) and iterations per minute, share of time inside NCCL calls; slowest first
-- param: per_iter:count=0 collectives per iteration (0: the longest median seq gap between repeats of one op and size)
-- Grouped in C (query/nccl_fleet.c): per rank its collectives and last
-- seq, per communicator the iteration length, per process the median
-- iteration time and its time inside NCCL calls.
SELECT host, rank, pid, comm_id, collectives, last_seq,
       comm_last_seq - last_seq AS behind,
       per_iter, round(iter_ns / 1e6, 1) AS iter_ms,
       round(60e9 / iter_ns, 2) AS iters_per_min,
       CASE WHEN span > 0 THEN round(100.0 * in_nccl / span, 1) END
           AS nccl_pct
FROM nccl_rank_pace(:per_iter)
ORDER BY behind DESC, round(60e9 / iter_ns, 1), nccl_pct, host, rank
-- raw:
WITH c AS (
  SELECT comm_id, host, pid, rank, seq, ts, op, bytes
  FROM nccl
  WHERE seq IS NOT NULL AND comm_id IS NOT NULL
    AND +op IN ('AllReduce', 'AllGather', 'ReduceScatter', 'Broadcast',
                'Reduce', 'AllToAll')
), g AS (
  SELECT comm_id, op, bytes,
         seq - lag(seq) OVER (PARTITION BY comm_id, host, pid, op, bytes
                              ORDER BY seq) AS gap
  FROM c
), p AS (
  SELECT comm_id,
         CASE WHEN :per_iter > 0 THEN :per_iter
              ELSE CAST(round(max(m)) AS INTEGER) END AS per_iter
  FROM (SELECT comm_id, median(gap) AS m FROM g WHERE gap IS NOT NULL
        GROUP BY comm_id, op, bytes)
  GROUP BY comm_id
), it AS (
  -- One iteration: a collective's entry less the same rank's entry into
  -- the collective per_iter before it.
  SELECT a.comm_id, a.host, a.pid, hist_quantile(a.ts - b.ts, 50) AS ns
  FROM c a JOIN p USING (comm_id)
       JOIN c b ON b.comm_id = a.comm_id AND b.host = a.host
                AND b.pid = a.pid AND b.seq = a.seq - p.per_iter
  GROUP BY a.comm_id, a.host, a.pid
), r AS (
  SELECT comm_id, host, pid, rank, count(*) AS collectives,
         max(seq) AS last_seq
  FROM c GROUP BY comm_id, host, pid, rank
), t AS (
  SELECT host, pid, sum(dur) AS in_nccl, max(ts + dur) - min(ts) AS span
  FROM nccl GROUP BY host, pid
)
SELECT r.host, r.rank, r.pid, r.comm_id, r.collectives, r.last_seq,
       max(r.last_seq) OVER (PARTITION BY r.comm_id) - r.last_seq AS behind,
       p.per_iter, round(it.ns / 1e6, 1) AS iter_ms,
       round(60e9 / it.ns, 2) AS iters_per_min,
       CASE WHEN t.span > 0 THEN round(100.0 * t.in_nccl / t.span, 1) END
           AS nccl_pct
FROM r LEFT JOIN p USING (comm_id)
       LEFT JOIN it ON it.comm_id = r.comm_id AND it.host = r.host
                    AND it.pid = r.pid
       LEFT JOIN t ON t.host = r.host AND t.pid = r.pid
-- Pace to 0.1 iterations a minute: the ranks of one synchronous job differ
-- by less (their arrivals' jitter), and only nccl_pct then names the rank
-- the others wait for.
ORDER BY behind DESC, round(60e9 / it.ns, 1), nccl_pct, r.host, r.rank
