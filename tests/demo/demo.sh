#!/usr/bin/env bash
# demo.sh - the live demo (make demo, as root): gpurecd records this machine
# for a few seconds while a CUDA program and a host workload run, then
# gpurec answers the questions an SRE asks afterwards: which kernels, where
# the threads waited off-CPU and why, how long the run queue and the disk
# made them wait, which files, which processes.
#
# The workload: build/demo/demo_cuda (tests/demo/demo.cu, built by make
# where nvcc is; without a GPU its calls fail fast but are recorded) and
# build/host-tests/host_load mix (tests/host/host_load.c: one CUDA call,
# then threads that sleep, wake each other through a pipe, fight over a
# lock and a CPU, and do direct and buffered I/O).  gpurecd traces the
# host context of processes that made a CUDA call.  The recording goes to
# a scratch directory, removed at the end unless KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(id -u)" != 0 ]; then
	echo "demo: must run as root (sudo make demo): gpurecd loads eBPF programs" >&2
	exit 1
fi
for f in build/gpurecd build/gpurec build/host-tests/host_load; do
	[ -x "$f" ] || { echo "demo: $f is not built: run make demo" >&2; exit 1; }
done
CUDART=/usr/local/cuda/lib64/libcudart.so.13
SECS=${DEMO_SECS:-4}

T=$(mktemp -d /tmp/gpurec-demo.XXXXXX)
W=$(mktemp -d /var/tmp/gpurec-demo-io.XXXXXX) # on a disk, whatever /tmp is
D=$T/data
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	rm -rf "$W"
	if [ -n "${KEEP:-}" ]; then
		echo "The recording is kept in $D"
	else
		chattr -R -i "$T" 2>/dev/null || true
		rm -rf "$T"
	fi
}
trap cleanup EXIT
say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
# sql TITLE SQL: prints the title and the query, then its rows as a table.
sql() {
	say "# $1"
	printf '$ gpurec sql "%s"\n' "$2"
	build/gpurec --data "$D" --format table sql "$2"
}

# Without the toolkit's libcudart nothing here can make a CUDA call: trace
# every process instead.
opts=() hl_opts=()
if [ ! -e "$CUDART" ]; then
	echo "demo: no $CUDART: recording every process (--sched-all)"
	opts=(--sched-all) hl_opts=(-n)
fi

echo "Starting build/gpurecd --data $D ..."
build/gpurecd --data "$D" --config /dev/null --flush-interval 200 "${opts[@]}" \
	>"$T/gpurecd.log" 2>&1 &
dpid=$!
for _ in $(seq 150); do
	grep -q "gpurecd: ready" "$T/gpurecd.log" && break
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "gpurecd: ready" "$T/gpurecd.log"; then
	cat "$T/gpurecd.log" >&2
	echo "demo: gpurecd did not start (log above)" >&2
	exit 1
fi
sed 's/^/  | /' "$T/gpurecd.log"

echo "Running the workload for ${SECS} s:"
pids=()
if [ -x build/demo/demo_cuda ]; then
	echo "  build/demo/demo_cuda 400     (13 kernel launches, a copy and a sync per step)"
	build/demo/demo_cuda 400 >"$T/cuda.out" 2>&1 &
	pids+=($!)
else
	echo "  (no nvcc at ${NVCC:-/usr/local/cuda/bin/nvcc}: no CUDA program, so no kernels)"
fi
echo "  build/host-tests/host_load ${hl_opts[*]} mix $SECS $W"
build/host-tests/host_load "${hl_opts[@]}" mix "$SECS" "$W" >"$T/host.out" 2>&1 &
pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
cat "$T"/*.out | sed 's/^/  | /'
[ $rc = 0 ] || { echo "demo: the workload failed (exit $rc)" >&2; exit 1; }
sleep 0.5
kill -TERM "$dpid"
wait "$dpid" || { cat "$T/gpurecd.log" >&2; echo "demo: gpurecd failed" >&2; exit 1; }
dpid=

sql "What was recorded: events per table" \
	"SELECT 'cuda_api' AS tbl, count(*) AS events FROM cuda_api UNION ALL SELECT 'cuda_kernel', count(*) FROM cuda_kernel UNION ALL SELECT 'offcpu', count(*) FROM offcpu UNION ALL SELECT 'runq', count(*) FROM runq UNION ALL SELECT 'block_io', count(*) FROM block_io UNION ALL SELECT 'file_io', count(*) FROM file_io UNION ALL SELECT 'process', count(*) FROM process UNION ALL SELECT 'drops', count(*) FROM drops"

sql "CUDA calls by program and API" \
	"SELECT comm, api, count(*) AS calls, ret, round(median(dur) / 1e3, 1) AS p50_us FROM cuda_api GROUP BY comm, api, ret ORDER BY calls DESC LIMIT 10"

sql "Top kernels" \
	"SELECT kernel, count(*) AS launches, grid_x, block_x, round(median(dur) / 1e3, 1) AS p50_us, round(percentile(dur, 99) / 1e3, 1) AS p99_us FROM cuda_kernel GROUP BY kernel ORDER BY launches DESC LIMIT 5"

sql "Off-CPU time by thread and state (S sleep, D uninterruptible)" \
	"SELECT comm, state, count(*) AS n, round(sum(dur) / 1e6, 1) AS total_ms, round(median(dur) / 1e6, 2) AS p50_ms FROM offcpu GROUP BY comm, state ORDER BY sum(dur) DESC LIMIT 10"

sql "The longest off-CPU interval of each thread, with its stack (leaf end)" \
	"SELECT comm, tid, state, round(dur / 1e6, 1) AS ms, waker_tid, CASE WHEN length(stack) > 100 THEN '...' || substr(stack, -97) ELSE stack END AS stack FROM (SELECT *, row_number() OVER (PARTITION BY tid ORDER BY dur DESC) AS r FROM offcpu) WHERE r = 1 ORDER BY dur DESC LIMIT 10"

sql "Run-queue waits (runnable, not running) by thread name" \
	"SELECT comm, count(*) AS waits, round(median(dur) / 1e3, 1) AS p50_us, round(percentile(dur, 99) / 1e3, 1) AS p99_us, round(sum(dur) / 1e6, 1) AS total_ms FROM runq GROUP BY comm ORDER BY sum(dur) DESC LIMIT 8"

sql "Block I/O latency by device and op (every request on the host)" \
	"SELECT dev, op, count(*) AS n, round(sum(bytes) / 1048576.0, 1) AS MiB, round(median(dur) / 1e3) AS p50_us, round(percentile(dur, 99) / 1e3) AS p99_us FROM block_io GROUP BY dev, op ORDER BY n DESC"

sql "Block I/O by submitting process" \
	"SELECT comm, op, count(*) AS n, round(sum(bytes) / 1048576.0, 1) AS MiB FROM block_io GROUP BY comm, op ORDER BY MiB DESC LIMIT 8"

sql "File I/O: calls of 1 ms or more, and every open" \
	"SELECT comm, syscall, count(*) AS calls, sum(max(bytes, 0)) AS bytes, round(median(dur) / 1e3, 1) AS p50_us, round(max(dur) / 1e3, 1) AS max_us FROM file_io GROUP BY comm, syscall ORDER BY calls DESC LIMIT 10"

sql "Processes: the last snapshot of each (the GPU processes and their ancestors)" \
	"SELECT pid, ppid, comm, CASE WHEN length(cmdline) > 50 THEN substr(cmdline, 1, 47) || '...' ELSE cmdline END AS cmdline, cgroup, round((exit_ts - start_ts) / 1e6) AS ran_ms, exit_code FROM (SELECT *, row_number() OVER (PARTITION BY pid ORDER BY exit_ts IS NULL, ts DESC) AS r FROM process) WHERE r = 1 ORDER BY start_ts"

say "# Every block checksum and the segment hash chain"
echo "$ gpurec verify"
build/gpurec --data "$D" verify
