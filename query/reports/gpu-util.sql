-- name: gpu-util
-- description: utilization is not work: per GPU and minute, NVML's utilization beside what the processes on that GPU did (launches/s of all kernels and of the main kernel, the one launched most there; copy bytes, sync wait, time in NCCL); flagged where utilization stays high while the main kernel's launches/s fall to 1/drop of the GPU's median busy minute or less
-- param: busy_pct:count=80 average utilization at or over this % is high
-- param: drop:count=2 flag a busy minute whose main-kernel launches/s are this many times below the median
WITH u AS (
  SELECT host, gpu, pci, ts / 60000000000 * 60000000000 AS minute,
         round(avg(util_gpu), 1) AS util_pct,
         max(ts) - min(ts) AS span,
         round(avg(sm_clock)) AS sm_mhz, round(avg(power_mw) / 1000.0) AS watts
  FROM gpu GROUP BY host, gpu, pci, minute
), on_gpu AS (
  -- Which processes were on which GPU in each minute (NVML's list).
  SELECT DISTINCT host, pci, pid,
         CAST(ts / 60000000000 * 60000000000 AS INTEGER) AS minute
  FROM gpu_process
), api AS (
  SELECT host, pid, minute,
         sum(CASE WHEN api LIKE '%Launch%' THEN calls ELSE 0 END) AS launches,
         sum(CASE WHEN api LIKE '%Synchronize%' THEN dur_total ELSE 0 END)
             AS sync_ns
  FROM sum_api GROUP BY host, pid, minute
), kt AS (
  -- Launches per process and kernel over the whole window: no minute
  -- read, so a sealed segment gives its whole-segment rows.
  SELECT host, pid, kernel, sum(launches) AS n
  FROM sum_kernel GROUP BY host, pid, kernel
), main AS (
  -- The GPU's main kernel: the one its processes launched most.
  SELECT host, pci, kernel FROM (
    SELECT p.host, p.pci, kt.kernel,
           row_number() OVER (PARTITION BY p.host, p.pci
                              ORDER BY sum(kt.n) DESC, kt.kernel) AS r
    FROM (SELECT DISTINCT host, pci, pid FROM on_gpu) p
    JOIN kt ON kt.host = p.host AND kt.pid = p.pid
    GROUP BY p.host, p.pci, kt.kernel)
  WHERE r = 1
), mk AS (
  -- Per minute, the main kernels' launches only (sum_kernel reads just
  -- their rows: the IN goes down to each segment's summary table).
  SELECT host, pid, minute, kernel, sum(launches) AS n
  FROM sum_kernel WHERE kernel IN (SELECT kernel FROM main)
  GROUP BY host, pid, minute, kernel
), k AS (
  SELECT o.host, o.pci, o.minute, sum(coalesce(a.launches, 0)) AS launches,
         sum(coalesce(mk.n, 0)) AS main_launches
  FROM on_gpu o
  LEFT JOIN api a ON a.host = o.host AND a.pid = o.pid AND a.minute = o.minute
  LEFT JOIN main ON main.host = o.host AND main.pci = o.pci
  LEFT JOIN mk ON mk.host = o.host AND mk.pid = o.pid
              AND mk.minute = o.minute AND mk.kernel = main.kernel
  GROUP BY o.host, o.pci, o.minute
), cp AS (
  SELECT host, pid, minute, sum(bytes) AS bytes
  FROM sum_memcpy GROUP BY host, pid, minute
), nc AS (
  SELECT host, pid, minute, sum(dur_total) AS nccl_ns
  FROM sum_nccl GROUP BY host, pid, minute
), w AS (
  SELECT o.host, o.pci, o.minute, count(DISTINCT o.pid) AS procs,
         sum(coalesce(a.sync_ns, 0)) AS sync_ns,
         sum(coalesce(c.bytes, 0)) AS copy_bytes,
         sum(coalesce(n.nccl_ns, 0)) AS nccl_ns
  FROM on_gpu o
  LEFT JOIN api a ON a.host = o.host AND a.pid = o.pid AND a.minute = o.minute
  LEFT JOIN cp c ON c.host = o.host AND c.pid = o.pid AND c.minute = o.minute
  LEFT JOIN nc n ON n.host = o.host AND n.pid = o.pid AND n.minute = o.minute
  GROUP BY o.host, o.pci, o.minute
), m AS (
  SELECT u.*, coalesce(w.procs, 0) AS procs,
         round(coalesce(k.launches, 0) / 60.0, 1) AS launches_s,
         round(coalesce(k.main_launches, 0) / 60.0, 1) AS main_s,
         coalesce(w.copy_bytes, 0) AS copy_bytes,
         round(coalesce(w.sync_ns, 0) / 1e9, 2) AS sync_s,
         round(coalesce(w.nccl_ns, 0) / 1e9, 2) AS nccl_s
  FROM u
  LEFT JOIN w ON w.host = u.host AND w.pci = u.pci AND w.minute = u.minute
  LEFT JOIN k ON k.host = u.host AND k.pci = u.pci AND k.minute = u.minute
), med AS (
  SELECT host, pci, median(main_s) AS med_main_s
  FROM m WHERE util_pct >= CAST(:busy_pct AS REAL) AND main_s > 0
         AND span >= 50000000000
  GROUP BY host, pci
)
SELECT m.host, m.gpu, m.pci, m.minute, m.util_pct, m.sm_mhz, m.watts,
       m.procs, m.launches_s, m.main_s, med.med_main_s, m.copy_bytes,
       m.sync_s, m.nccl_s,
       -- Minutes the recording covers (samples over 50 s or more) only:
       -- a partial minute's rate is low by what it missed.
       CASE WHEN m.util_pct >= CAST(:busy_pct AS REAL) AND med.med_main_s > 0
                 AND m.span >= 50000000000
                 AND m.main_s * CAST(:drop AS REAL) <= med.med_main_s
            THEN 'busy, not working: main kernel ' ||
                 round(med.med_main_s / max(m.main_s, 0.1), 1) ||
                 'x below its median'
       END AS flag,
       main.kernel AS main_kernel
FROM m
LEFT JOIN med ON med.host = m.host AND med.pci = m.pci
LEFT JOIN main ON main.host = m.host AND main.pci = m.pci
ORDER BY m.host, m.gpu, m.minute
