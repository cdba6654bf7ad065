#!/usr/bin/env bash
# busyday.sh - gpurec-synth --day (bench/synth_day.h, issue 20): every
# table of a busy 8-GPU host written at once, at exact rates: the slotted
# streams' rows per table and per second counted by arithmetic, the copies
# and syncs that follow the launches, the NCCL job's rows from its model,
# the gpu family's samples; two hosts of one job agreeing on the job but
# not on their own streams, with the straggler on the host that has it.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-busyday.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
q() { "$GPUREC" --format csv "$@" | tr -d '\r' | tail -n +2; }

# 20 seconds of host alpha from 2026-11-01T00:00:00Z.
START=1761955200
SECS=20
A="$T/alpha"
synth --data "$A" --day $SECS --seed 7 --host alpha --start "${START}000000000"

# --- the slotted streams: exactly their rate, every second ---------------
# offcpu 2,000/s, runq 20,000/s, file_io 1,000/s, block_io 500/s.
for tr in offcpu:2000 runq:20000 file_io:1000 block_io:500; do
	t=${tr%:*} r=${tr#*:}
	eq "$t: $r a second for $SECS s" \
		"$(q --data "$A" sql "SELECT count(*), count(DISTINCT ts / 1000000000), min(ts) >= ${START}000000000, max(ts) < $((START + SECS))000000000 FROM $t")" \
		"$((r * SECS)),$SECS,1,1"
	eq "$t: no second holds other than $r" \
		"$(q --data "$A" sql "SELECT count(*) FROM (SELECT ts / 1000000000 AS s, count(*) AS n FROM $t GROUP BY s) WHERE n != $r")" \
		"0"
done
eq "offcpu: every interval has a stack, 24 stacks, states S and D" \
	"$(q --data "$A" sql "SELECT count(stack), count(DISTINCT stack), group_concat(DISTINCT state) FROM (SELECT * FROM offcpu ORDER BY state DESC)")" \
	"$((2000 * SECS)),24,\"S,D\""
eq "offcpu: one in five without a waker (timer sleeps)" \
	"$(q --data "$A" sql "SELECT count(*) FROM offcpu WHERE waker_pid IS NULL")" \
	"$((2000 * SECS / 5))"
eq "runq: 8 processes' threads, cpus under 128" \
	"$(q --data "$A" sql "SELECT count(DISTINCT pid), min(cpu) >= 0, max(cpu) < 128, min(dur) >= 2000 FROM runq")" \
	"8,1,1,1"
eq "file_io: reads, writes, opens with a path, fsyncs (12:4:2:1:1)" \
	"$(q --data "$A" sql "SELECT syscall, count(*), count(path) FROM file_io GROUP BY syscall ORDER BY syscall")" \
	"fsync,$((SECS * 50)),0
openat,$((SECS * 50)),$((SECS * 50))
pread64,$((SECS * 200)),0
read,$((SECS * 600)),0
write,$((SECS * 100)),0"
eq "block_io: a quarter writes, one in eight issued by no process" \
	"$(q --data "$A" sql "SELECT sum(op = 'W'), count(*) - count(pid) FROM block_io")" \
	"$((500 * SECS / 4)),$((500 * SECS / 8))"

# --- process churn -----------------------------------------------------
# 2 helpers a second, a row as each starts and one as it exits; the 8
# launching processes' snapshot at the start (one an hour).
eq "process: helpers started and exited, ranks' snapshots" \
	"$(q --data "$A" sql "SELECT count(*), count(exit_ts), count(DISTINCT pid), sum(pid < 200000) FROM process")" \
	"$((4 * SECS + 8)),$((2 * SECS)),$((2 * SECS + 8)),8"
eq "process: every helper exits 50-350 ms after it started" \
	"$(q --data "$A" sql "SELECT count(*) FROM process WHERE exit_ts IS NOT NULL AND exit_ts - start_ts BETWEEN 50000000 AND 350000000")" \
	"$((2 * SECS))"

# --- launches, copies, syncs -------------------------------------------
# The launch stream is jittered: about 30,000 a second; a copy after every
# 100th, a sync after every 200th, all before the day ends.
n=$(q --data "$A" sql "SELECT count(*) FROM cuda_kernel WHERE ts < $((START + SECS))000000000")
eq "cuda_kernel: 30,000/s within 1 %, 8 processes, none after the end" \
	"$(q --data "$A" sql "SELECT abs(count(*) - $((30000 * SECS))) * 100 < $((30000 * SECS)), count(DISTINCT pid), count(*) = $n FROM cuda_kernel")" \
	"1,8,1"
# The jittered stream is still deterministic: seed 7's day holds exactly
# this many launches (a change to synth.c's draws changes it).
eq "cuda_kernel: seed 7, 20 s: 595608 launches" "$n" "595608"
eq "cuda_memcpy and cuda_sync: one per 100 and per 200 launches" \
	"$(q --data "$A" sql "SELECT (SELECT count(*) FROM cuda_memcpy), (SELECT count(*) FROM cuda_sync), (SELECT count(DISTINCT api) FROM cuda_sync)")" \
	"$((n / 100)),$((n / 200)),1"

# --- NCCL: 8 ranks, an iteration (6 collectives) every 30 ms ------------
# floor((20 s - 1 s) / 30 ms) = 633 iterations; a rank's rows: init,
# broadcast, destroy and 10 calls an iteration (synth_nccl.h).
eq "nccl: 8 ranks x (3 + 633 x 10) rows, 1 + 633 x 6 collectives" \
	"$(q --data "$A" sql "SELECT count(*), count(DISTINCT rank), count(DISTINCT seq), max(seq) FROM nccl")" \
	"$((8 * (3 + 633 * 10))),8,$((1 + 633 * 6)),$((633 * 6))"

# --- the gpu family: 8 GPUs a second -----------------------------------
eq "gpu, gpu_process: 8 GPUs sampled each second" \
	"$(q --data "$A" sql "SELECT (SELECT count(*) FROM gpu), (SELECT count(DISTINCT gpu) FROM gpu), (SELECT count(*) FROM gpu_process)")" \
	"$((8 * SECS)),8,$((8 * SECS))"

# --- the same seed and host: the same rows -----------------------------
synth --data "$T/again" --day 3 --seed 7 --host alpha --start "${START}000000000"
synth --data "$T/short" --day 3 --seed 7 --host alpha --start "${START}000000000"
for t in cuda_kernel offcpu runq process; do
	eq "$t: the same seed and host write the same rows" \
		"$(q --data "$T/again" sql "SELECT * FROM $t ORDER BY ts, tid" | md5sum)" \
		"$(q --data "$T/short" sql "SELECT * FROM $t ORDER BY ts, tid" | md5sum)"
done

# --- two hosts of one job; rank 11 (host beta) late ---------------------
# --job-hosts 2: 16 ranks, alpha 0-7, beta 8-15; rank 11 enters every
# 10th collective 5 ms late: the straggler table names it first.
late="--job-hosts 2 --nccl-late-rank 11 --nccl-late-ms 5 --nccl-late-every 10"
synth --data "$T/fa" --day 5 --seed 3 --host alpha --host-index 0 $late --start "${START}000000000"
synth --data "$T/fb" --day 5 --seed 3 --host beta --host-index 1 $late --start "${START}000000000"
F="--data $T/fa --data $T/fb"
eq "job: each host its 8 ranks, one communicator, the same collectives" \
	"$(q $F sql "SELECT host, min(rank), max(rank), max(nranks), count(DISTINCT seq) FROM nccl GROUP BY host ORDER BY host")" \
	"$(q --data "$T/fa" sql "SELECT 'alpha', 0, 7, 16, count(DISTINCT seq) FROM nccl")
$(q --data "$T/fa" sql "SELECT 'beta', 8, 15, 16, count(DISTINCT seq) FROM nccl")"
eq "job: one comm_id on both hosts" \
	"$(q $F sql "SELECT count(DISTINCT comm_id) FROM nccl")" "1"
eq "hosts: their own streams differ (the launches' first second)" \
	"$(q $F sql "SELECT count(DISTINCT f) FROM (SELECT host, count(*) || ':' || sum(dur) AS f FROM cuda_kernel WHERE ts < ${START}100000000 GROUP BY host)")" \
	"2"
# p99 from its histogram (within 1/256), max exact.
eq "nccl-skew: the straggler is rank 11 on beta, 5 ms late" \
	"$(q $F report nccl-skew | head -1 | cut -d, -f1,2,9,10)" \
	"beta,11,4.997,5.0"

# --- bad input ---------------------------------------------------------
"$SYNTH" --data "$T/bad" --day 2 --job-hosts 2 --host-index 2 >"$T/out" 2>"$T/err"
eq "--host-index outside the job: exit 1, one line" \
	"$? $(wc -l <"$T/err") $(cat "$T/err")" \
	"1 1 gpurec-synth: --host-index must be below --job-hosts"
finish
