-- name: launch-gaps
-- description: pauses of min_ms or more in which a process launched no kernel or graph (after its last one too), and what the thread that launched before did in them: off-CPU time by state, top off-CPU stack, file calls and bytes
-- param: min_ms:duration=100ms shortest pause listed (digits alone: ms)
-- param: limit:count=100 most pauses shown, longest first
-- param: lookup_every:count=100 with min_ms of 20 ms or more, read only the launches at candidate pauses' ends while there is one candidate per this many launches or fewer, else every launch (0: always)
WITH c AS MATERIALIZED (
  -- Pauses of min_ms or more lie between two consecutive launches at least
  -- min_ms apart, so in two set slots of sum_launch_slots with every slot
  -- between them empty: the candidates, found without reading a launch.
  -- Below 20 ms nearly every pair of slots would be one: the raw form.
  SELECT s.host, s.pid, j.value ->> 0 AS a_slot, j.value ->> 1 AS b_slot
  FROM (SELECT host, pid, slot_gaps(minute, slots, :min_ms) AS r
        FROM sum_launch_slots WHERE :min_ms >= 20000000
        GROUP BY host, pid) s, json_each(s.r) j
), k AS (
  -- A candidate's four lookups (about 0.1 ms: into blocks kept decoded)
  -- cost what the window spends on ~10 launches (15 us each over a busy
  -- host); with more than one candidate per 100 launches the window over
  -- every launch may cost less.  Both forms print the same rows.
  SELECT :min_ms >= 20000000 AND
         (SELECT count(*) FROM c) * :lookup_every <=
         (SELECT coalesce(sum(launches), 0) FROM sum_launch_slots)
         AS slots
), ab AS (
  -- The last launch of slot a and the first of slot b: reads of one
  -- 10 ms slot of one process each.
  SELECT c.host, c.pid,
         (SELECT json_array(tid, comm, ts, end_ts) FROM (
            SELECT tid, comm, ts, ts + coalesce(dur, 0) AS end_ts
            FROM cuda_kernel k
            WHERE k.host = c.host AND k.pid = c.pid AND k.ts >= c.a_slot
              AND k.ts < c.a_slot + 10000000
            UNION ALL
            SELECT tid, comm, ts, ts + coalesce(dur, 0)
            FROM cuda_graph g
            WHERE g.host = c.host AND g.pid = c.pid AND g.op = 'launch'
              AND g.ts >= c.a_slot AND g.ts < c.a_slot + 10000000)
          ORDER BY ts DESC LIMIT 1) AS a,
         (SELECT json_array(ts, api) FROM (
            SELECT ts, api FROM cuda_kernel k
            WHERE k.host = c.host AND k.pid = c.pid AND k.ts >= c.b_slot
              AND k.ts < c.b_slot + 10000000
            UNION ALL
            SELECT ts, api FROM cuda_graph g
            WHERE g.host = c.host AND g.pid = c.pid AND g.op = 'launch'
              AND g.ts >= c.b_slot AND g.ts < c.b_slot + 10000000)
          ORDER BY ts LIMIT 1) AS b
  FROM c WHERE (SELECT slots FROM k)
), l AS (
  SELECT host, pid, tid, comm, ts, ts + coalesce(dur, 0) AS end_ts, api
  -- As a bound on ts, so that the scan itself stops at once when unused.
  FROM cuda_kernel
  WHERE ts <= CASE WHEN (SELECT slots FROM k) THEN -1 ELSE 1 << 62 END
  UNION ALL
  SELECT host, pid, tid, comm, ts, ts + coalesce(dur, 0), api
  FROM cuda_graph
  WHERE op = 'launch'
    AND ts <= CASE WHEN (SELECT slots FROM k) THEN -1 ELSE 1 << 62 END
), n AS MATERIALIZED (
  SELECT * FROM (
    SELECT host, pid, a ->> 0 AS tid, a ->> 1 AS comm, a ->> 2 AS launch_ts,
           a ->> 3 AS start_ts, b ->> 0 AS next_ts, b ->> 1 AS next_api
    FROM ab)
  WHERE next_ts IS NULL OR next_ts - start_ts >= :min_ms
  UNION ALL
  SELECT * FROM (
    SELECT host, pid, tid, comm, ts AS launch_ts, end_ts AS start_ts,
           lead(ts) OVER w AS next_ts, lead(api) OVER w AS next_api
    FROM l
    WINDOW w AS (PARTITION BY host, pid ORDER BY ts))
  WHERE next_ts IS NULL OR next_ts - start_ts >= :min_ms
), px AS MATERIALIZED (
  -- The exits of the processes whose last launch ends a pause: the
  -- process table read once (`+pid`: not once per process, as an IN
  -- handed to the table would; its rows come in small blocks, one per
  -- flush, thousands a day).
  SELECT host, pid, max(exit_ts) AS exit_ts FROM process
  WHERE +pid IN (SELECT pid FROM n WHERE next_ts IS NULL)
  GROUP BY host, pid
), p AS (
  -- After a process's last launch the pause lasts to its exit, or else to
  -- the last thing seen of it (off-CPU intervals' ends, file calls), and
  -- never past the window (a process row's exit_ts may lie beyond it).
  SELECT n.*, window_until() AS until_ts,
         (SELECT CASE WHEN x.exit_ts >= n.start_ts THEN x.exit_ts END
          FROM px x WHERE x.host = n.host AND x.pid = n.pid) AS exit_ts,
         (SELECT max(t) FROM (
            SELECT max(o.ts + o.dur) AS t FROM offcpu o
            WHERE o.host = n.host AND o.pid = n.pid AND o.ts >= n.launch_ts
            UNION ALL
            SELECT max(f.ts + f.dur) FROM file_io f
            WHERE f.host = n.host AND f.pid = n.pid
              AND f.ts >= n.launch_ts)) AS seen_ts
  FROM n WHERE next_ts IS NULL
), e AS (
  SELECT *,
         CASE WHEN exit_ts <= coalesce(until_ts, exit_ts) THEN exit_ts
              WHEN exit_ts IS NOT NULL THEN until_ts
              ELSE min(seen_ts, coalesce(until_ts, seen_ts)) END AS end_ts,
         CASE WHEN exit_ts <= coalesce(until_ts, exit_ts) THEN '(exit)'
              WHEN exit_ts IS NOT NULL THEN '(window end)'
              ELSE '(last seen)' END AS ended_by
  FROM p
), g AS MATERIALIZED (
  SELECT host, pid, tid, comm, launch_ts, start_ts, next_ts AS end_ts,
         next_api AS ended_by
  FROM n WHERE next_ts IS NOT NULL
  UNION ALL
  SELECT host, pid, tid, comm, launch_ts, start_ts, end_ts, ended_by
  FROM e WHERE end_ts - start_ts >= :min_ms
), o AS (
  -- The launching thread was on a CPU when it launched, so its off-CPU
  -- intervals in the pause begin at or after that launch.
  SELECT g.host, g.pid, g.start_ts, o.state, o.stack,
         min(o.ts + o.dur, g.end_ts) - max(o.ts, g.start_ts) AS ov
  FROM g CROSS JOIN offcpu o
    ON o.host = g.host AND o.tid = g.tid
   AND o.ts >= g.launch_ts AND o.ts < g.end_ts
  WHERE o.ts + o.dur > g.start_ts
), st AS (
  SELECT host, pid, start_ts, sum(t) AS off_ns,
         group_concat(state || ' ' || round(t / 1e6, 1) || ' ms', ', ')
             AS states
  FROM (SELECT host, pid, start_ts, state, sum(ov) AS t FROM o
        GROUP BY host, pid, start_ts, state
        ORDER BY host, pid, start_ts, t DESC, state)
  GROUP BY host, pid, start_ts
), sk AS (
  SELECT host, pid, start_ts, stack, sum(ov) AS t,
         row_number() OVER (PARTITION BY host, pid, start_ts
                            ORDER BY sum(ov) DESC, stack) AS r
  FROM o GROUP BY host, pid, start_ts, stack
), f AS (
  SELECT g.host, g.pid, g.start_ts, count(*) AS calls,
         sum(f.syscall LIKE '%read%') AS reads,
         sum(CASE WHEN f.syscall LIKE '%read%' THEN max(f.bytes, 0) END)
             AS read_bytes,
         sum(f.syscall LIKE '%write%') AS writes,
         sum(CASE WHEN f.syscall LIKE '%write%' THEN max(f.bytes, 0) END)
             AS write_bytes
  FROM g CROSS JOIN file_io f
    ON f.host = g.host AND f.tid = g.tid
   AND f.ts >= g.start_ts AND f.ts < g.end_ts
  GROUP BY g.host, g.pid, g.start_ts
)
SELECT g.pid, g.tid, g.comm, g.start_ts AS gap_start_ts, g.end_ts AS gap_end_ts,
       round((g.end_ts - g.start_ts) / 1e6, 1) AS gap_ms, g.ended_by,
       round(coalesce(st.off_ns, 0) / 1e6, 1) AS offcpu_ms, st.states,
       round(sk.t / 1e6, 1) AS top_stack_ms,
       coalesce(f.calls, 0) AS file_calls, coalesce(f.reads, 0) AS reads,
       coalesce(f.read_bytes, 0) AS read_bytes,
       coalesce(f.writes, 0) AS writes,
       coalesce(f.write_bytes, 0) AS write_bytes, g.host,
       sk.stack AS top_stack
FROM g
LEFT JOIN st ON st.host = g.host AND st.pid = g.pid
            AND st.start_ts = g.start_ts
LEFT JOIN sk ON sk.host = g.host AND sk.pid = g.pid
            AND sk.start_ts = g.start_ts AND sk.r = 1
LEFT JOIN f ON f.host = g.host AND f.pid = g.pid AND f.start_ts = g.start_ts
ORDER BY g.end_ts - g.start_ts DESC, g.pid, g.start_ts
LIMIT :limit
-- raw:
WITH l AS (
  SELECT host, pid, tid, comm, ts, ts + coalesce(dur, 0) AS end_ts, api
  FROM cuda_kernel
  UNION ALL
  SELECT host, pid, tid, comm, ts, ts + coalesce(dur, 0), api
  FROM cuda_graph WHERE op = 'launch'
), n AS MATERIALIZED (
  -- Only the pauses long enough, and each process's last launch.
  SELECT * FROM (
    SELECT host, pid, tid, comm, ts AS launch_ts, end_ts AS start_ts,
           lead(ts) OVER w AS next_ts, lead(api) OVER w AS next_api
    FROM l
    WINDOW w AS (PARTITION BY host, pid ORDER BY ts))
  WHERE next_ts IS NULL OR next_ts - start_ts >= :min_ms
), px AS MATERIALIZED (
  -- The exits of the processes whose last launch ends a pause: the
  -- process table read once (`+pid`: not once per process, as an IN
  -- handed to the table would; its rows come in small blocks, one per
  -- flush, thousands a day).
  SELECT host, pid, max(exit_ts) AS exit_ts FROM process
  WHERE +pid IN (SELECT pid FROM n WHERE next_ts IS NULL)
  GROUP BY host, pid
), p AS (
  -- After a process's last launch the pause lasts to its exit, or else to
  -- the last thing seen of it (off-CPU intervals' ends, file calls), and
  -- never past the window (a process row's exit_ts may lie beyond it).
  SELECT n.*, window_until() AS until_ts,
         (SELECT CASE WHEN x.exit_ts >= n.start_ts THEN x.exit_ts END
          FROM px x WHERE x.host = n.host AND x.pid = n.pid) AS exit_ts,
         (SELECT max(t) FROM (
            SELECT max(o.ts + o.dur) AS t FROM offcpu o
            WHERE o.host = n.host AND o.pid = n.pid AND o.ts >= n.launch_ts
            UNION ALL
            SELECT max(f.ts + f.dur) FROM file_io f
            WHERE f.host = n.host AND f.pid = n.pid
              AND f.ts >= n.launch_ts)) AS seen_ts
  FROM n WHERE next_ts IS NULL
), e AS (
  SELECT *,
         CASE WHEN exit_ts <= coalesce(until_ts, exit_ts) THEN exit_ts
              WHEN exit_ts IS NOT NULL THEN until_ts
              ELSE min(seen_ts, coalesce(until_ts, seen_ts)) END AS end_ts,
         CASE WHEN exit_ts <= coalesce(until_ts, exit_ts) THEN '(exit)'
              WHEN exit_ts IS NOT NULL THEN '(window end)'
              ELSE '(last seen)' END AS ended_by
  FROM p
), g AS MATERIALIZED (
  SELECT host, pid, tid, comm, launch_ts, start_ts, next_ts AS end_ts,
         next_api AS ended_by
  FROM n WHERE next_ts IS NOT NULL
  UNION ALL
  SELECT host, pid, tid, comm, launch_ts, start_ts, end_ts, ended_by
  FROM e WHERE end_ts - start_ts >= :min_ms
), o AS (
  -- The launching thread was on a CPU when it launched, so its off-CPU
  -- intervals in the pause begin at or after that launch.
  SELECT g.host, g.pid, g.start_ts, o.state, o.stack,
         min(o.ts + o.dur, g.end_ts) - max(o.ts, g.start_ts) AS ov
  FROM g CROSS JOIN offcpu o
    ON o.host = g.host AND o.tid = g.tid
   AND o.ts >= g.launch_ts AND o.ts < g.end_ts
  WHERE o.ts + o.dur > g.start_ts
), st AS (
  SELECT host, pid, start_ts, sum(t) AS off_ns,
         group_concat(state || ' ' || round(t / 1e6, 1) || ' ms', ', ')
             AS states
  FROM (SELECT host, pid, start_ts, state, sum(ov) AS t FROM o
        GROUP BY host, pid, start_ts, state
        ORDER BY host, pid, start_ts, t DESC, state)
  GROUP BY host, pid, start_ts
), sk AS (
  SELECT host, pid, start_ts, stack, sum(ov) AS t,
         row_number() OVER (PARTITION BY host, pid, start_ts
                            ORDER BY sum(ov) DESC, stack) AS r
  FROM o GROUP BY host, pid, start_ts, stack
), f AS (
  SELECT g.host, g.pid, g.start_ts, count(*) AS calls,
         sum(f.syscall LIKE '%read%') AS reads,
         sum(CASE WHEN f.syscall LIKE '%read%' THEN max(f.bytes, 0) END)
             AS read_bytes,
         sum(f.syscall LIKE '%write%') AS writes,
         sum(CASE WHEN f.syscall LIKE '%write%' THEN max(f.bytes, 0) END)
             AS write_bytes
  FROM g CROSS JOIN file_io f
    ON f.host = g.host AND f.tid = g.tid
   AND f.ts >= g.start_ts AND f.ts < g.end_ts
  GROUP BY g.host, g.pid, g.start_ts
)
SELECT g.pid, g.tid, g.comm, g.start_ts AS gap_start_ts, g.end_ts AS gap_end_ts,
       round((g.end_ts - g.start_ts) / 1e6, 1) AS gap_ms, g.ended_by,
       round(coalesce(st.off_ns, 0) / 1e6, 1) AS offcpu_ms, st.states,
       round(sk.t / 1e6, 1) AS top_stack_ms,
       coalesce(f.calls, 0) AS file_calls, coalesce(f.reads, 0) AS reads,
       coalesce(f.read_bytes, 0) AS read_bytes,
       coalesce(f.writes, 0) AS writes,
       coalesce(f.write_bytes, 0) AS write_bytes, g.host,
       sk.stack AS top_stack
FROM g
LEFT JOIN st ON st.host = g.host AND st.pid = g.pid
            AND st.start_ts = g.start_ts
LEFT JOIN sk ON sk.host = g.host AND sk.pid = g.pid
            AND sk.start_ts = g.start_ts AND sk.r = 1
LEFT JOIN f ON f.host = g.host AND f.pid = g.pid AND f.start_ts = g.start_ts
ORDER BY g.end_ts - g.start_ts DESC, g.pid, g.start_ts
LIMIT :limit
