#!/usr/bin/env bash
# stop.sh - gpurecd stops in seconds however many uprobes it holds, and
# its probes record the same whichever kind of link holds them: a uprobe
# session, multi-uprobe links or single uprobes (root, eBPF;
# recorder/ulink.c).
#
# Removing a uprobe costs the kernel a synchronization of 60-200 ms per
# link; gpurecd used to hold a link per probe, and 732 probes took ~107 s
# to stop.  Here copies of the mock libcuda, each its own inode and so its
# own file to gpurecd, bring more than 1,000 probes: SIGTERM must end
# gpurecd, sealed, within STOP_MAX_S (the goal of issue 17: 2 s), and
# kill -9 must let the kernel reap it within KILL_MAX_S.  Then the same
# program's calls are recorded with each kind of link (GPURECD_UPROBE_
# SESSION=0 gives what a kernel of 6.6 to 6.12 gets, GPURECD_UPROBE_MULTI=0
# what one before 6.6 gets): the rows must be the same.
set -uo pipefail
SUITE=stop
. "$(dirname "$0")/lib.sh"

M=build/cuda-tests/mock
[ -x build/cuda-tests/drv_calls ] || { bad "drv_calls" "not built: run make bpf-test"; finish; exit 1; }
NCOPIES=${NCOPIES:-24}
STOP_MAX_S=${STOP_MAX_S:-2}
KILL_MAX_S=${KILL_MAX_S:-2}

copies=()
for i in $(seq -w "$NCOPIES"); do
	mkdir -p "$T/lib$i"
	cp "$M/libcuda.so.1" "$T/lib$i/"
	copies+=(--cuda-lib "$T/lib$i/libcuda.so.1")
done

# Milliseconds since the epoch.
ms() { echo $(($(date +%s%N) / 1000000)); }
# The probes gpurecd's log says it attached.
probes() { sed -n 's/.*: attached \([0-9]*\) probes .*/\1/p' "$1" | awk '{s += $1} END {print s + 0}'; }

# (1) SIGTERM with more than 1,000 probes.
start_gpurecd "${copies[@]}"
n=$(probes "$T/gpurecd.log")
[ "$n" -ge 1000 ] && ok "more than 1,000 probes attached ($n)" || bad "probes attached" "$n < 1000"
grep -q "probes attach as one uprobe-session link per file" "$T/gpurecd.log" && ok "uprobe-session links in use" || bad "session links" "$(head -5 "$T/gpurecd.log")"
t0=$(ms); kill -TERM "$dpid"; wait "$dpid"; rc=$?; t1=$(ms); dpid=
eq "gpurecd exits 0 on SIGTERM" "$rc" 0
took=$((t1 - t0))
echo "# SIGTERM -> exit with $n probes: $took ms"
[ "$took" -le $((STOP_MAX_S * 1000)) ] && ok "SIGTERM -> exit in $took ms <= ${STOP_MAX_S} s" || bad "stop time" "$took ms > ${STOP_MAX_S} s"
m=$(sed -n 's/.*cuda: detaching [0-9]* links (\([0-9]*\) probes).*/\1/p' "$T/gpurecd.log")
[ "${m:-0}" -ge 1000 ] && ok "the detach is logged with its count ($m probes)" || bad "detach log" "$(tail -3 "$T/gpurecd.log")"
grep -q "cuda: detached in [0-9.]* s" "$T/gpurecd.log" && ok "the detach is logged with its time" || bad "detach time log" "$(tail -3 "$T/gpurecd.log")"
"$GPUREC" --data "$D" verify >"$T/verify.out" 2>&1 && ok "the recording verifies (sealed)" || bad "verify" "$(head -3 "$T/verify.out")"

# (2) kill -9: the kernel closes the links as the process exits.  (Each
# run records into a data directory of its own: sealed segments are
# immutable.)
D=$T/data.kill
start_gpurecd "${copies[@]}"
t0=$(ms); kill -KILL "$dpid"; wait "$dpid" 2>/dev/null; t1=$(ms); dpid=
took=$((t1 - t0))
echo "# kill -9 -> reaped with $(probes "$T/gpurecd.log") probes: $took ms"
[ "$took" -le $((KILL_MAX_S * 1000)) ] && ok "kill -9 -> reaped in $took ms <= ${KILL_MAX_S} s" || bad "reap time" "$took ms > ${KILL_MAX_S} s"

# (3) The same calls through each kind of link.
calls() { # NAME VAR=VALUE: drv_calls under a fresh gpurecd; rows in $T/rows.NAME
	D=$T/data.$1
	export "${2?}"
	start_gpurecd --cuda-lib "$M/libcuda.so.1" --cuda-lib "$M/libcudart.so.13"
	unset "${2%%=*}"
	touch "$T/go"
	build/cuda-tests/drv_calls "$T/go" >"$T/calls.out" 2>&1 & local p=$!
	wait $p
	sleep 0.3
	stop_gpurecd
	"$GPUREC" --data "$D" --format csv sql "SELECT api, count(*), sum(ret) FROM cuda_api WHERE pid = $p GROUP BY api ORDER BY api" | tr -d '\r' | tail -n +2 >"$T/rows.$1"
}
calls session GPURECD_UPROBE_SESSION=1
grep -q "probes attach as one uprobe-session link per file" "$T/gpurecd.log" && ok "(session) session links in use" || bad "(session) links" "$(head -5 "$T/gpurecd.log")"
calls multi GPURECD_UPROBE_SESSION=0
grep -q "probes attach as one multi-uprobe link per file and direction" "$T/gpurecd.log" && ok "(multi) multi links in use" || bad "(multi) links" "$(head -5 "$T/gpurecd.log")"
calls single GPURECD_UPROBE_MULTI=0
grep -q "probes attach as one uprobe link per probe" "$T/gpurecd.log" && ok "(single) single links in use" || bad "(single) links" "$(head -5 "$T/gpurecd.log")"
session=$(tr '\n' ' ' <"$T/rows.session")
multi=$(tr '\n' ' ' <"$T/rows.multi")
single=$(tr '\n' ' ' <"$T/rows.single")
n=$(wc -l <"$T/rows.session")
[ "$n" -ge 10 ] && ok "(session) the program's calls are recorded ($n api rows)" || bad "(session) rows" "[$session]"
eq "multi links record the same calls as a session" "$multi" "$session"
eq "single links record the same calls as a session" "$single" "$session"

finish
