-- name: offcpu-top
-- description: threads of GPU processes by off-CPU time, by state, with their top stack
-- param: limit:count=20 most threads shown
WITH t AS (
  SELECT pid, tid, comm, state, sum(intervals) AS n,
         sum(dur_total) AS total_ns, max(dur_max) AS max_ns
  FROM sum_offcpu GROUP BY pid, tid, comm, state
), s AS (
  SELECT tid, state, stack, sum(dur_total) AS d,
         row_number() OVER (PARTITION BY tid, state
                            ORDER BY sum(dur_total) DESC, stack) AS r
  FROM sum_offcpu GROUP BY tid, state, stack
)
SELECT t.pid, t.tid, t.comm, t.state, t.n AS intervals, t.total_ns,
       t.max_ns, s.stack AS top_stack
FROM t LEFT JOIN s ON s.tid = t.tid AND s.state = t.state AND s.r = 1
ORDER BY t.total_ns DESC, t.tid, t.state
LIMIT :limit
-- raw:
WITH t AS (
  SELECT pid, tid, comm, state, count(*) AS n, sum(dur) AS total_ns,
         max(dur) AS max_ns
  FROM offcpu GROUP BY pid, tid, comm, state
), s AS (
  SELECT tid, state, stack, sum(dur) AS d,
         row_number() OVER (PARTITION BY tid, state
                            ORDER BY sum(dur) DESC, stack) AS r
  FROM offcpu GROUP BY tid, state, stack
)
SELECT t.pid, t.tid, t.comm, t.state, t.n AS intervals, t.total_ns,
       t.max_ns, s.stack AS top_stack
FROM t LEFT JOIN s ON s.tid = t.tid AND s.state = t.state AND s.r = 1
ORDER BY t.total_ns DESC, t.tid, t.state
LIMIT :limit
