-- name: graph-kernels
-- description: kernels captured into CUDA graphs: per kernel its launches (direct, and run through graph launches), the graph launches that ran it and the graphs it is in; then graph launches whose kernels are unknown (captured before the recording, or not by stream capture)
WITH gk AS MATERIALIZED (
  SELECT host, pid, graph_exec, instantiate_ts, capture_ts, seq,
         coalesce(kernel, '(unnamed)') AS kernel
  FROM cuda_graph_kernel
), x AS MATERIALIZED (
  SELECT host, pid, graph_exec, instantiate_ts, launches FROM cuda_graph_exec
), cap AS (
  -- Each captured launch once: a graph instantiated twice lists it twice.
  SELECT kernel, count(*) AS captured,
         count(DISTINCT host || ' ' || pid || ' ' || capture_ts) AS graphs
  FROM (SELECT DISTINCT host, pid, capture_ts, seq, kernel FROM gk)
  GROUP BY kernel
), life AS (
  -- Per life of an executable graph: how often one launch runs the kernel.
  SELECT gk.kernel, x.launches, count(*) AS per_launch
  FROM gk JOIN x ON x.host = gk.host AND x.pid = gk.pid
               AND x.graph_exec = gk.graph_exec
               AND x.instantiate_ts = gk.instantiate_ts
  GROUP BY gk.host, gk.pid, gk.graph_exec, gk.instantiate_ts, gk.kernel
), rep AS (
  SELECT kernel, sum(launches * per_launch) AS via_graphs,
         sum(launches) AS graph_launches
  FROM life GROUP BY kernel
), dir AS (
  -- Every recorded launch, the captured ones included (they ran nothing).
  SELECT coalesce(kernel, '(unnamed)') AS kernel, sum(launches) AS launches
  FROM sum_kernel GROUP BY 1
), unknown AS (
  SELECT CASE WHEN instantiate_ts IS NULL
              THEN '(captured before recording)'
              ELSE '(capture not recorded)' END AS kernel,
         sum(launches) AS graph_launches, count(*) AS graphs
  FROM x
  WHERE NOT EXISTS (SELECT 1 FROM gk
                    WHERE gk.host = x.host AND gk.pid = x.pid
                      AND gk.graph_exec = x.graph_exec
                      AND gk.instantiate_ts = x.instantiate_ts)
  GROUP BY 1
)
SELECT launches, direct, via_graphs, graph_launches, graphs, kernel
FROM (
  SELECT d.launches - c.captured + coalesce(r.via_graphs, 0) AS launches,
         d.launches - c.captured AS direct,
         coalesce(r.via_graphs, 0) AS via_graphs,
         coalesce(r.graph_launches, 0) AS graph_launches, c.graphs, c.kernel,
         0 AS o
  FROM cap c JOIN dir d USING (kernel) LEFT JOIN rep r USING (kernel)
  UNION ALL
  SELECT NULL, NULL, NULL, graph_launches, graphs, kernel, 1 FROM unknown
)
ORDER BY o, launches DESC, kernel
-- raw:
WITH gk AS MATERIALIZED (
  SELECT host, pid, graph_exec, instantiate_ts, capture_ts, seq,
         coalesce(kernel, '(unnamed)') AS kernel
  FROM cuda_graph_kernel
), x AS MATERIALIZED (
  SELECT host, pid, graph_exec, instantiate_ts, launches FROM cuda_graph_exec
), cap AS (
  -- Each captured launch once: a graph instantiated twice lists it twice.
  SELECT kernel, count(*) AS captured,
         count(DISTINCT host || ' ' || pid || ' ' || capture_ts) AS graphs
  FROM (SELECT DISTINCT host, pid, capture_ts, seq, kernel FROM gk)
  GROUP BY kernel
), life AS (
  -- Per life of an executable graph: how often one launch runs the kernel.
  SELECT gk.kernel, x.launches, count(*) AS per_launch
  FROM gk JOIN x ON x.host = gk.host AND x.pid = gk.pid
               AND x.graph_exec = gk.graph_exec
               AND x.instantiate_ts = gk.instantiate_ts
  GROUP BY gk.host, gk.pid, gk.graph_exec, gk.instantiate_ts, gk.kernel
), rep AS (
  SELECT kernel, sum(launches * per_launch) AS via_graphs,
         sum(launches) AS graph_launches
  FROM life GROUP BY kernel
), dir AS (
  -- Every recorded launch, the captured ones included (they ran nothing).
  -- Grouped by the column first: the scan emits it grouped, unsorted.
  SELECT coalesce(kernel, '(unnamed)') AS kernel, sum(n) AS launches
  FROM (SELECT kernel, count(*) AS n FROM cuda_kernel GROUP BY kernel)
  GROUP BY 1
), unknown AS (
  SELECT CASE WHEN instantiate_ts IS NULL
              THEN '(captured before recording)'
              ELSE '(capture not recorded)' END AS kernel,
         sum(launches) AS graph_launches, count(*) AS graphs
  FROM x
  WHERE NOT EXISTS (SELECT 1 FROM gk
                    WHERE gk.host = x.host AND gk.pid = x.pid
                      AND gk.graph_exec = x.graph_exec
                      AND gk.instantiate_ts = x.instantiate_ts)
  GROUP BY 1
)
SELECT launches, direct, via_graphs, graph_launches, graphs, kernel
FROM (
  SELECT d.launches - c.captured + coalesce(r.via_graphs, 0) AS launches,
         d.launches - c.captured AS direct,
         coalesce(r.via_graphs, 0) AS via_graphs,
         coalesce(r.graph_launches, 0) AS graph_launches, c.graphs, c.kernel,
         0 AS o
  FROM cap c JOIN dir d USING (kernel) LEFT JOIN rep r USING (kernel)
  UNION ALL
  SELECT NULL, NULL, NULL, graph_launches, graphs, kernel, 1 FROM unknown
)
ORDER BY o, launches DESC, kernel
