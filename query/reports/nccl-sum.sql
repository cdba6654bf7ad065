-- name: nccl-sum
-- description: NCCL calls per op and power-of-two size bucket: calls, bytes, total/avg time in the call, algbw and busbw as nccl-tests computes them but over the host's time in the call (GB/s)
WITH c AS (
  SELECT op, nranks, calls, dur_total AS dur,
         -- Calls of unknown size (GroupStart) have none, as in nccl.
         CASE WHEN call_bytes IS NOT NULL THEN bytes END AS bytes,
         -- nccl-tests' size: AllGather, ReduceScatter and AllToAll count
         -- per rank, their buffer is nranks times the call's bytes.
         CASE WHEN call_bytes IS NULL THEN NULL
              WHEN op IN ('AllGather', 'ReduceScatter', 'AllToAll')
              THEN bytes * nranks ELSE bytes END AS size,
         CASE WHEN call_bytes > 0 THEN CAST(log2(call_bytes) AS INTEGER) END
             AS b
  FROM sum_nccl
), g AS (
  -- Integer sums per op, size bucket and communicator size first, then
  -- the bus factor: both forms of the report do the same arithmetic.
  SELECT op, b, sum(calls) AS calls, sum(bytes) AS bytes, sum(dur) AS dur,
         sum(size) AS size,
         CASE WHEN op = 'AllReduce' THEN 2.0 * (nranks - 1) / nranks
              WHEN op IN ('AllGather', 'ReduceScatter', 'AllToAll')
              THEN 1.0 * (nranks - 1) / nranks
              ELSE 1.0 END AS bus
  FROM c GROUP BY op, b, nranks
)
SELECT op,
       CASE WHEN b IS NULL THEN NULL
            WHEN b < 10 THEN (1 << b) || '-' || (2 << b) || ' B'
            WHEN b < 20 THEN (1 << (b - 10)) || '-' || (2 << (b - 10)) || ' KiB'
            WHEN b < 30 THEN (1 << (b - 20)) || '-' || (2 << (b - 20)) || ' MiB'
            WHEN b < 40 THEN (1 << (b - 30)) || '-' || (2 << (b - 30)) || ' GiB'
            ELSE (1 << (b - 40)) || '-' || (2 << (b - 40)) || ' TiB' END
           AS size,
       sum(calls) AS calls, sum(bytes) AS bytes, sum(dur) AS total_ns,
       sum(dur) / sum(calls) AS avg_ns,
       CASE WHEN sum(dur) > 0 AND sum(size) > 0
            THEN round(1.0 * sum(size) / sum(dur), 3) END AS host_algbw_gb_s,
       CASE WHEN sum(dur) > 0 AND sum(size) > 0
            THEN round(sum(size * bus) / sum(dur), 3) END AS host_busbw_gb_s
FROM g
GROUP BY op, b
ORDER BY op, b
-- raw:
WITH c AS (
  SELECT op, nranks, 1 AS calls, bytes, dur,
         CASE WHEN op IN ('AllGather', 'ReduceScatter', 'AllToAll')
              THEN bytes * nranks ELSE bytes END AS size,
         CASE WHEN bytes > 0 THEN CAST(log2(bytes) AS INTEGER) END AS b
  FROM nccl
), g AS (
  -- Integer sums per op, size bucket and communicator size first, then
  -- the bus factor: both forms of the report do the same arithmetic.
  SELECT op, b, sum(calls) AS calls, sum(bytes) AS bytes, sum(dur) AS dur,
         sum(size) AS size,
         CASE WHEN op = 'AllReduce' THEN 2.0 * (nranks - 1) / nranks
              WHEN op IN ('AllGather', 'ReduceScatter', 'AllToAll')
              THEN 1.0 * (nranks - 1) / nranks
              ELSE 1.0 END AS bus
  FROM c GROUP BY op, b, nranks
)
SELECT op,
       CASE WHEN b IS NULL THEN NULL
            WHEN b < 10 THEN (1 << b) || '-' || (2 << b) || ' B'
            WHEN b < 20 THEN (1 << (b - 10)) || '-' || (2 << (b - 10)) || ' KiB'
            WHEN b < 30 THEN (1 << (b - 20)) || '-' || (2 << (b - 20)) || ' MiB'
            WHEN b < 40 THEN (1 << (b - 30)) || '-' || (2 << (b - 30)) || ' GiB'
            ELSE (1 << (b - 40)) || '-' || (2 << (b - 40)) || ' TiB' END
           AS size,
       sum(calls) AS calls, sum(bytes) AS bytes, sum(dur) AS total_ns,
       sum(dur) / sum(calls) AS avg_ns,
       CASE WHEN sum(dur) > 0 AND sum(size) > 0
            THEN round(1.0 * sum(size) / sum(dur), 3) END AS host_algbw_gb_s,
       CASE WHEN sum(dur) > 0 AND sum(size) > 0
            THEN round(sum(size * bus) / sum(dur), 3) END AS host_busbw_gb_s
FROM g
GROUP BY op, b
ORDER BY op, b
