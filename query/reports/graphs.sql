-- name: graphs
-- description: CUDA graphs per process (kind process: captures, instantiations, launches, destroys, distinct graphs and execs, failures), then its re-capture storms (kind storm: a minute with storm or more instantiations of graphs captured on one stream)
-- param: storm:count=10 instantiations in one minute, of graphs captured on one stream, that make a storm
WITH g AS NOT MATERIALIZED (
  SELECT host, pid, tid, comm, ts, op, graph, graph_exec, stream, ret
  FROM cuda_graph
), c AS (
  -- An instantiation's stream is that of the capture that made its graph:
  -- the latest capture_end returning that handle (handles are reused).
  SELECT *, sum(op = 'capture_end') OVER (PARTITION BY host, pid, graph
                                          ORDER BY ts
                                          ROWS UNBOUNDED PRECEDING) AS cap
  FROM g WHERE op IN ('capture_end', 'instantiate') AND graph IS NOT NULL
), i AS (
  SELECT * FROM (
    SELECT host, pid, ts, op, graph, graph_exec,
           max(CASE op WHEN 'capture_end' THEN stream END)
               OVER (PARTITION BY host, pid, graph, cap) AS stream
    FROM c)
  WHERE op = 'instantiate'
), s AS (
  SELECT host, pid, ts / 60000000000 * 60000000000 AS minute, stream,
         count(*) AS instantiations, count(DISTINCT nullif(graph, 0)) AS graphs,
         count(DISTINCT nullif(graph_exec, 0)) AS execs,
         min(ts) AS first_ts, max(ts) AS last_ts
  FROM i
  GROUP BY host, pid, minute, stream
  HAVING count(*) >= :storm
), sl AS (
  SELECT host, pid, ts / 60000000000 * 60000000000 AS minute, stream,
         sum(op = 'capture_begin') AS captures, sum(op = 'launch') AS launches
  FROM g WHERE op IN ('capture_begin', 'launch')
  GROUP BY host, pid, minute, stream
), p AS (
  SELECT host, pid,
         coalesce(max(CASE WHEN tid = pid THEN comm END), min(comm)) AS comm,
         sum(op = 'capture_begin') AS captures,
         sum(op = 'instantiate') AS instantiations,
         sum(op = 'launch') AS launches, sum(op = 'destroy') AS destroys,
         count(DISTINCT nullif(graph, 0)) AS graphs,
         count(DISTINCT nullif(graph_exec, 0)) AS execs,
         sum(ret IS NOT NULL AND ret != 0) AS failed,
         min(ts) AS first_ts, max(ts) AS last_ts
  FROM g GROUP BY host, pid
)
SELECT kind, pid, comm, minute,
       CASE WHEN stream IS NOT NULL THEN printf('0x%x', stream) END AS stream,
       captures, instantiations, launches,
       destroys, graphs, execs, failed, first_ts, last_ts, host
FROM (
  SELECT 'process' AS kind, host, pid, comm, NULL AS minute, NULL AS stream,
         captures, instantiations, launches, destroys, graphs, execs, failed,
         first_ts, last_ts, 0 AS o
  FROM p
  UNION ALL
  SELECT 'storm', s.host, s.pid, p.comm, s.minute, s.stream,
         coalesce(sl.captures, 0), s.instantiations,
         coalesce(sl.launches, 0), NULL, s.graphs, s.execs, NULL,
         s.first_ts, s.last_ts, 1
  FROM s JOIN p ON p.host = s.host AND p.pid = s.pid
  LEFT JOIN sl ON sl.host = s.host AND sl.pid = s.pid
              AND sl.minute = s.minute AND sl.stream = s.stream
)
ORDER BY host, pid, o, minute, stream
