-- name: mem-churn
-- description: allocations and frees per process and API: calls, failures, bytes asked, rate (calls/s between the first and the last; NULL where they are under 1 s apart), and the process's peak bytes outstanding (successful allocations less the frees of their pointers)
WITH ok AS (
  SELECT pid, ts, op, ptr, bytes FROM cuda_mem WHERE ret IS NULL OR ret = 0
), d AS (
  SELECT pid, ts,
         CASE op WHEN 'alloc' THEN coalesce(bytes, 0)
         ELSE -coalesce(lag(CASE op WHEN 'alloc' THEN bytes END)
                        OVER (PARTITION BY pid, ptr ORDER BY ts), 0) END AS delta
  FROM ok
), peak AS (
  SELECT pid, max(outstanding) AS peak_bytes
  FROM (SELECT pid, sum(delta) OVER (PARTITION BY pid ORDER BY ts
                                     ROWS UNBOUNDED PRECEDING) AS outstanding
        FROM d)
  GROUP BY pid
)
SELECT m.pid, min(m.comm) AS comm, m.api, m.op, count(*) AS calls,
       sum(m.ret IS NOT NULL AND m.ret != 0) AS failed, sum(m.bytes) AS bytes,
       -- A rate only over a second or more: 3 frees 10 us apart are not
       -- 299446 frees a second.
       CASE WHEN max(m.ts) - min(m.ts) >= 1000000000
            THEN round((count(*) - 1) * 1e9 / (max(m.ts) - min(m.ts)), 1) END
           AS per_s,
       p.peak_bytes
FROM cuda_mem m LEFT JOIN peak p ON p.pid = m.pid
GROUP BY m.pid, m.api, m.op
ORDER BY m.pid, m.api, m.op
