-- name: memcpy-sync
-- description: copies that blocked the calling thread (nsys rules cuda_memcpy_sync, cuda_memcpy_async): blocking API calls and async calls on pageable host memory; per thread, then the longest calls (see memcpy-pageable for pageable)
-- param: limit:count=20 most calls listed after the per-thread rows
--
-- "sync API": a copy made through a blocking entry point (async = 0,
-- cudaMemcpy, cuMemcpyDtoH_v2, ...).  "async on pageable": an async entry
-- point whose host side is pageable, which CUDA turns into a blocking
-- copy (staged through a pinned buffer).  blocked_ns is the time in the
-- call, as the host saw it.  host_mem, by memcpy-pageable's rule: pinned
-- if the host pointer lies in a live pinned allocation gpurec recorded,
-- pageable if in no recorded allocation (also memory pinned before the
-- recording began, or before --since), managed, or NULL where the copy
-- has no host side or its pointer is unknown.
-- Classified and grouped in C, in one pass over the copies
-- (query/memcpy_host.c); --raw runs the SQL below, which it equals.
SELECT * FROM memcpy_blocking(:limit)
ORDER BY section = 'call', blocked_ns DESC, pid, tid, blocking, ts
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
  FROM cuda_memcpy
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
), b AS (
  SELECT *,
         CASE WHEN 'pageable' IN (sm, dm) THEN 'pageable'
              WHEN 'pinned' IN (sm, dm) THEN 'pinned'
              WHEN 'managed' IN (sm, dm) THEN 'managed' END AS host_mem,
         CASE WHEN async = 0 THEN 'sync API'
              WHEN 'pageable' IN (sm, dm) THEN 'async on pageable' END AS why
  FROM k
), w AS (
  SELECT *, row_number() OVER (PARTITION BY pid, tid, why
                               ORDER BY dur DESC, ts) AS r
  FROM b WHERE why IS NOT NULL
)
SELECT * FROM (
  SELECT 'thread' AS section, pid, tid, min(comm) AS comm, why AS blocking,
         NULL AS api, NULL AS kind, NULL AS host_mem, count(*) AS copies,
         sum(bytes) AS bytes, sum(dur) AS blocked_ns, max(dur) AS max_ns,
         sum(ret IS NOT NULL AND ret != 0) AS errors,
         max(CASE WHEN r = 1 THEN ts END) AS ts
  FROM w GROUP BY pid, tid, why
  UNION ALL
  SELECT * FROM (
    SELECT 'call', pid, tid, comm, why, api, kind, host_mem, 1, bytes, dur,
           dur, ret IS NOT NULL AND ret != 0, ts
    FROM w ORDER BY dur DESC, ts LIMIT :limit))
ORDER BY section = 'call', blocked_ns DESC, pid, tid, blocking, ts
