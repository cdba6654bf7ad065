-- name: memcpy-pageable
-- description: copies whose host side is pageable (nsys rule cuda_memcpy_async): per process, API and direction, then the longest calls; pageable = in no allocation gpurec saw live (pinned before the recording looks pageable)
-- param: sync:enum(0|1)=0 1 to list blocking API calls too, not only async ones
-- param: limit:count=20 most calls listed after the sums
--
-- A copy's host side is its source for H2D, its destination for D2H, both
-- for H2H, default and unknown directions.  A host pointer is "pinned" if
-- it lies in a successful cudaMallocHost, cudaHostAlloc, cudaHostRegister,
-- cuMemAllocHost_v2, cuMemHostAlloc or cuMemHostRegister_v2 of the process
-- made before the copy and not yet freed (cuda_mem); "pageable" if it lies
-- in no recorded allocation at all.  Under a default direction a side in a
-- device or managed allocation is not host memory.  Allocations made
-- before the recording began (or before --since) are not seen: their
-- copies show as pageable.
-- Classified and grouped in C, in one pass over the copies
-- (query/memcpy_host.c); --raw runs the SQL below, which it equals.
SELECT section, pid, tid, comm, api, kind, async, copies, bytes, total_ns,
       max_ns, errors,
       CASE WHEN src IS NOT NULL THEN printf('0x%x', src) END AS src,
       CASE WHEN dst IS NOT NULL THEN printf('0x%x', dst) END AS dst, ts
FROM memcpy_pageable(:sync, :limit)
ORDER BY section = 'call', total_ns DESC, pid, api, kind, ts
-- raw:
WITH m AS (
  SELECT pid, ts, op, api, ptr, bytes,
         lead(ts) OVER (PARTITION BY pid, ptr ORDER BY ts) AS until
  FROM cuda_mem
  WHERE (ret IS NULL OR ret = 0) AND ptr IS NOT NULL AND ptr != 0
), a AS MATERIALIZED (
  -- Allocations, live from their call until the next call on their
  -- pointer (its free, or a reuse), numbered per base address in time.
  SELECT pid, ptr AS lo, ptr + bytes AS hi, ts, until,
         row_number() OVER (PARTITION BY pid, ptr ORDER BY ts) AS n,
         CASE WHEN api IN ('cudaMallocHost', 'cudaHostAlloc',
                           'cudaHostRegister', 'cuMemAllocHost_v2',
                           'cuMemHostAlloc', 'cuMemHostRegister_v2')
              THEN 'pinned'
              WHEN api LIKE '%Managed' THEN 'managed'
              ELSE 'device' END AS mem
  FROM m WHERE op = 'alloc' AND bytes > 0
), r(pid, lo, hi, b, last) AS (
  -- Every address range ever allocated, once per 2 MiB it covers, so
  -- that a pointer is looked up by (pid, its 2 MiB).
  SELECT DISTINCT pid, lo, hi, lo >> 21, (hi - 1) >> 21 FROM a
  UNION ALL
  SELECT pid, lo, hi, b + 1, last FROM r WHERE b < last
), c AS MATERIALIZED (
  -- Copies, and their host-side pointers by direction.
  SELECT row_number() OVER () AS id, *,
         CASE WHEN kind IS NULL OR kind IN ('H2D', 'H2H', 'default')
              THEN nullif(src, 0) END AS hs,
         CASE WHEN kind IS NULL OR kind IN ('D2H', 'H2H', 'default')
              THEN nullif(dst, 0) END AS hd
  FROM cuda_memcpy WHERE async = 1 OR :sync = 1
), s(id, side, pid, ts, p) AS (
  SELECT id, 's', pid, ts, hs FROM c WHERE hs IS NOT NULL
  UNION ALL
  SELECT id, 'd', pid, ts, hd FROM c WHERE hd IS NOT NULL
), e AS (
  -- Each pointer with the base of every range that ever held it, and
  -- the number of allocations at that base made before the copy: the
  -- last of them is the only one that can hold it then.
  SELECT * FROM (
    SELECT *, sum(alloc) OVER (PARTITION BY pid, lo ORDER BY ts, alloc
                               ROWS UNBOUNDED PRECEDING) AS n
    FROM (SELECT DISTINCT s.id, s.side, s.pid, s.ts, s.p, r.lo, 0 AS alloc
          FROM s CROSS JOIN r -- s outermost: r is searched by its index
          WHERE r.pid = s.pid AND r.b = s.p >> 21
                AND s.p >= r.lo AND s.p < r.hi
          UNION ALL
          SELECT NULL, NULL, pid, ts, NULL, lo, 1 FROM a))
  WHERE alloc = 0
), held AS MATERIALIZED (
  SELECT e.id, e.side, a.mem FROM e JOIN a
    ON a.pid = e.pid AND a.lo = e.lo AND a.n = e.n
  WHERE e.p < a.hi AND (a.until IS NULL OR a.until > e.ts)
), k AS (
  -- sm, dm: the host sides' memory, pageable where no live allocation
  -- holds them.
  SELECT c.*,
         CASE WHEN hs IS NOT NULL THEN coalesce(
           (SELECT mem FROM held h WHERE h.id = c.id AND h.side = 's'),
           'pageable') END AS sm,
         CASE WHEN hd IS NOT NULL THEN coalesce(
           (SELECT mem FROM held h WHERE h.id = c.id AND h.side = 'd'),
           'pageable') END AS dm
  FROM c
), p AS (
  SELECT * FROM k WHERE sm = 'pageable' OR dm = 'pageable'
)
SELECT * FROM (
  SELECT 'sum' AS section, pid, NULL AS tid, min(comm) AS comm, api, kind,
         async, count(*) AS copies, sum(bytes) AS bytes,
         sum(dur) AS total_ns, max(dur) AS max_ns,
         sum(ret IS NOT NULL AND ret != 0) AS errors,
         NULL AS src, NULL AS dst, NULL AS ts
  FROM p GROUP BY pid, api, kind
  UNION ALL
  SELECT * FROM (
    SELECT 'call', pid, tid, comm, api, kind, async, 1, bytes, dur, dur,
           ret IS NOT NULL AND ret != 0,
           CASE WHEN src IS NOT NULL THEN printf('0x%x', src) END,
           CASE WHEN dst IS NOT NULL THEN printf('0x%x', dst) END, ts
    FROM p ORDER BY dur DESC, ts LIMIT :limit))
ORDER BY section = 'call', total_ns DESC, pid, api, kind, ts
