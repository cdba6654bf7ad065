#!/usr/bin/env bash
# daemon_bench.sh - `make bench`'s daemon.stop_s_1000_probes and
# daemon.kill9_reap_s: how long gpurecd takes to stop (SIGTERM -> exit,
# sealed) and how long the kernel takes to reap it after kill -9, with
# more than 1,000 uprobes attached, for each kind of link it can hold them
# with (recorder/ulink.c), side by side in one run:
#
#   session  one uprobe-session link per file (Linux 6.13; the default
#            where the kernel has it)
#   multi    one multi-uprobe link per file and direction (Linux 6.6;
#            GPURECD_UPROBE_SESSION=0)
#   single   a link per probe, detached from 16 threads (older kernels;
#            GPURECD_UPROBE_MULTI=0).  Before multi links, gpurecd held its
#            probes this way and detached them one by one: ~107 s for 732
#            probes on this VM (issue 17).
#
#   bash bench/daemon_bench.sh GPURECD_BINARY MOCK_DIR      (root)
#
# The probes come from NCOPIES copies of the mock libcuda (MOCK_DIR/
# libcuda.so.1), each its own inode and so its own file to gpurecd.  ROUNDS
# rounds per kind (the median is printed), the kinds in turn within each
# round.  The single kind runs once: it takes minutes.  Exits non-zero with
# a one-line reason if not root or gpurecd does not start or stop cleanly.
set -uo pipefail
GPURECD=${1:?usage: daemon_bench.sh GPURECD MOCK_DIR}
MOCK=${2:?usage: daemon_bench.sh GPURECD MOCK_DIR}
NCOPIES=${NCOPIES:-24}
ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "daemon_bench: needs root (BPF)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/gpurec-daemon-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; chattr -R -i "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
die() { echo "daemon_bench: $*" >&2; exit 1; }

libs=()
for i in $(seq -w "$NCOPIES"); do
	mkdir -p "$tmp/lib$i"
	cp "$MOCK/libcuda.so.1" "$tmp/lib$i/"
	libs+=(--cuda-lib "$tmp/lib$i/libcuda.so.1")
done
ms() { echo $(($(date +%s%N) / 1000000)); }
n=0
# start KIND: gpurecd with the copies attached, ready; sets pid, log
start() {
	n=$((n + 1)); log=$tmp/log.$n
	local how
	case $1 in
	session) how=GPURECD_UPROBE_SESSION=1 ;;
	multi) how=GPURECD_UPROBE_SESSION=0 ;;
	single) how=GPURECD_UPROBE_MULTI=0 ;;
	esac
	env "$how" "$GPURECD" --data "$tmp/d$n" --config /dev/null "${libs[@]}" >"$log" 2>&1 &
	pid=$!
	for _ in $(seq 1200); do
		grep -q "gpurecd: ready" "$log" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	die "gpurecd ($1) did not start: $(tail -2 "$log")"
}
probes() { sed -n 's/.*: attached \([0-9]*\) probes .*/\1/p' "$log" | awk '{s += $1} END {print s + 0}'; }
# stop_s KIND / kill_s KIND: one measurement, in seconds
stop_s() {
	start "$1"; local t0; t0=$(ms)
	kill -TERM "$pid"; wait "$pid"; local rc=$?; local t1; t1=$(ms); pid=
	[ "$rc" = 0 ] || die "gpurecd ($1) exited $rc on SIGTERM"
	echo "$(probes) $(((t1 - t0)))" >>"$tmp/stop.$1"
}
kill_s() {
	start "$1"; local t0; t0=$(ms)
	kill -KILL "$pid"; wait "$pid" 2>/dev/null; local t1; t1=$(ms); pid=
	echo "$(probes) $(((t1 - t0)))" >>"$tmp/kill.$1"
}
for _ in $(seq "$ROUNDS"); do
	for k in session multi; do stop_s $k; kill_s $k; done
done
stop_s single; kill_s single
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for k in session multi single; do
	p=$(awk '{print $1}' "$tmp/stop.$k" | median)
	printf "daemon.stop_s_1000_probes%s %.3f s (%d probes, %d runs)\n" \
		"$([ $k = session ] || echo "_$k")" \
		"$(awk '{print $2 / 1000}' "$tmp/stop.$k" | median)" "$p" \
		"$(wc -l <"$tmp/stop.$k")"
	printf "daemon.kill9_reap_s%s %.3f s (%d probes, %d runs)\n" \
		"$([ $k = session ] || echo "_$k")" \
		"$(awk '{print $2 / 1000}' "$tmp/kill.$k" | median)" "$p" \
		"$(wc -l <"$tmp/kill.$k")"
done
