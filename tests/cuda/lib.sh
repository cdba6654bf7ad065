# lib.sh - what the root eBPF test scripts share (sourced, not run).
#
# Sets GPUREC, GPURECD, T (a scratch directory removed on exit) and D (the
# data directory inside it); gives ok/bad/eq to count checks, skip (a
# failure under CI=true), start_gpurecd/stop_gpurecd, q (a query's rows
# on one line, csv without the header) and tests/wait.sh's waits.
. "$(dirname "${BASH_SOURCE[0]}")/../wait.sh"
GPUREC=${GPUREC:-build/gpurec}
GPURECD=${GPURECD:-build/gpurecd}
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
skip() {
	if [ "${CI:-}" = true ]; then echo "FAIL ${SUITE:-bpf} tests cannot run in CI: $1"; echo "0 passed, 1 failed, 0 skipped"; exit 1; fi
	echo "skip ${SUITE:-bpf} tests: $1"; echo "0 passed, 0 failed, 1 skipped"; exit 0
}
finish() { echo "$pass passed, $fail failed, $skipped skipped"; [ "$fail" -eq 0 ]; }

[ "$(id -u)" = 0 ] || skip "not root"
[ -e /sys/kernel/btf/vmlinux ] || skip "no kernel BTF"

T=$(mktemp -d /tmp/gpurec-test.XXXXXX)
D="$T/data"
dpid=
# A tracer's tracee first: strace detaches on SIGTERM and leaves its
# gpurecd running.
cleanup() {
	for p in $dpid $(jobs -p); do
		pkill -TERM -P "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	chattr -R -i "$T" 2>/dev/null; rm -rf "$T"
}
[ -n "${KEEP:-}" ] || trap cleanup EXIT

# start_gpurecd ARGS...: starts gpurecd on $D, logging to $T/gpurecd.log,
# and waits until it is ready: skips if it exits first (it cannot start),
# fails if it is still not ready after 60 s scaled to the load.
start_gpurecd() {
	"$GPURECD" --data "$D" --flush-interval 100 --config /dev/null "$@" >"$T/gpurecd.log" 2>&1 &
	dpid=$!
	wait_ready "$T/gpurecd.log" "$dpid" 60
	case $? in
	1) cat "$T/gpurecd.log"; skip "gpurecd did not start (BPF unavailable?)" ;;
	2) cat "$T/gpurecd.log"
	   bad "gpurecd ready" "still starting after $WAITED"; finish; exit 1 ;;
	esac
}

# stop_gpurecd: SIGTERM, and check it exits 0 after sealing.
stop_gpurecd() {
	kill -TERM "$dpid"; wait "$dpid"; local rc=$?; dpid=
	eq "gpurecd exits 0 on SIGTERM" "$rc" 0
}

q() { "$GPUREC" --data "$D" --format csv sql "$1" | tr -d '\r' | tail -n +2 | tr '\n' ' '; }
