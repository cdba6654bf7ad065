# lib.sh - what the root eBPF test scripts share (sourced, not run).
#
# Sets GPUREC, GPURECD, T (a scratch directory removed on exit) and D (the
# data directory inside it); gives ok/bad/eq to count checks, skip (a
# failure under CI=true), start_gpurecd/stop_gpurecd and q (a query's rows
# on one line, csv without the header).
GPUREC=${GPUREC:-build/gpurec}
GPURECD=${GPURECD:-build/gpurecd}
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
skip() {
	if [ "${CI:-}" = true ]; then echo "FAIL ${SUITE:-bpf} tests cannot run in CI: $1"; echo "0 passed, 1 failed"; exit 1; fi
	echo "skip ${SUITE:-bpf} tests: $1"; echo "0 passed, 0 failed, 1 skipped"; exit 0
}
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; }

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
# and waits until it is ready (skips if it cannot start).
start_gpurecd() {
	"$GPURECD" --data "$D" --flush-interval 100 --config /dev/null "$@" >"$T/gpurecd.log" 2>&1 &
	dpid=$!
	# Up to 90 s while it lives: a loaded 2-core host has taken over 10 s.
	for _ in $(seq 900); do
		grep -q "gpurecd: ready" "$T/gpurecd.log" && break
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "gpurecd: ready" "$T/gpurecd.log" || { cat "$T/gpurecd.log"; skip "gpurecd did not start (BPF unavailable?)"; }
}

# stop_gpurecd: SIGTERM, and check it exits 0 after sealing.
stop_gpurecd() {
	kill -TERM "$dpid"; wait "$dpid"; local rc=$?; dpid=
	eq "gpurecd exits 0 on SIGTERM" "$rc" 0
}

q() { "$GPUREC" --data "$D" --format csv sql "$1" | tr -d '\r' | tail -n +2 | tr '\n' ' '; }
