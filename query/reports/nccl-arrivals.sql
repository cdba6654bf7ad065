-- name: nccl-arrivals
-- description: per NCCL collective (communicator, seq): ranks seen, first arrival, arrival spread across ranks and hosts, the last rank (host, rank, pid) and its lead over the one before; widest spread first
-- param: limit:count=50 most collectives shown
-- Grouped in C (query/nccl_fleet.c): the :limit widest collectives with
-- their first arrival, last rank and the one before it, from the records
-- gpurecd keeps per nccl block (an eighth of the calls with 8 ranks a
-- host), or from the calls where a block has none.
SELECT comm_id, seq, op, bytes, n || '/' || nranks AS ranks,
       first_ts, round((last_ts - first_ts) / 1e6, 3) AS spread_ms,
       last_host, last_rank, last_pid,
       round((last_ts - prev_ts) / 1e6, 3) AS lead_ms
FROM nccl_last_arrival(:limit)
ORDER BY last_ts - first_ts DESC, first_ts, comm_id, seq
LIMIT :limit
-- raw:
WITH c AS (
  SELECT comm_id, seq, op, bytes, host, pid, rank, nranks, ts,
         row_number() OVER (PARTITION BY comm_id, seq
                            ORDER BY ts DESC, host, rank) AS pos,
         count(*) OVER (PARTITION BY comm_id, seq) AS n,
         min(ts) OVER (PARTITION BY comm_id, seq) AS first
  FROM nccl
  WHERE seq IS NOT NULL AND comm_id IS NOT NULL
    AND +op IN ('AllReduce', 'AllGather', 'ReduceScatter', 'Broadcast',
                'Reduce', 'AllToAll')
)
SELECT l.comm_id, l.seq, l.op, l.bytes, l.n || '/' || l.nranks AS ranks,
       l.first AS first_ts, round((l.ts - l.first) / 1e6, 3) AS spread_ms,
       l.host AS last_host, l.rank AS last_rank, l.pid AS last_pid,
       round((l.ts - p.ts) / 1e6, 3) AS lead_ms
FROM c l LEFT JOIN c p
  ON p.comm_id = l.comm_id AND p.seq = l.seq AND p.pos = 2
WHERE l.pos = 1
ORDER BY l.ts - l.first DESC, l.first, l.comm_id, l.seq
LIMIT :limit
