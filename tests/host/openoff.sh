#!/usr/bin/env bash
# openoff.sh - an off-CPU interval that has not ended is recorded (root,
# eBPF): a thread stuck in state D (a process hung in the driver) shows in
# `offcpu` while it is stuck and when gpurecd stops, and once it comes back
# its interval's pieces are contiguous and sum to it (recorder/sched/sched.c,
# gr_sched__walk; docs/recorder.md, "offcpu and runq").
#
# build/host-tests/host_load vfork 7000 (tests/host/host_load.c): the
# child sleeps 7 s in the nanosleep system call, while the parent waits in
# vfork, killable (D), and prints how long vfork took.  gpurecd traces it
# with --sched-all (no CUDA call needed) and walks the threads every 5 s;
# its --verbose log says when.
#
# 1. host_load starts 4 s after a walk, so that the walk 6 s into its wait
#    writes the first piece: the recording shows it at 6.5 s, while the
#    parent is stuck; once it is back, its pieces chain (each ts = the one
#    before's ts + dur), their dur sums to what host_load measured (+-50
#    ms), and `gpurec report offcpu-top` lists it.
# 2. Another one, and SIGTERM 6 s into its wait: the last flush writes it.
#
# Root and BPF are required: this suite fails, never skips, without them.
# shellcheck disable=SC2154 # lib.sh's variables
set -uo pipefail
SUITE=openoff
cant() { echo "FAIL $SUITE tests cannot run: $1"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
[ "$(id -u)" = 0 ] || cant "not root"
[ -e /sys/kernel/btf/vmlinux ] || cant "no kernel BTF"
. "$(dirname "$0")/../cuda/lib.sh"
skip() { tail -20 "$T/gpurecd.log" 2>/dev/null; cant "$1"; }

HL=build/host-tests/host_load
[ -x "$HL" ] || cant "$HL not built: run make bpf-test"

walks() { grep -c "sched: walked" "$T/gpurecd.log"; }
# Waits (up to 12 s) for a walk after the N-th.
wait_walk() {
	for _ in $(seq 120); do
		[ "$(walks)" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# rows TID: the offcpu rows of TID, in order.
rows() { q "SELECT ts, dur, state, waker_tid FROM offcpu WHERE tid = $1 ORDER BY ts"; }
# vf TID: TID's rows in vfork.  Before it vforks, host_load may wait a
# moment in D too (loading its pages on a busy host: a 1.5 ms row in a CI
# run), which is recorded like any wait; the checks below are on the
# vfork wait, and those others must be brief.
vf() { echo "tid = $1 AND stack LIKE '%vfork%'"; }
brief() { # NAME TID: TID's rows not in vfork are under 100 ms
	eqd "$1: any other wait of the parent's is brief (< 100 ms)" \
		"$(q "SELECT count(*) FROM offcpu WHERE tid = $2 AND NOT coalesce(stack LIKE '%vfork%', 0) AND dur >= 100000000")" "0 " "$2"
}

start_gpurecd --sched-all --no-cuda --verbose

# ---- 1: written while stuck, then the rest when it is back ----------------
wait_walk 0 || bad "the threads are walked" "no 'sched: walked' line in 12 s"
wait_walk "$(walks)" || bad "the threads are walked every 5 s" "no second walk in 12 s"
sleep 4
"$HL" -n vfork 7000 >"$T/v1.out" 2>"$T/v1.err" & v1=$!
sleep 6.5
eqd() { eq "$1" "$2" "$3"; [ "$2" == "$3" ] || { echo "    | $(rows "$4")"; grep "sched: walked" "$T/gpurecd.log" | tail -4 | sed 's/^/    | /'; }; }
eqd "(stuck) at 6.5 s: an offcpu row for the vfork parent, its stack in vfork, state D, >= 5 s" \
	"$(q "SELECT count(*), sum(state = 'D'), max(dur) >= 5000000000, min(comm) FROM offcpu WHERE $(vf $v1)")" \
	"1,1,1,host_load " "$v1"
eqd "(stuck) the row has no waker (nothing woke it yet)" \
	"$(q "SELECT count(*) FROM offcpu WHERE $(vf $v1) AND waker_tid IS NULL")" "1 " "$v1"
wait $v1; rc=$?
eq "(back) host_load vfork 7000 exits 0" "$rc $(cat "$T/v1.err")" "0 "
waited=$(awk '$1 == "waited" { print $2 }' "$T/v1.out")
child=$(awk '$1 == "child" { print $2 }' "$T/v1.out")
sleep 0.5
eqd "(back) 2 pieces in vfork: the walk's, then the rest, woken by the child" \
	"$(q "SELECT count(*), sum(state = 'D'), max(waker_tid) FROM offcpu WHERE $(vf $v1)")" \
	"2,2,$child " "$v1"
eqd "(back) the pieces are contiguous: each starts where the one before ended" \
	"$(q "SELECT count(*) FROM offcpu a JOIN offcpu b ON b.tid = a.tid AND b.ts > a.ts WHERE a.tid = $v1 AND a.stack LIKE '%vfork%' AND b.stack LIKE '%vfork%' AND b.ts = (SELECT min(ts) FROM offcpu WHERE $(vf $v1) AND ts > a.ts) AND b.ts = a.ts + a.dur")" \
	"1 " "$v1"
eqd "(back) they sum to the wait host_load measured ($waited ns), +-50 ms, and span it once" \
	"$(q "SELECT abs(sum(dur) - $waited) <= 50000000, sum(dur) = max(ts + dur) - min(ts) FROM offcpu WHERE $(vf $v1)")" \
	"1,1 " "$v1"
brief "(back)" "$v1"

# ---- 2: stuck when gpurecd stops -----------------------------------------
"$HL" -n vfork 7000 >"$T/v2.out" 2>"$T/v2.err" & v2=$!
sleep 6
stop_gpurecd
kill -0 $v2 2>/dev/null; eq "(stop) the vfork parent was still waiting when gpurecd stopped" $? 0
wait $v2
eqd "(stop) the last flush wrote it: its stack in vfork, state D, 5.5 s or more, no waker" \
	"$(q "SELECT count(*) >= 1, sum(state = 'D') = count(*), sum(dur) >= 5500000000, max(dur) >= 5000000000, count(waker_tid) FROM offcpu WHERE $(vf $v2)")" \
	"1,1,1,1,0 " "$v2"
eqd "(stop) its pieces are contiguous" \
	"$(q "SELECT sum(dur) = max(ts + dur) - min(ts) FROM offcpu WHERE $(vf $v2)")" "1 " "$v2"
brief "(stop)" "$v2"

# The report over the first one: its total, the walk's piece and the rest
# (a brief wait of the shell it was forked from, before its exec, may
# list too, under the shell's comm).
eq "(report) offcpu-top lists the first parent: host_load, D, >= 6.9 s" \
	"$("$GPUREC" --data "$D" --pid "$v1" --format csv report offcpu-top 2>&1 | tr -d '\r' |
		awk -F, -v t="$v1" '$2 == t && $3 == "host_load" { print $3 "," $4 "," ($6 >= 6900000000) }')" \
	"host_load,D,1"
eq "(walks) the walk's cost is logged" \
	"$(grep -c "sched: walked [0-9]* threads in [0-9]* us" "$T/gpurecd.log" | awk '{ print ($1 >= 3) }')" 1
grep "sched: walked" "$T/gpurecd.log" | awk '{ n++; us += $7; if ($7 > m) m = $7 } END { printf "     %d walks, mean %.0f us, max %d us\n", n, us / n, m }'
"$GPUREC" --data "$D" verify >/dev/null 2>&1; eq "the recording verifies" $? 0
finish
