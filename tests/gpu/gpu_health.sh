#!/usr/bin/env bash
# gpu_health.sh - on a GPU machine (the device tool): the gpu family
# (issue 18) against nvidia-smi, PyTorch and an injected Xid.
#
# Run from the repository root as root: bash tests/gpu/gpu_health.sh [BIN_DIR]
# (BIN_DIR holds gpurecd and gpurec).  Results go to stdout and $OUT.
#
#   1. The sampling cost: gpurecd with the gpu family alone, at 1000 ms
#      and at 100 ms, COST_S seconds each: its CPU time over wall time,
#      each thread's, and NVML's own time per GPU per sample (the rows'
#      sample_ns).  COST_ONLY=1 stops there.
#   2. gpurecd (every family, --gpu-sample-ms 500) and nvidia-smi -lms 500
#      over the same window while tests/gpu/gpu_work.py works WORK_S s,
#      then spins SPIN_S s (utilization stays high, launches fall ~3x);
#      an Xid line naming the workload is written to /dev/kmsg meanwhile.
#   3. gpu_compare.py pairs each gpu row with nvidia-smi's nearest sample
#      and checks the tolerances; the Xid is in gpu_event once; the
#      reports gpu-health, xid and gpu-util.
set -uo pipefail
BIN=${1:-carry/gpu}
OUT=${OUT:-/tmp/gr-out}
WORK_S=${WORK_S:-180}
SPIN_S=${SPIN_S:-120}
COST_S=${COST_S:-20}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-gpu.XXXXXX)
say() { echo "$*" | tee -a "$OUT/gpu_health.txt"; }
: >"$OUT/gpu_health.txt"
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
say "devices: $(grep -i nvidia /proc/devices | tr '\n' ' ')"
say "nodes: $(ls /dev/nvidia* 2>/dev/null | tr '\n' ' ')"

start() { # DIR LOG ARGS...: gpurecd, pid in $dpid, waits for ready
	local dir=$1 log=$2; shift 2
	"$BIN/gpurecd" --data "$dir" --config /dev/null "$@" >"$log" 2>&1 &
	dpid=$!
	for _ in $(seq 600); do grep -q "gpurecd: ready" "$log" && break; sleep 0.05; done
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Each thread's CPU ns (schedstat), as "comm=ns" lines.
thread_ns() { for t in /proc/"$1"/task/*; do echo "$(cat "$t/comm")=$(cut -d' ' -f1 "$t/schedstat")"; done | sort; }

# 1. The sampling cost.
for ms in 1000 100; do
	start "$W/cost$ms" "$OUT/gpurecd-cost$ms.log" --no-cuda --no-sched \
		--no-io --gpu-sample-ms "$ms"
	sleep 2
	c0=$(cpu_ticks "$dpid"); t0=$(date +%s%N); thread_ns "$dpid" >"$W/th0"
	sleep "$COST_S"
	c1=$(cpu_ticks "$dpid"); t1=$(date +%s%N); thread_ns "$dpid" >"$W/th1"
	say "  per thread, % of a core: $(join -t= "$W/th0" "$W/th1" | awk -F= -v ns=$((t1 - t0)) '{ printf "%s %.3f  ", $1, 100 * ($3 - $2) / ns }')"
	kill -TERM "$dpid"; wait "$dpid"
	hz=$(getconf CLK_TCK)
	pct=$(awk -v c=$((c1 - c0)) -v hz="$hz" -v ns=$((t1 - t0)) \
		'BEGIN { printf "%.3f", 100 * c / hz / (ns / 1e9) }')
	row=$("$BIN/gpurec" --data "$W/cost$ms" --format csv sql \
		"SELECT count(*), count(DISTINCT gpu), round(avg(sample_ns) / 1e3), round(max(sample_ns) / 1e3) FROM gpu" | tail -1)
	say "cost at ${ms} ms: gpurecd CPU ${pct} % of a core; gpu rows, GPUs, NVML us per GPU per sample avg, max: $row"
done

[ "${COST_ONLY:-0}" = 1 ] && { chattr -R -i "$W" 2>/dev/null; rm -rf "$W"; exit 0; }

# 2. The comparison run.
start "$W/data" "$OUT/gpurecd.log" --gpu-sample-ms 500
grep "gpu:" "$OUT/gpurecd.log" | tee -a "$OUT/gpu_health.txt"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,power.draw,clocks.sm,temperature.gpu \
	--format=csv,noheader,nounits -lms 500 >"$OUT/smi.csv" 2>&1 & smi=$!
python3 tests/gpu/gpu_work.py "$WORK_S" "$SPIN_S" >"$OUT/work.jsonl" 2>"$OUT/work.err" & wp=$!
sleep 30
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
short=$(echo "$bus" | awk -F: '{ printf "%s:%s:%s", substr($1, length($1) - 3), tolower($2), tolower(substr($3, 1, 2)) }')
echo "NVRM: Xid (PCI:$short): 13, pid=$wp, name=python3, Graphics Exception: injected by gpurec tests/gpu/gpu_health.sh" >/dev/kmsg
say "injected Xid 13 for $short naming pid $wp at $(date -u +%FT%T.%NZ)"
wait "$wp"; kill "$smi"; wait "$smi" 2>/dev/null
sleep 3 # the Xid's wait for its NVML half, and a flush
kill -TERM "$dpid"; wait "$dpid"
tail -3 "$OUT/gpurecd.log" | tee -a "$OUT/gpu_health.txt"

q() { "$BIN/gpurec" --data "$W/data" --format csv "$@"; }
q sql "SELECT ts, gpu, util_gpu, mem_used, power_mw, sm_clock, temp_c, throttle FROM gpu ORDER BY ts" >"$OUT/gpu.csv"
q sql "SELECT ts, pid, comm, gpu, mem_used, sm_util, mem_util FROM gpu_process ORDER BY ts" >"$OUT/gpu_process.csv"
q sql "SELECT * FROM gpu_event ORDER BY ts" >"$OUT/gpu_event.csv"
python3 tests/gpu/gpu_compare.py "$OUT" "$wp" | tee -a "$OUT/gpu_health.txt"
say "xid rows for the injected line: $(q sql "SELECT count(*) FROM gpu_event WHERE kind = 'xid' AND text LIKE '%injected by gpurec%'" | tail -1)"
q sql "SELECT xid, source, pid, comm, meaning, action FROM gpu_event WHERE kind = 'xid'" | tee -a "$OUT/gpu_health.txt"
for r in gpu-health xid gpu-util; do
	say "== report $r"
	"$BIN/gpurec" --data "$W/data" report "$r" 2>&1 | tee -a "$OUT/gpu_health.txt"
done
say "cuInit calls recorded (PyTorch's driver initialization, hooked): $(q sql "SELECT count(*), count(DISTINCT pid), max(dur) FROM cuda_api WHERE api = 'cuInit'" | tail -1)"
say "drops: $(q sql "SELECT group_concat(source || '=' || count) FROM drops" | tail -1)"
chattr -R -i "$W" 2>/dev/null; rm -rf "$W"
