-- name: xid
-- description: each Xid (the GPU's error reports), then what every process on that GPU was doing in the seconds before: its CUDA calls and errors, its last call, and its off-CPU time around the Xid with state and stack (of the thread that made the last call, else its longest D wait, else its longest)
-- param: before_s=10 seconds before the Xid looked at
WITH x AS (
  SELECT host, ts, gpu, pci, xid, pid AS xpid, comm AS xcomm, source,
         meaning, action, text
  FROM gpu_event WHERE kind = 'xid'
), q AS (
  -- The processes on its GPU: seen there by NVML in the minute before,
  -- and the one the driver named.
  SELECT DISTINCT x.host, x.ts, x.pci, gp.pid
  FROM x JOIN gpu_process gp
    ON gp.host = x.host AND gp.pci = x.pci
   AND gp.ts BETWEEN x.ts - 60000000000 AND x.ts + 2000000000
  UNION
  SELECT host, ts, pci, xpid FROM x WHERE xpid IS NOT NULL
), p AS (
  -- With the thread of its last CUDA call before the Xid.
  SELECT q.*,
         (SELECT c.tid FROM cuda_api c
          WHERE c.host = q.host AND c.pid = q.pid
            AND c.ts BETWEEN q.ts - :before_s * 1000000000
                         AND q.ts + 1000000000
          ORDER BY c.ts DESC LIMIT 1) AS ltid
  FROM q
)
SELECT x.ts, x.gpu, x.pci, x.xid, x.meaning, x.action, x.source,
       p.pid,
       coalesce((SELECT comm FROM process pr
                 WHERE pr.host = x.host AND pr.pid = p.pid
                 ORDER BY pr.ts DESC LIMIT 1),
                CASE WHEN p.pid = x.xpid THEN x.xcomm END) AS comm,
       (SELECT count(*) FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid
          AND c.ts BETWEEN x.ts - :before_s * 1000000000 AND x.ts) AS calls,
       (SELECT count(*) FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid AND c.ret != 0
          AND c.ts BETWEEN x.ts - :before_s * 1000000000
                       AND x.ts + 1000000000) AS errors,
       (SELECT c.api || ' ret ' || coalesce(c.ret, '?') || ' at ' ||
               round((c.ts - x.ts) / 1e9, 3) || ' s'
        FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid
          AND c.ts BETWEEN x.ts - :before_s * 1000000000
                       AND x.ts + 1000000000
        ORDER BY c.ts DESC LIMIT 1) AS last_call,
       -- The thread that made the last CUDA call first (an idle pool
       -- thread's long sleep says nothing), else the longest wait in the
       -- driver or on I/O (D: a thread hung in cuInit), else the longest.
       coalesce(
         (SELECT o.state || ' ' ||
                 -- A D wait still open is written in 5 s pieces: the
                 -- thread's D time in the window, whole.
                 round(CASE WHEN o.state = 'D' THEN
                   (SELECT sum(o2.dur) FROM offcpu o2
                    WHERE o2.host = o.host AND o2.tid = o.tid
                      AND o2.state = 'D'
                      AND o2.ts BETWEEN x.ts - 3600000000000
                                    AND x.ts + 1000000000
                      AND o2.ts + o2.dur >= x.ts - :before_s * 1000000000)
                   ELSE o.dur END / 1e9, 3) || ' s tid ' ||
                 o.tid || coalesce(': ' || o.stack, '')
          FROM offcpu o
          WHERE o.host = x.host AND o.pid = p.pid AND o.tid = p.ltid
            AND o.ts BETWEEN x.ts - 3600000000000 AND x.ts + 1000000000
            AND o.ts + o.dur >= x.ts - :before_s * 1000000000
          ORDER BY o.dur DESC LIMIT 1),
         (SELECT o.state || ' ' ||
                 -- A D wait still open is written in 5 s pieces: the
                 -- thread's D time in the window, whole.
                 round(CASE WHEN o.state = 'D' THEN
                   (SELECT sum(o2.dur) FROM offcpu o2
                    WHERE o2.host = o.host AND o2.tid = o.tid
                      AND o2.state = 'D'
                      AND o2.ts BETWEEN x.ts - 3600000000000
                                    AND x.ts + 1000000000
                      AND o2.ts + o2.dur >= x.ts - :before_s * 1000000000)
                   ELSE o.dur END / 1e9, 3) || ' s tid ' ||
                 o.tid || coalesce(': ' || o.stack, '')
          FROM offcpu o
          WHERE o.host = x.host AND o.pid = p.pid
            AND o.ts BETWEEN x.ts - 3600000000000 AND x.ts + 1000000000
            AND o.ts + o.dur >= x.ts - :before_s * 1000000000
          ORDER BY o.state = 'D' DESC, o.dur DESC LIMIT 1)) AS offcpu
FROM x LEFT JOIN p ON p.host = x.host AND p.ts = x.ts AND p.pci = x.pci
ORDER BY x.ts, x.pci, p.pid
