#!/usr/bin/env bash
# validate.sh - on a GPU machine (the device tool), compare what a
# statically linked gpurecd records of a PyTorch workload with what
# PyTorch's profiler (CUPTI) saw in the same window, for a process started
# after gpurecd and for one started before it; then time a GPU-bound and a
# launch-bound loop with no probe, with one empty uprobe on libcuda's
# launch entry points, and under gpurecd, interleaved, and measure
# gpurecd's CPU time and peak RSS while it records.
#
# Run from the repository root: bash tests/gpu/validate.sh [BIN_DIR]
# (BIN_DIR holds gpurecd, gpurec and probe-cost:
#  make STATIC=1 B=carry/static all carry/static/probe-cost).
# Results go to stdout and $OUT (summary.json).
set -uo pipefail
BIN=${1:-carry/static}
OUT=${OUT:-/tmp/gr-out}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-gpu.XXXXXX)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
LIBCUDA=$(ls /usr/local/nvidia/lib64/libcuda.so.* /usr/lib/x86_64-linux-gnu/libcuda.so.* 2>/dev/null | grep -v '\.so\.1$' | head -1)
echo "libcuda: $LIBCUDA"

start() { # DIR LOG: gpurecd recording to DIR, pid in $dpid
	"$BIN/gpurecd" --data "$1" --flush-interval 200 --config /dev/null >"$2" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do grep -q "gpurecd: ready" "$2" && break; sleep 0.1; done
}
stop() { kill -TERM "$dpid"; wait "$dpid"; echo "gpurecd exit: $?"; }

# report NAME DIR JSON: gpurecd's rows for the workload's pid and window,
# side by side with the profiler's, appended to $OUT/coverage.jsonl.
report() {
	local name=$1 dir=$2 json=$3 pid t0 t1
	read -r pid t0 t1 < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["pid"], j["t0"], j["t1"])' "$json")
	local G="$BIN/gpurec --data $dir" w="pid = $pid AND ts BETWEEN $t0 AND $t1"
	echo "== $name"
	$G --format table sql "SELECT api, count(*) AS calls, sum(kernel IS NOT NULL) AS named FROM cuda_kernel WHERE $w GROUP BY api ORDER BY 2 DESC"
	$G --format table sql "SELECT kind, async, count(*) AS n, sum(bytes) AS bytes FROM cuda_memcpy WHERE $w GROUP BY 1, 2"
	$G --format table sql "SELECT api, op, count(*) FROM cuda_graph WHERE $w GROUP BY 1, 2"
	$G --format table sql "SELECT substr(kernel, 1, 60) AS kernel, count(*) FROM cuda_kernel WHERE $w GROUP BY kernel ORDER BY 2 DESC LIMIT 6"
	$G --format table sql "SELECT source, sum(count) FROM drops GROUP BY 1"
	python3 - "$name" "$json" \
		"$($G --format csv sql "SELECT count(*), sum(kernel IS NOT NULL) FROM cuda_kernel WHERE $w" | tail -1)" \
		"$($G --format csv sql "SELECT count(*) FROM cuda_graph WHERE $w AND op = 'launch'" | tail -1)" \
		"$($G --format csv sql "SELECT coalesce(sum(CASE kind WHEN 'H2D' THEN bytes END),0), coalesce(sum(CASE kind WHEN 'D2H' THEN bytes END),0) FROM cuda_memcpy WHERE $w" | tail -1)" \
		"$($G --format csv sql "SELECT coalesce(sum(count),0) FROM drops" | tail -1)" <<'PY' | tee -a "$OUT/coverage.jsonl"
import json, sys
name, prof = sys.argv[1], json.load(open(sys.argv[2]))
launches, named = map(int, sys.argv[3].split(","))
graphs, drops = int(sys.argv[4]), int(sys.argv[6])
h2d, d2h = map(int, sys.argv[5].split(","))
calls = prof["launch_api_calls"]
p_launch = sum(v for k, v in calls.items() if "Graph" not in k)
p_graph = sum(v for k, v in calls.items() if "Graph" in k)
print(json.dumps({"case": name, "profiler_launches": p_launch,
    "gpurecd_launches": launches, "launch_ratio": round(launches / max(p_launch, 1), 4),
    "named_share": round(named / max(launches, 1), 4),
    "profiler_graph_launches": p_graph, "gpurecd_graph_launches": graphs,
    "profiler_bytes": prof["copy_bytes"], "gpurecd_bytes": {"H2D": h2d, "D2H": d2h},
    "drops": drops}))
PY
}

rm -f "$OUT/coverage.jsonl" "$OUT/overhead.txt"
# 1. A process started after gpurecd.
start "$W/new" "$OUT/gpurecd-new.log"
python3 tests/gpu/workload.py 20 >"$OUT/workload-new.json" 2>"$OUT/workload-new.err"
sleep 1; stop
grep -E "attached|driver|predates|drop" "$OUT/gpurecd-new.log" | head -20
report after-gpurecd "$W/new" "$OUT/workload-new.json"

# 2. A process that predates gpurecd (warmed up first: its handles exist).
GR_READY="$W/ready" GR_GO="$W/go" python3 tests/gpu/workload.py 20 >"$OUT/workload-old.json" 2>"$OUT/workload-old.err" &
wpid=$!
for _ in $(seq 600); do [ -e "$W/ready" ] && break; sleep 0.1; done
start "$W/old" "$OUT/gpurecd-old.log"
touch "$W/go"; wait $wpid
sleep 1; stop
grep -E "driver|predates" "$OUT/gpurecd-old.log" | head -10
report before-gpurecd "$W/old" "$OUT/workload-old.json"

# 3. Overhead: ms per step with no probe, an empty uprobe on libcuda's
#    launch entry points, and gpurecd; interleaved rounds.
#    Each round starts with a different mode, so no mode always runs
#    first (on a cold GPU) or last.
modes=(off empty on)
for round in $(seq "$ROUNDS"); do
	for k in 0 1 2; do
		mode=${modes[$(( (round + k) % 3 ))]}
		pp=
		if [ $mode = empty ]; then
			"$BIN/probe-cost" --attach cuLaunchKernel,cuLaunchKernelEx "$LIBCUDA" &
			pp=$!; sleep 1
		elif [ $mode = on ]; then
			rm -rf "$W/o"; start "$W/o" "$OUT/gpurecd-on.log"; pp=$dpid
			read -r -a s0 < <(cut -d' ' -f14,15 /proc/$pp/stat); w0=$(date +%s.%N)
		fi
		python3 tests/gpu/overhead.py "$mode" 2>/dev/null | tee -a "$OUT/overhead.txt"
		if [ $mode = on ]; then
			read -r -a s1 < <(cut -d' ' -f14,15 /proc/$pp/stat); w1=$(date +%s.%N)
			hwm=$(awk '/VmHWM/ {print $2}' /proc/$pp/status)
			stop >/dev/null
			n=$("$BIN/gpurec" --data "$W/o" --format csv sql "SELECT count(*) FROM cuda_api" | tail -1)
			echo "gpurecd cpu_ticks $(( s1[0] + s1[1] - s0[0] - s0[1] )) wall_s $(awk "BEGIN {print $w1 - $w0}") hz $(getconf CLK_TCK) rss_hwm_kb $hwm rows $n" | tee -a "$OUT/overhead.txt"
		elif [ -n "$pp" ]; then
			kill -TERM $pp; wait $pp
		fi
	done
done
python3 - "$OUT/overhead.txt" <<'PY' | tee "$OUT/summary.txt"
import sys, statistics as st
t, cpu = {}, []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "gpurecd":
        d = dict(zip(f[1::2], f[2::2]))
        cpu.append((int(d["cpu_ticks"]) / int(d["hz"]), float(d["wall_s"]), int(d["rss_hwm_kb"]), int(d["rows"])))
    elif len(f) == 3:
        t.setdefault(f[1], {}).setdefault(f[0], []).append(float(f[2]))
for loop, m in t.items():
    off, emp, on = (st.mean(m[k]) for k in ("off", "empty", "on"))
    print("%s ms/step: off %.3f  empty-uprobe %.3f  gpurecd %.3f  -> gpurecd %+.2f %%, empty %+.2f %%, cost ratio (on-off)/(empty-off) %.2f"
          % (loop, off, emp, on, 100 * (on / off - 1), 100 * (emp / off - 1), (on - off) / (emp - off) if emp != off else float("nan")))
    print("   runs:", {k: v for k, v in m.items()})
    if loop == "launch_bound":  # 200 launches a step, CPU side only
        print("   per launch (us): off %.2f  empty-uprobe %.2f  gpurecd %.2f  -> added: empty %.2f, gpurecd %.2f"
              % (off * 5, emp * 5, on * 5, (emp - off) * 5, (on - off) * 5))
for c, w, r, n in cpu:
    print("gpurecd while recording: %.2f CPU-s over %.1f s (%.2f %% of one core), peak RSS %.1f MiB, %d rows" % (c, w, 100 * c / w, r / 1024, n))
PY
