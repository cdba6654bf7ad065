#!/usr/bin/env bash
# nccl.sh - on a GPU machine (the device tool): record a torch.distributed
# NCCL job with a statically linked gpurecd and compare the `nccl` table
# with what the job issued (tests/gpu/nccl_job.py): collective counts,
# bytes, one communicator id on every rank, a gap-free seq per rank, and
# with two or more ranks the planted late rank in nccl-skew: named first,
# its p99 and max lateness within 10% of the delay; nccl-arrivals,
# nccl-skew and rank-pace from the records and arrivals gpurecd kept equal
# to their answers from every call.  More ranks than GPUs
# share GPU 0 as "hosts" of their own (see nccl_job.py).  Exits 1 if a
# check fails.
# Usage, from the repository root: bash tests/gpu/nccl.sh [BIN_DIR] [NPROC]
# (BIN_DIR holds gpurecd and gpurec: make STATIC=1 B=carry/static all).
set -uo pipefail
BIN=${1:-carry/static}
NPROC=${2:-$(nvidia-smi -L | wc -l)}
OUT=${OUT:-/tmp/gr-out}
ITERS=${ITERS:-200} DELAY_MS=${DELAY_MS:-50} LATE=${LATE:-1}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-nccl.XXXXXX)
"$BIN/gpurecd" --data "$W/d" --flush-interval 200 --config /dev/null >"$OUT/nccl-gpurecd.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do grep -q "gpurecd: ready" "$OUT/nccl-gpurecd.log" && break; sleep 0.1; done
[ "$NPROC" -lt 2 ] && LATE=-1
if [ "$NPROC" -ge 2 ]; then
	torchrun --standalone --nproc-per-node "$NPROC" tests/gpu/nccl_job.py \
		"$ITERS" "$DELAY_MS" "$LATE" >"$OUT/nccl-job.json" 2>"$OUT/nccl-job.err"
else
	python3 tests/gpu/nccl_job.py "$ITERS" 0 -1 >"$OUT/nccl-job.json" 2>"$OUT/nccl-job.err"
fi
echo "job exit: $?"
sleep 1; kill -TERM $dpid; wait $dpid; echo "gpurecd exit: $?"
grep -E "nccl|refused|cannot" "$OUT/nccl-gpurecd.log" | head
cat "$OUT/nccl-job.json"; tail -3 "$OUT/nccl-job.err"
G="$BIN/gpurec --data $W/d --format table"
$G sql "SELECT pid, rank, nranks, op, count(*) AS n, min(bytes), max(bytes), min(seq), max(seq), count(DISTINCT seq) AS seqs, count(DISTINCT comm_id) AS comms, sum(ret != 0) AS errors FROM nccl GROUP BY pid, rank, op ORDER BY pid, op"
$G sql "SELECT api, count(*) FROM nccl GROUP BY api"
$G report nccl-sum
[ "$NPROC" -ge 2 ] && $G report nccl-skew && $G report rank-pace
$G sql "SELECT source, sum(count) FROM drops GROUP BY 1"
python3 - "$OUT/nccl-job.json" "$($BIN/gpurec --data $W/d --format json sql "SELECT pid, op, count(*) AS n, sum(bytes) AS bytes FROM nccl WHERE op IN ('AllReduce', 'Broadcast') GROUP BY pid, op")" "$NPROC" "$($BIN/gpurec --data $W/d --format json sql "SELECT pid, count(DISTINCT comm_id) AS comms, max(seq) - min(seq) + 1 - count(DISTINCT seq) AS seq_holes, count(seq) - count(DISTINCT seq) AS seq_dups, min(rank) AS rank, min(nranks) AS nranks FROM nccl WHERE seq IS NOT NULL GROUP BY pid")" <<'PY' | tee "$OUT/nccl-summary.json"
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = json.loads(sys.argv[2])
per = {x["pid"]: x for x in json.loads(sys.argv[4])}
out = []
for j in jobs:
    r = {x["op"]: x for x in rows if x["pid"] == j["pid"]}
    ar, bc = r.get("AllReduce", {}), r.get("Broadcast", {})
    out.append({"rank": j["rank"], "issued_allreduce": j["allreduce"],
        "recorded_allreduce": ar.get("n"), "issued_broadcast": j["broadcast"],
        "recorded_broadcast": bc.get("n"),
        "bytes_ok": ar.get("bytes") == j["allreduce_bytes"] and
                    bc.get("bytes") == j["broadcast_bytes"],
        **{k: per.get(j["pid"], {}).get(k) for k in
           ("comms", "seq_holes", "seq_dups", "rank", "nranks")}})
print(json.dumps({"nproc": int(sys.argv[3]), "ranks": out}))
PY

# nccl-arrivals reads the records gpurecd kept beside each nccl block
# (store/ncclcoll.h): the 1,000 widest collectives from them must equal
# those from every call (nccl_last_arrival without its argument).
ARR=1
if [ "$NPROC" -ge 2 ]; then
	$G report nccl-arrivals --param limit=5
	Q="comm_id, seq, op, bytes, n, nranks, first_ts, last_ts, last_host, last_rank, last_pid, prev_ts"
	O="ORDER BY last_ts - first_ts DESC, first_ts, comm_id, seq"
	GPUREC_DEBUG_STATS=1 $BIN/gpurec --data $W/d --format csv sql \
		"SELECT $Q FROM nccl_last_arrival(1000) $O" >"$OUT/arr.records" 2>"$OUT/arr.stats"
	$BIN/gpurec --data $W/d --format csv sql \
		"SELECT $Q FROM nccl_last_arrival $O LIMIT 1000" >"$OUT/arr.calls"
	recs=$(sed -n 's/.*nccl_coll_read=\([0-9]*\).*/\1/p' "$OUT/arr.stats")
	cmp -s "$OUT/arr.records" "$OUT/arr.calls" && [ "${recs:-0}" -gt 0 ] &&
		[ "$(wc -l <"$OUT/arr.records")" -gt 100 ] && ARR=0
	echo "nccl-arrivals from $recs blocks' records, $(($(wc -l <"$OUT/arr.records") - 1)) collectives: $([ $ARR = 0 ] && echo "equal to every call's" || echo "NOT equal to every call's")"
	# nccl-skew and rank-pace read the arrivals kept beside the records:
	# each must print what its --raw SQL prints over every call.
	for r in nccl-skew rank-pace; do
		GPUREC_DEBUG_STATS=1 $BIN/gpurec --data $W/d --format csv report $r >"$OUT/$r.arr" 2>"$OUT/$r.stats"
		$BIN/gpurec --data $W/d --format csv --max-memory 8G report $r --raw >"$OUT/$r.raw"
		recs=$(sed -n 's/.*nccl_coll_read=\([0-9]*\).*/\1/p' "$OUT/$r.stats")
		if cmp -s "$OUT/$r.arr" "$OUT/$r.raw" && [ "${recs:-0}" -gt 0 ] &&
			[ "$(wc -l <"$OUT/$r.arr")" -gt "$NPROC" ]; then
			echo "$r from $recs blocks' records and arrivals: equal to --raw's"
		else
			echo "$r from $recs blocks' records and arrivals: NOT equal to --raw's"
			diff "$OUT/$r.arr" "$OUT/$r.raw" | head -5
			ARR=1
		fi
	done
fi

# The checks: issued = recorded per rank and op, bytes, one communicator,
# no seq hole; with two ranks, nccl-skew's first row is the late rank and
# its p99 and max lateness are the delay within 10%.
SKEW=$($BIN/gpurec --data $W/d --format json report nccl-skew 2>/dev/null || echo '[]')
python3 - "$OUT/nccl-summary.json" "$SKEW" "$NPROC" "$LATE" "$DELAY_MS" <<'PY'
import json, sys
summ, skew = json.load(open(sys.argv[1])), json.loads(sys.argv[2])
nproc, late, delay = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok
check(len(summ["ranks"]) == nproc, "%d ranks reported" % nproc)
for r in summ["ranks"]:
    check(r["issued_allreduce"] == r["recorded_allreduce"] and
          r["issued_broadcast"] == r["recorded_broadcast"] and r["bytes_ok"],
          "rank %s: all-reduces %s/%s, broadcasts %s/%s, bytes equal" % (
              r["rank"], r["recorded_allreduce"], r["issued_allreduce"],
              r["recorded_broadcast"], r["issued_broadcast"]))
    check(r["comms"] == 1 and r["seq_holes"] == 0 and r["seq_dups"] == 0,
          "rank %s: one communicator, seq without holes" % r["rank"])
if nproc >= 2:
    top = skew[0] if skew else {}
    check(top.get("rank") == late, "nccl-skew names rank %s first (got %s)"
          % (late, top.get("rank")))
    for k in ("p99_late_ms", "max_late_ms"):
        v = top.get(k) or 0
        check(abs(v - delay) <= 0.1 * delay,
              "%s %.3f ms within 10%% of %g ms" % (k, v, delay))
print("nccl-check: %s" % ("ok" if bad == 0 else "%d FAILED" % bad))
sys.exit(1 if bad else 0)
PY
rc=$?
[ "$ARR" = 0 ] || [ "$NPROC" -lt 2 ] || rc=1
exit $rc
