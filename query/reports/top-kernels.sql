-- name: top-kernels
-- description: per kernel: launches, share of all launches, grid/block shapes seen, launch rate, then the kernel's name
-- param: limit:count=25 most kernels shown
-- param: graphs:enum(0|1)=0 1 to count the kernels CUDA graph launches ran (graph-kernels) and not the launches captured into graphs, which ran nothing
WITH gk AS MATERIALIZED (
  -- Read once: both graph arms use it.
  SELECT * FROM cuda_graph_kernel WHERE :graphs
), k AS (
  SELECT kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z,
         launches, ts, ts_last
  FROM sum_kernel
  UNION ALL
  SELECT kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z, -1,
         NULL, NULL
  FROM (SELECT DISTINCT host, pid, capture_ts, seq, kernel, grid_x, grid_y,
                        grid_z, block_x, block_y, block_z
        FROM gk)
  WHERE :graphs
  UNION ALL
  SELECT g.kernel, g.grid_x, g.grid_y, g.grid_z, g.block_x, g.block_y,
         g.block_z, x.launches, x.first_ts, x.last_ts
  FROM gk g
  JOIN cuda_graph_exec x ON x.host = g.host AND x.pid = g.pid
                        AND x.graph_exec = g.graph_exec
                        AND x.instantiate_ts = g.instantiate_ts
  WHERE :graphs
)
SELECT sum(launches) AS launches,
       round(100.0 * sum(launches) / sum(sum(launches)) OVER (), 1) AS pct,
       count(DISTINCT grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
             block_x || 'x' || block_y || 'x' || block_z) AS shapes,
       min(grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
           block_x || 'x' || block_y || 'x' || block_z) AS shape,
       CASE WHEN max(ts_last) > min(ts)
            THEN round((sum(launches) - 1) * 1e9 / (max(ts_last) - min(ts)),
                       1) END AS launches_per_s,
       coalesce(kernel, '(unnamed)') AS kernel
FROM k
GROUP BY kernel
HAVING sum(launches) > 0
ORDER BY launches DESC, kernel
LIMIT :limit
-- raw:
WITH gk AS MATERIALIZED (
  -- Read once: both graph arms use it.
  SELECT * FROM cuda_graph_kernel WHERE :graphs
), k AS (
  SELECT kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z,
         1 AS launches, ts, ts AS ts_last
  FROM cuda_kernel
  UNION ALL
  SELECT kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z, -1,
         NULL, NULL
  FROM (SELECT DISTINCT host, pid, capture_ts, seq, kernel, grid_x, grid_y,
                        grid_z, block_x, block_y, block_z
        FROM gk)
  WHERE :graphs
  UNION ALL
  SELECT g.kernel, g.grid_x, g.grid_y, g.grid_z, g.block_x, g.block_y,
         g.block_z, x.launches, x.first_ts, x.last_ts
  FROM gk g
  JOIN cuda_graph_exec x ON x.host = g.host AND x.pid = g.pid
                        AND x.graph_exec = g.graph_exec
                        AND x.instantiate_ts = g.instantiate_ts
  WHERE :graphs
)
SELECT sum(launches) AS launches,
       round(100.0 * sum(launches) / sum(sum(launches)) OVER (), 1) AS pct,
       count(DISTINCT grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
             block_x || 'x' || block_y || 'x' || block_z) AS shapes,
       min(grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
           block_x || 'x' || block_y || 'x' || block_z) AS shape,
       CASE WHEN max(ts_last) > min(ts)
            THEN round((sum(launches) - 1) * 1e9 / (max(ts_last) - min(ts)),
                       1) END AS launches_per_s,
       coalesce(kernel, '(unnamed)') AS kernel
FROM k
GROUP BY kernel
HAVING sum(launches) > 0
ORDER BY launches DESC, kernel
LIMIT :limit
