-- name: timeline
-- description: every event of every table within delta_ms of a time, merged and ordered: what the host was doing then
-- param: at:time= the time: RFC 3339, 2h (ago), or digits alone: ns since the epoch (as gpurec prints ts)
-- param: delta_ms:duration=100ms how long either side of it (digits alone: ms)
WITH w(lo, hi) AS (SELECT :at - :delta_ms, :at + :delta_ms)
SELECT ts, ts - :at AS offset_ns, tbl AS "table", pid, tid, comm, dur, what
FROM (
  SELECT ts, 'cuda_kernel' AS tbl, pid, tid, comm, dur,
         api || ' ' || coalesce(kernel, '(unnamed)') || ' grid ' || grid_x ||
         'x' || grid_y || 'x' || grid_z || ' block ' || block_x || 'x' ||
         block_y || 'x' || block_z || ' ret ' || coalesce(ret, '-') AS what
  FROM cuda_kernel, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'cuda_memcpy', pid, tid, comm, dur,
         api || ' ' || kind || ' ' || bytes || ' B ret ' || coalesce(ret, '-')
  FROM cuda_memcpy, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'cuda_memset', pid, tid, comm, dur,
         api || ' ' || bytes || ' B ret ' || coalesce(ret, '-')
  FROM cuda_memset, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'cuda_mem', pid, tid, comm, dur,
         api || ' ' || op || coalesce(' ' || bytes || ' B', '') ||
         ' ret ' || coalesce(ret, '-')
  FROM cuda_mem, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'cuda_sync', pid, tid, comm, dur,
         api || ' ret ' || coalesce(ret, '-')
  FROM cuda_sync, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'cuda_graph', pid, tid, comm, dur,
         api || ' ' || op || ' ret ' || coalesce(ret, '-')
  FROM cuda_graph, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'nccl', pid, tid, comm, dur,
         api || ' ' || coalesce(op, '') || coalesce(' ' || bytes || ' B', '')
  FROM nccl, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'offcpu', pid, tid, comm, dur,
         state || coalesce(' woken by ' || waker_tid, '') ||
         coalesce(' at ' || substr(stack, -80), '')
  FROM offcpu, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'runq', pid, tid, comm, dur, 'runnable, then ran on cpu ' || cpu
  FROM runq, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'block_io', pid, tid, comm, dur,
         op || ' ' || bytes || ' B on ' || dev || coalesce(' ' || disk, '') ||
         ' sector ' || sector
  FROM block_io, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'file_io', pid, tid, comm, dur,
         syscall || ' fd ' || fd || ' -> ' || bytes || coalesce(' ' || path, '')
  FROM file_io, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'process', pid, tid, comm, NULL,
         coalesce(exe, '') || coalesce(' exit ' || exit_code, '')
  FROM process, w WHERE ts BETWEEN lo AND hi
  UNION ALL
  SELECT ts, 'drops', pid, tid, comm, NULL, source || ' lost ' || count
  FROM drops, w WHERE ts BETWEEN lo AND hi
)
ORDER BY ts, tbl, tid
