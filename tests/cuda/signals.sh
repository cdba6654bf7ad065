#!/usr/bin/env bash
# signals.sh - SIGTERM or SIGINT at any moment stops gpurecd, sealed,
# within seconds, and a second signal during the stop is harmless (root,
# eBPF).
#
# TRIALS times: gpurecd starts while two loops exec a program that maps
# the mock CUDA libraries (each exec is a process to scan and maybe
# attach to).  Once gpurecd's first log line is out (its main has begun:
# before that the dynamic loader and, in the test build, the sanitizer
# runtime are still starting, and a signal takes its default action), a
# random delay of 0 to 1.5 s lands the signal in start-up, attach, the
# first scan or the running loop; a third of the trials send a second
# signal 20 ms later.  Every run must exit 0 within STOP_MAX_S of the
# first signal, and its recording must verify.
set -uo pipefail
SUITE=signals
. "$(dirname "$0")/lib.sh"

M=build/cuda-tests/mock
[ -x build/cuda-tests/drv_calls ] || { bad "drv_calls" "not built: run make bpf-test"; finish; exit 1; }
TRIALS=${TRIALS:-100}
STOP_MAX_S=${STOP_MAX_S:-2}

touch "$T/go"
storm() { while :; do build/cuda-tests/drv_calls "$T/go" >/dev/null 2>&1; done; }
storm & s1=$!
storm & s2=$!
ms() { echo $(($(date +%s%N) / 1000000)); }

late=0 unsealed=0 badrc=0 worst=0 phases=""
for i in $(seq "$TRIALS"); do
	D=$T/data.$i
	"$GPURECD" --data "$D" --flush-interval 100 --config /dev/null \
		--cuda-lib "$M/libcuda.so.1" --cuda-lib "$M/libcudart.so.13" \
		>"$T/log.$i" 2>&1 &
	dpid=$!
	for _ in $(seq 200); do [ -s "$T/log.$i" ] && break; sleep 0.01; done
	r=$((RANDOM % 1500)); sleep "$((r / 1000)).$(printf %03d $((r % 1000)))"
	sig=TERM; [ $((RANDOM % 2)) = 0 ] && sig=INT
	phase=running; grep -q "gpurecd: ready" "$T/log.$i" || phase=start-up
	t0=$(ms)
	kill -$sig "$dpid" 2>/dev/null
	[ $((RANDOM % 3)) = 0 ] && { sleep 0.02; kill -$sig "$dpid" 2>/dev/null; }
	while kill -0 "$dpid" 2>/dev/null && [ $(($(ms) - t0)) -lt 15000 ]; do sleep 0.01; done
	took=$(($(ms) - t0))
	if kill -0 "$dpid" 2>/dev/null; then kill -KILL "$dpid"; fi
	wait "$dpid"; rc=$?; dpid=
	[ "$took" -gt "$worst" ] && worst=$took
	phases="$phases $phase"
	if [ "$took" -gt $((STOP_MAX_S * 1000)) ]; then
		late=$((late + 1)); echo "  trial $i ($sig in $phase): $took ms"
	fi
	if [ "$rc" != 0 ]; then
		badrc=$((badrc + 1)); echo "  trial $i ($sig in $phase): exit $rc: $(tail -2 "$T/log.$i")"
	fi
	if ! "$GPUREC" --data "$D" verify >"$T/verify.$i" 2>&1; then
		unsealed=$((unsealed + 1)); echo "  trial $i ($sig in $phase): $(head -2 "$T/verify.$i")"
	fi
done
kill "$s1" "$s2" 2>/dev/null; wait "$s1" "$s2" 2>/dev/null
n_start=$(echo "$phases" | tr ' ' '\n' | grep -c start-up)
echo "# signals: $TRIALS trials ($n_start in start-up), slowest stop $worst ms"
[ "$n_start" -gt 0 ] && [ "$n_start" -lt "$TRIALS" ] && ok "signals landed both in start-up ($n_start) and while running" || bad "phases" "$n_start of $TRIALS in start-up"
eq "every run stopped within ${STOP_MAX_S} s (slowest $worst ms)" "$late" 0
eq "every run exited 0" "$badrc" 0
eq "every recording verifies (sealed)" "$unsealed" 0
finish
