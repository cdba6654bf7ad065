-- name: sync-long
-- description: the longest CUDA synchronizations of each thread (device, stream, event waits)
-- param: per_thread:count=5 most synchronizations shown per thread
-- param: limit:count=50 most rows shown
SELECT pid, tid, comm, api, dur AS dur_ns, stream, ret, ts
FROM (SELECT *, row_number() OVER (PARTITION BY pid, tid
                                   ORDER BY dur DESC, ts) AS r
      FROM cuda_sync WHERE dur IS NOT NULL)
WHERE r <= :per_thread
ORDER BY dur_ns DESC, ts
LIMIT :limit
