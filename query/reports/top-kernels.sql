-- name: top-kernels
-- description: per kernel: launches, share of all launches, grid/block shapes seen, launch rate, then the kernel's name
-- param: limit:count=25 most kernels shown
SELECT sum(launches) AS launches,
       round(100.0 * sum(launches) / (SELECT sum(launches) FROM sum_kernel),
             1) AS pct,
       count(DISTINCT grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
             block_x || 'x' || block_y || 'x' || block_z) AS shapes,
       min(grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
           block_x || 'x' || block_y || 'x' || block_z) AS shape,
       CASE WHEN max(ts_last) > min(ts)
            THEN round((sum(launches) - 1) * 1e9 / (max(ts_last) - min(ts)),
                       1) END AS launches_per_s,
       coalesce(kernel, '(unnamed)') AS kernel
FROM sum_kernel
GROUP BY kernel
ORDER BY launches DESC, kernel
LIMIT :limit
-- raw:
SELECT count(*) AS launches,
       round(100.0 * count(*) / (SELECT count(*) FROM cuda_kernel), 1) AS pct,
       count(DISTINCT grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
             block_x || 'x' || block_y || 'x' || block_z) AS shapes,
       min(grid_x || 'x' || grid_y || 'x' || grid_z || '/' ||
           block_x || 'x' || block_y || 'x' || block_z) AS shape,
       CASE WHEN max(ts) > min(ts)
            THEN round((count(*) - 1) * 1e9 / (max(ts) - min(ts)), 1) END
           AS launches_per_s,
       coalesce(kernel, '(unnamed)') AS kernel
FROM cuda_kernel
GROUP BY kernel
ORDER BY launches DESC, kernel
LIMIT :limit
