-- name: xid
-- description: each Xid (the GPU's error reports), then what every process on that GPU was doing in the seconds before: its CUDA calls and errors, its last call, and its off-CPU time around the Xid with state and stack (of the thread that made the last call, else its longest D wait, else its longest)
-- param: before_s:duration=10s how long before the Xid is looked at (digits alone: seconds)
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
            AND c.ts BETWEEN q.ts - :before_s
                         AND q.ts + 1000000000
          ORDER BY c.ts DESC LIMIT 1) AS ltid
  FROM q
), om AS MATERIALIZED (
  -- The minutes of each process whose off-CPU intervals can reach the
  -- seconds before the Xid: sum_offcpu's rows start by ts_last and last
  -- at most dur_max.  Only those minutes are read raw, not the hour.
  -- Summarized over the hour itself: the cut minutes at its ends come
  -- from their raw intervals, as any window's.
  SELECT DISTINCT p.host, p.ts, p.pid, s.minute
  FROM p CROSS JOIN sum_offcpu s -- p outermost: s read over its hour
  WHERE s.host = p.host AND s.pid = p.pid
    AND s.ts BETWEEN p.ts - 3600000000000 AND p.ts + 1000000000
    AND s.ts_last + s.dur_max >= p.ts - :before_s
), o AS (
  -- Each process's off-CPU intervals around the Xid, ranked: the thread
  -- that made the last CUDA call first (an idle pool thread's long sleep
  -- says nothing), else the longest wait in the driver or on I/O (D: a
  -- thread hung in cuInit), else the longest.
  SELECT p.host, p.ts, p.pci, p.pid, f.tid, f.state, f.dur, f.stack,
         row_number() OVER (
           PARTITION BY p.host, p.ts, p.pci, p.pid
           ORDER BY f.tid IS p.ltid DESC,
                    CASE WHEN f.tid IS p.ltid THEN 0
                         ELSE f.state = 'D' END DESC,
                    f.dur DESC) AS r
  FROM om CROSS JOIN offcpu f -- om outermost: each minute is a ts range
  JOIN p ON p.host = om.host AND p.ts = om.ts AND p.pid = om.pid
  WHERE f.host = om.host AND f.pid = om.pid
    AND f.ts >= om.minute AND f.ts < om.minute + 60000000000
    AND f.ts BETWEEN p.ts - 3600000000000 AND p.ts + 1000000000
    AND f.ts + f.dur >= p.ts - :before_s
), dw AS (
  -- A D wait still open is written in 5 s pieces: a thread's D time in
  -- the window, whole.
  SELECT host, ts, pci, tid, sum(dur) AS dur
  FROM o WHERE state = 'D' GROUP BY host, ts, pci, tid
)
SELECT x.ts, x.gpu, x.pci, x.xid, x.source,
       p.pid,
       coalesce((SELECT comm FROM process pr
                 WHERE pr.host = x.host AND pr.pid = p.pid
                 ORDER BY pr.ts DESC LIMIT 1),
                CASE WHEN p.pid = x.xpid THEN x.xcomm END) AS comm,
       (SELECT count(*) FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid
          AND c.ts BETWEEN x.ts - :before_s AND x.ts) AS calls,
       (SELECT count(*) FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid AND c.ret != 0
          AND c.ts BETWEEN x.ts - :before_s
                       AND x.ts + 1000000000) AS errors,
       (SELECT c.api || ' ret ' || coalesce(c.ret, '?') || ' at ' ||
               round((c.ts - x.ts) / 1e9, 3) || ' s'
        FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid
          AND c.ts BETWEEN x.ts - :before_s
                       AND x.ts + 1000000000
        ORDER BY c.ts DESC LIMIT 1) AS last_call,
       x.meaning, x.action,
       o.state || ' ' ||
       round(CASE WHEN o.state = 'D' THEN dw.dur ELSE o.dur END / 1e9, 3) ||
       ' s tid ' || o.tid || coalesce(': ' || o.stack, '') AS offcpu
FROM x LEFT JOIN p ON p.host = x.host AND p.ts = x.ts AND p.pci = x.pci
LEFT JOIN o ON o.host = p.host AND o.ts = p.ts AND o.pci = p.pci
           AND o.pid = p.pid AND o.r = 1
LEFT JOIN dw ON dw.host = o.host AND dw.ts = o.ts AND dw.pci = o.pci
            AND dw.tid = o.tid
ORDER BY x.ts, x.pci, p.pid
-- raw:
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
            AND c.ts BETWEEN q.ts - :before_s
                         AND q.ts + 1000000000
          ORDER BY c.ts DESC LIMIT 1) AS ltid
  FROM q
), o AS (
  -- Each process's off-CPU intervals around the Xid, ranked: the thread
  -- that made the last CUDA call first (an idle pool thread's long sleep
  -- says nothing), else the longest wait in the driver or on I/O (D: a
  -- thread hung in cuInit), else the longest.
  SELECT p.host, p.ts, p.pci, p.pid, f.tid, f.state, f.dur, f.stack,
         row_number() OVER (
           PARTITION BY p.host, p.ts, p.pci, p.pid
           ORDER BY f.tid IS p.ltid DESC,
                    CASE WHEN f.tid IS p.ltid THEN 0
                         ELSE f.state = 'D' END DESC,
                    f.dur DESC) AS r
  FROM p JOIN offcpu f
    ON f.host = p.host AND f.pid = p.pid
   AND f.ts BETWEEN p.ts - 3600000000000 AND p.ts + 1000000000
   AND f.ts + f.dur >= p.ts - :before_s
), dw AS (
  -- A D wait still open is written in 5 s pieces: a thread's D time in
  -- the window, whole.
  SELECT host, ts, pci, tid, sum(dur) AS dur
  FROM o WHERE state = 'D' GROUP BY host, ts, pci, tid
)
SELECT x.ts, x.gpu, x.pci, x.xid, x.source,
       p.pid,
       coalesce((SELECT comm FROM process pr
                 WHERE pr.host = x.host AND pr.pid = p.pid
                 ORDER BY pr.ts DESC LIMIT 1),
                CASE WHEN p.pid = x.xpid THEN x.xcomm END) AS comm,
       (SELECT count(*) FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid
          AND c.ts BETWEEN x.ts - :before_s AND x.ts) AS calls,
       (SELECT count(*) FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid AND c.ret != 0
          AND c.ts BETWEEN x.ts - :before_s
                       AND x.ts + 1000000000) AS errors,
       (SELECT c.api || ' ret ' || coalesce(c.ret, '?') || ' at ' ||
               round((c.ts - x.ts) / 1e9, 3) || ' s'
        FROM cuda_api c
        WHERE c.host = x.host AND c.pid = p.pid
          AND c.ts BETWEEN x.ts - :before_s
                       AND x.ts + 1000000000
        ORDER BY c.ts DESC LIMIT 1) AS last_call,
       x.meaning, x.action,
       o.state || ' ' ||
       round(CASE WHEN o.state = 'D' THEN dw.dur ELSE o.dur END / 1e9, 3) ||
       ' s tid ' || o.tid || coalesce(': ' || o.stack, '') AS offcpu
FROM x LEFT JOIN p ON p.host = x.host AND p.ts = x.ts AND p.pci = x.pci
LEFT JOIN o ON o.host = p.host AND o.ts = p.ts AND o.pci = p.pci
           AND o.pid = p.pid AND o.r = 1
LEFT JOIN dw ON dw.host = o.host AND dw.ts = o.ts AND dw.pci = o.pci
            AND dw.tid = o.tid
ORDER BY x.ts, x.pci, p.pid
