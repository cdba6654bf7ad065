#!/usr/bin/env bash
# host.sh - on a GPU machine (the device tool): record a PyTorch training
# loop fed by a slow DataLoader (tests/gpu/dataloader.py) with a
# statically linked gpurecd, and set what offcpu and runq say of the main
# thread beside the waits the script timed itself.
# Usage, from the repository root: bash tests/gpu/host.sh [BIN_DIR]
# (BIN_DIR holds gpurecd and gpurec: make STATIC=1 B=carry/static all).
set -uo pipefail
BIN=${1:-carry/static}
OUT=${OUT:-/tmp/gr-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-host.XXXXXX)
"$BIN/gpurecd" --data "$W/d" --flush-interval 200 --config /dev/null >"$OUT/host-gpurecd.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do grep -q "gpurecd: ready" "$OUT/host-gpurecd.log" && break; sleep 0.1; done
python3 tests/gpu/dataloader.py 60 4 20 >"$OUT/dataloader.json" 2>"$OUT/dataloader.err"
sleep 1; kill -TERM $dpid; wait $dpid; echo "gpurecd exit: $?"
grep -E "host:|refused|cannot" "$OUT/host-gpurecd.log"
cat "$OUT/dataloader.json"
read -r pid tid t0 t1 < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["pid"], j["tid"], j["t0"], j["t1"])' "$OUT/dataloader.json")
G="$BIN/gpurec --data $W/d --format table"
w="pid = $pid AND ts BETWEEN $t0 AND $t1"
echo "== off-CPU of the main thread ($tid) in the window, by state"
$G sql "SELECT state, count(*) AS n, round(sum(dur)/1e9, 3) AS total_s, round(median(dur)/1e6, 2) AS p50_ms, round(max(dur)/1e6, 2) AS max_ms FROM offcpu WHERE $w AND tid = $tid GROUP BY state"
echo "== its longest off-CPU stacks (leaf end)"
$G sql "SELECT count(*) AS n, round(sum(dur)/1e6, 1) AS total_ms, substr(stack, -110) AS stack FROM offcpu WHERE $w AND tid = $tid GROUP BY stack ORDER BY 2 DESC LIMIT 5"
echo "== off-CPU by thread of the process"
$G sql "SELECT tid, comm, count(*) AS n, round(sum(dur)/1e9, 3) AS total_s FROM offcpu WHERE $w GROUP BY tid ORDER BY 4 DESC LIMIT 8"
echo "== run-queue latency of the main thread"
$G sql "SELECT count(*) AS n, round(median(dur)/1e3, 1) AS p50_us, round(percentile(dur, 99)/1e3, 1) AS p99_us, round(max(dur)/1e3, 1) AS max_us FROM runq WHERE $w AND tid = $tid"
echo "== processes, file I/O, block I/O, drops"
$G sql "SELECT pid, ppid, comm, substr(cmdline, 1, 60) AS cmdline, exit_code FROM process WHERE pid = $pid OR ppid = $pid"
$G sql "SELECT syscall, count(*) AS n, round(sum(dur)/1e6, 1) AS ms FROM file_io WHERE pid = $pid GROUP BY 1"
$G sql "SELECT op, count(*) AS n, sum(bytes) AS bytes FROM block_io GROUP BY 1"
$G sql "SELECT source, sum(count) FROM drops GROUP BY 1"
python3 - "$OUT/dataloader.json" \
	"$($BIN/gpurec --data $W/d --format csv sql "SELECT coalesce(sum(dur),0), count(*) FROM offcpu WHERE $w AND tid = $tid" | tail -1)" \
	"$($BIN/gpurec --data $W/d --format csv sql "SELECT count(*), coalesce(median(dur),0), coalesce(percentile(dur, 99),0) FROM runq WHERE $w AND tid = $tid" | tail -1)" <<'PY' | tee "$OUT/host-summary.json"
import json, sys
j = json.load(open(sys.argv[1]))
off_ns, off_n = map(int, sys.argv[2].split(","))
rq = sys.argv[3].split(",")
print(json.dumps({"batches": j["batches"], "window_s": j["window_s"],
    "main_wait_s_timed_by_script": j["wait_s"],
    "main_offcpu_s_recorded": round(off_ns / 1e9, 4), "main_offcpu_intervals": off_n,
    "offcpu_over_wait": round(off_ns / 1e9 / max(j["wait_s"], 1e-9), 3),
    "main_runq_n": int(rq[0]), "main_runq_p50_us": round(float(rq[1]) / 1e3, 1),
    "main_runq_p99_us": round(float(rq[2]) / 1e3, 1)}))
PY
