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
# a scratch directory that is kept, so that the commands the demo ends
# with can be tried on it; the last lines say where it is and how to
# remove it (CLEAN=1 removes it at the end instead).  Off a terminal the
# output has no escape codes (a log, a CI job); NO_COLOR=1 drops them on
# one too.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/wait.sh

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
G="build/gpurec --data $D"
# Sealed segments are immutable (chattr +i): a plain rm -rf fails on them.
RM="chattr -R -i $T; rm -rf $T"
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	rm -rf "$W"
	if [ "${CLEAN:-}" = 1 ]; then
		chattr -R -i "$T" 2>/dev/null || true
		rm -rf "$T"
	fi
}
trap cleanup EXIT
# Bold titles on a terminal only: escape codes off one would land raw in
# whatever reads the output.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
else
	say() { printf '\n%s\n' "$*"; }
fi
# sql TITLE SQL: prints the title and the query, then its rows as a table.
sql() {
	say "# $1"
	printf '$ gpurec sql "%s"\n' "$2"
	$G --format table sql "$2"
}
# run TITLE ARGS...: prints the title and the gpurec command, then runs it.
# Reports print a table, as they do on a terminal: the demo's output may
# be a pipe, where gpurec's default is csv.
run() {
	say "# $1"
	shift
	echo "\$ gpurec $*"
	case $1 in
	report) $G --format table "$@" ;;
	*) $G "$@" ;;
	esac
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
# Attaching its probes takes seconds, more on a loaded machine.
if ! wait_ready "$T/gpurecd.log" "$dpid" 15; then
	cat "$T/gpurecd.log" >&2
	echo "demo: gpurecd did not start (log above; waited up to ${WAITED:-})" >&2
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

echo
echo "(gpurec below is build/gpurec --data $D)"
sql "CUDA calls by program and API, with the error each returned; call_p50_us is host time in the call (for launches and async copies the enqueue, not the GPU's work)" \
	"SELECT comm, api, count(*) AS calls, ret, cuda_error_name(api, ret) AS error, round(median(dur) / 1e3, 1) AS call_p50_us FROM cuda_api GROUP BY comm, api, ret ORDER BY calls DESC LIMIT 10"

sql "Top kernels; launch_*_us is host time in the launch call, not the kernel's run on the GPU" \
	"SELECT kernel, count(*) AS launches, grid_x, block_x, round(median(dur) / 1e3, 1) AS launch_p50_us, round(percentile(dur, 99) / 1e3, 1) AS launch_p99_us FROM cuda_kernel GROUP BY kernel ORDER BY launches DESC LIMIT 5"

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

run "A canned report: the CUDA API summary (times are host time in the call)" \
	report cuda-api-sum
run "Failing CUDA calls, each code with its name" report cuda-errors
run "The recording and the recorder: segments, span, disk, events, drops" status
run "Every block checksum and the segment hash chain" verify
run "A Perfetto trace of it, for ui.perfetto.dev (load the file there)" \
	export --format perfetto -o "$T/demo.perfetto.json"
echo "wrote $T/demo.perfetto.json ($(du -h "$T/demo.perfetto.json" | cut -f1))"

say "# Try next (as root: the recording is root's)"
cat <<EOF
  G="$G"
  \$G report list                      # every report and its parameters
  \$G report offcpu-top                # threads by off-CPU time, top stacks
  \$G report io-latency                # block and file I/O latency
  \$G schema cuda_kernel               # a table's columns, their meaning
  \$G sql "SELECT api, count(*) FROM cuda_api GROUP BY api"
  \$G export --format sqlite -o $T/demo.sqlite   # for sqlite3, DuckDB
man gpurec; docs/reports.md and docs/schema.md have the rest.
EOF
echo
if [ "${CLEAN:-}" = 1 ]; then
	echo "The recording in $D is removed now (CLEAN=1)."
else
	echo "The recording is kept in $D ($(du -sh "$D" | cut -f1))."
	echo "Remove it with: $RM"
fi
