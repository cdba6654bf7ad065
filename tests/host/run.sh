#!/usr/bin/env bash
# run.sh - gpurecd records the host context of GPU processes: off-CPU
# intervals, run-queue waits, block and file I/O, and process rows (root,
# eBPF).
#
# build/host-tests/host_load (tests/host/host_load.c) makes one CUDA call
# (cudaMalloc through the toolkit's libcudart: it fails without a GPU, but
# gpurecd records it and from then on traces the process), waits 0.5 s,
# then does work whose every event is known: 20 sleeps of 50 ms (and 10
# of 20 ms while every CPU is busy), a reader woken through a pipe, a
# vfork, two threads sharing one CPU, 32 direct 1 MiB writes and reads, a
# fixed list of file syscalls, exit(7), and a process in a cgroup shaped
# like a Kubernetes container's.  One gpurecd
# run (--file-io-min-us 0, the other thresholds at their defaults) records
# all of it, and each check compares rows with what was done, exactly where
# the kernel makes that possible.  A second, short run checks the
# thresholds' defaults and --sched-all (processes that made no CUDA call).
#
# Not root or no BPF: skipped with a reason, except under CI=true, where
# that is a failure.
# shellcheck disable=SC2034,SC2154 # SUITE is lib.sh's; spawn sets pid_NAME
set -uo pipefail
SUITE=host
. "$(dirname "$0")/../cuda/lib.sh"

HL=build/host-tests/host_load
CUDART=${HOST_LOAD_CUDART:-/usr/local/cuda/lib64/libcudart.so.13}
[ -x "$HL" ] || { bad "host_load" "not built: run make bpf-test"; finish; exit 1; }
[ -e "$CUDART" ] || skip "no $CUDART: a process is traced once it calls CUDA"
"$GPURECD" --help 2>&1 | grep -- --offcpu-min-us >/dev/null ||
	{ bad "gpurecd --help" "does not list --offcpu-min-us"; finish; exit 1; }

# The cgroup v2 hierarchy (pure or hybrid): mount point and the root of it
# that this namespace sees (what a cgroup path is relative to).
read -r CGMNT CGROOT < <(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") {
	if ($(i + 1) == "cgroup2") print $5, $4; break } }' /proc/self/mountinfo | head -1)
POD=$(cat /proc/sys/kernel/random/uuid)
CID=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
CGREL=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${POD//-/_}.slice/cri-containerd-$CID.scope
cg_made=() # the cgroups this test made, innermost first
DIO=$(mktemp /var/tmp/gpurec-dio.XXXXXX) # on a disk, whatever /tmp is
# The CPUs this test may use, and the last of them.
CPUS=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status | tr , '\n' |
	awk -F- '{ for (i = $1; i <= (NF > 1 ? $2 : $1); i++) print i }')
CPU=$(echo "$CPUS" | tail -1)

# cg_remove: removes the cgroups this test made (a cgroup whose last task
# has just been reaped can take a moment to become removable).  A parent
# that now holds another run's pod is left to that run.
cg_remove() {
	local d rc=0
	for d in "${cg_made[@]}"; do
		for _ in $(seq 40); do rmdir "$d" 2>/dev/null && break; sleep 0.05; done
		[ -d "$d" ] || continue
		if [ "$(find "$d" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 0 ]; then
			echo "cannot remove cgroup $d" >&2
			rc=1
		fi
	done
	cg_made=()
	return $rc
}
host_cleanup() { cg_remove; rm -f "$DIO"; }
trap 'host_cleanup; [ -n "${KEEP:-}" ] || cleanup' EXIT

# spawn NAME ARGS...: runs host_load ARGS from this shell, by path, to the
# end; sets pid_NAME; its stdout is $T/NAME.out.  A failure to run is a
# failed check.
spawn() {
	local n=$1 p rc
	shift
	"$HL" "$@" >"$T/$n.out" 2>"$T/$n.err" &
	p=$!
	wait $p
	rc=$?
	printf -v "pid_$n" %s "$p"
	[ $rc = 0 ] || bad "($n) host_load $*" "exit $rc: $(cat "$T/$n.err")"
}
# out NAME KEY [N]: field N (default 2) of the line of $T/NAME.out that
# starts with KEY.
out() { awk -v k="$2" -v f="${3:-2}" '$1 == k { print $f; exit }' "$T/$1.out"; }
# eqd NAME GOT WANT SQL: eq, and when it fails, the rows SQL selects.
eqd() {
	eq "$1" "$2" "$3"
	[ "$2" == "$3" ] ||
		"$GPUREC" --data "$D" --format table sql "$4" 2>&1 | head -40 | sed 's/^/    | /'
}
now() { date +%s%N; }

# ---- run 1: --file-io-min-us 0 ------------------------------------------
start_gpurecd --file-io-min-us 0

spawn sleep sleep 20 50
# The same, 10 x 20 ms, while spinners of an untracked process keep every
# CPU busy.
busy=()
for c in $CPUS; do "$HL" -n contend 1.5 "$c" >/dev/null & busy+=($!); done
spawn busy sleep 10 20
wait "${busy[@]}"
spawn wake wake 5 20
spawn vfork vfork 20
spawn untracked -n sleep 5 20
spawn fileio fileio "$T/fio.txt"

# A short-lived process: exec, CUDA call, exit(7) within milliseconds.
t_exit0=$(now)
"$HL" exit 7 alpha beta & pid_exit=$!
wait $pid_exit; rc=$?
t_exit1=$(now)
eq "(exit) host_load exit 7 exits 7" $rc 7

# Its leader leaves first (pthread_exit); the process ends 300 ms later,
# when the thread left calls exit(5).
t_pth0=$(now)
"$HL" pthexit 5 300 & pid_pth=$!
wait $pid_pth; rc=$?
eq "(pthexit) host_load pthexit 5 exits 5" $rc 5

# A Kubernetes-shaped cgroup: a subshell moves itself in, then execs.
if [ -n "$CGMNT" ]; then
	d=$CGMNT
	for part in ${CGREL//\// }; do
		d=$d/$part
		[ -d "$d" ] && continue
		mkdir "$d" || break
		cg_made=("$d" "${cg_made[@]}")
	done
	(echo $BASHPID >"$CGMNT/$CGREL/cgroup.procs" && exec "$HL" exit 0 pod) 2>"$T/pod.err" &
	pid_pod=$!
	wait $pid_pod
	rc=$?
	eq "(pod) a process runs in $CGMNT/$CGREL" "$rc $(cat "$T/pod.err")" "0 "
else
	bad "(pod) cgroup" "no cgroup2 mount in /proc/self/mountinfo"
	pid_pod=0
fi

# Two spinning threads pinned to one CPU (the last this test may use).
spawn contend contend 1 "$CPU"

spawn dio dio "$DIO" 32

sleep 0.3
stop_gpurecd
eq "the status file says which families ran" \
	"$(grep -o '"host":{[^}]*}' "$D/status.json" | sed 's/,"switch_ins_recovered":[0-9]*,"wakeups_unseen":[0-9]*//')" \
	'"host":{"processes":true,"sched":true,"io":true}'

# 1. Sleeps: one row per sleep, exactly, with the sleeping thread's ids.
# An interval runs from switch-out to switch-in: never under the 50 ms
# slept, and over it by the wait for a CPU once woken, which the test's own
# spinning threads (and a CI run's other work) can stretch by milliseconds
# (56.5 ms seen in CI): 49-75 ms.
tid=$(out sleep sleeper)
eqd "(sleep) 20 offcpu rows of 50 ms (49-75 ms), state S, a stack through nanosleep" \
	"$(q "SELECT count(*), sum(dur BETWEEN 49000000 AND 75000000), sum(state = 'S'), sum(stack LIKE '%nanosleep%'), min(pid), min(comm), max(comm) FROM offcpu WHERE tid = $tid")" \
	"20,20,20,20,$pid_sleep,hl-sleep,hl-sleep " \
	"SELECT ts, dur, state, pid, comm, waker_pid, waker_tid, substr(stack, -100) AS stack_tail FROM offcpu WHERE pid = $pid_sleep ORDER BY ts"
if [ "$(uname -m)" = x86_64 ]; then
	eqd "(sleep) stacks are root first: user frames, the syscall, down to schedule" \
		"$(q "SELECT count(*) FROM offcpu WHERE tid = $tid AND stack LIKE '%_;entry_SYSCALL_64%;%sys_clock_nanosleep;%schedule'")" \
		"20 " "SELECT stack FROM offcpu WHERE tid = $tid LIMIT 3"
fi
eqd "(sleep) user frames are named in every row, the last (as the process exits) too" \
	"$(q "SELECT count(*) FROM offcpu WHERE tid = $tid AND stack LIKE '%;sleeper__run;%'")" \
	"20 " "SELECT ts, substr(stack, 1, instr(stack, ';entry_SYSCALL') - 1) AS user_frames FROM offcpu WHERE tid = $tid ORDER BY ts"
# A wake-up whose tracepoint did not run (rare: a CPU leaving idle) has no
# runq row; gpurecd counts those, so every missing row is accounted for.
unseen=$(grep -o '"wakeups_unseen":[0-9]*' "$D/status.json" | cut -d: -f2)
eqd "(sleep) each wake-up from a sleep is a runq row, ts inside the off-CPU interval" \
	"$(q "SELECT min(20, count(*) + ${unseen:-0}) FROM offcpu o WHERE o.tid = $tid AND EXISTS (SELECT 1 FROM runq r WHERE r.tid = $tid AND r.ts BETWEEN o.ts AND o.ts + o.dur)")" \
	"20 " "SELECT 'offcpu' AS t, ts, dur, NULL AS cpu FROM offcpu WHERE tid = $tid UNION ALL SELECT 'runq', ts, dur, cpu FROM runq WHERE tid = $tid ORDER BY ts"

# No thread wakes a sleeper whose timer expires: the interrupt that runs
# the timer hits whatever thread was running, here a spinner of another
# process, and that one must not be named.  (Not all 10 sleeps need be
# rows: with every CPU busy, gpurecd may take longer than the 0.5 s
# host_load allows it to start tracing the process.)
tid=$(out busy sleeper)
eqd "(busy) a timer's wake-ups name no waker, though the interrupt hit a spinner" \
	"$(q "SELECT count(*) >= 5, sum(waker_pid IS NOT NULL OR waker_tid IS NOT NULL) FROM offcpu WHERE tid = $tid")" \
	"1,0 " "SELECT o.ts, o.dur, o.waker_pid, o.waker_tid, o.stack FROM offcpu o WHERE o.tid = $tid"

# The reader waits in pipe_read until the writer thread wakes it.
rd=$(out wake reader) wr=$(out wake writer)
eqd "(wake) the pipe reader: 5 rows, state S, woken by the writer thread" \
	"$(q "SELECT count(*), sum(state = 'S'), sum(waker_pid = $pid_wake), sum(waker_tid = $wr), sum(dur >= 15000000), sum(stack LIKE '%pipe_read%'), min(comm) FROM offcpu WHERE tid = $rd")" \
	"5,5,5,5,5,5,hl-read " \
	"SELECT ts, dur, state, tid, comm, waker_pid, waker_tid, substr(stack, -100) AS stack_tail FROM offcpu WHERE pid = $pid_wake ORDER BY ts"

# vfork's parent sleeps killable (D) until the child's exit wakes it.
child=$(out vfork child)
eqd "(vfork) the parent waits in state D, woken by the child" \
	"$(q "SELECT state, waker_pid, waker_tid, dur >= 18000000 FROM offcpu WHERE tid = $pid_vfork AND stack LIKE '%vfork%'")" \
	"D,$child,$child,1 " \
	"SELECT ts, dur, state, waker_pid, waker_tid, substr(stack, -120) AS stack_tail FROM offcpu WHERE pid = $pid_vfork ORDER BY ts"

p=$pid_untracked
eqd "(untracked) a process that made no CUDA call: no offcpu, runq, file_io or process rows" \
	"$(q "SELECT (SELECT count(*) FROM offcpu WHERE pid = $p), (SELECT count(*) FROM runq WHERE pid = $p), (SELECT count(*) FROM file_io WHERE pid = $p), (SELECT count(*) FROM process WHERE pid = $p)")" \
	"0,0,0,0 " "SELECT 'offcpu' AS t, ts, tid, comm FROM offcpu WHERE pid = $p UNION ALL SELECT 'runq', ts, tid, comm FROM runq WHERE pid = $p"
eqd "no off-CPU interval is shorter than --offcpu-min-us (1000 us)" \
	"$(q "SELECT count(*) FROM offcpu WHERE dur < 1000000")" "0 " \
	"SELECT ts, pid, tid, comm, dur, state FROM offcpu WHERE dur < 1000000 LIMIT 10"

# 2. Two spinners on one CPU wait for each other: preemptions.
read -r s1 c1 s2 c2 < <(awk '$1 == "spinner" { print $2, $3 }' "$T/contend.out" | sort -n | tr '\n' ' ')
eq "(contend) both spinners ended on CPU $CPU" "$c1 $c2" "$CPU $CPU"
eqd "(contend) runq rows for both spinners, nonzero dur, cpu = $CPU" \
	"$(q "SELECT tid, count(*) >= 5, min(dur) > 0, min(cpu), max(cpu), min(comm) FROM runq WHERE pid = $pid_contend AND tid IN ($s1, $s2) GROUP BY tid ORDER BY tid")" \
	"$s1,1,1,$CPU,$CPU,hl-spin $s2,1,1,$CPU,$CPU,hl-spin " \
	"SELECT tid, comm, count(*), min(dur), max(dur), sum(dur), min(cpu), max(cpu) FROM runq WHERE pid = $pid_contend GROUP BY tid"
eqd "(contend) each spinner waited 40-95% of its second" \
	"$(q "SELECT sum(dur) BETWEEN 400000000 AND 950000000 FROM runq WHERE tid IN ($s1, $s2) GROUP BY tid")" \
	"1 1 " "SELECT tid, count(*), sum(dur) FROM runq WHERE tid IN ($s1, $s2) GROUP BY tid"

# The reports over the same rows (--pid: the common options apply).
rep() { "$GPUREC" --data "$D" --format csv "$@" | tr -d '\r' | tail -n +2; }
eq "(report) offcpu-top: the sleeper's thread, 20 intervals, its nanosleep stack" \
	"$(rep --pid "$pid_sleep" report offcpu-top | awk -F, -v t="$(out sleep sleeper)" '$2 == t { print $3 "," $4 "," $5 "," ($NF ~ /nanosleep/) }')" \
	"hl-sleep,S,20,1"
eq "(report) runq-latency: the spinners' process, its waits, and a histogram summing to them" \
	"$(rep --pid "$pid_contend" report runq-latency | awk -F, '$3 == "" { w = $4 } $3 != "" { h += $4 } END { print (w > 0) "," (w == h) }'),$(q "SELECT count(*) FROM runq WHERE pid = $pid_contend" | tr -d ' ')" \
	"1,1,$(rep --pid "$pid_contend" report runq-latency | awk -F, '$3 == "" { print $4 }')"

# 3. Direct I/O: every byte reaches the disk as requests from the writer.
# block_io names the whole disk (as the block tracepoints do): a
# partition's st_dev is mapped to its disk.
DEV=$(stat -c '%Hd:%Ld' "$DIO")
[ -e "/sys/dev/block/$DEV/partition" ] && DEV=$(cat "/sys/dev/block/$DEV/../dev")
read -r _ w0 w1 r0 r1 < <(grep '^window' "$T/dio.out")
if [ "${DEV%%:*}" = 0 ]; then
	bad "(dio) block device" "$DIO is on $(stat -f -c %T "$DIO"), not a block device"
else
	eqd "(dio) 32 direct 1 MiB writes: W bytes of pid $pid_dio on $DEV" \
		"$(q "SELECT sum(bytes) FROM block_io WHERE pid = $pid_dio AND op = 'W' AND dev = '$DEV'")" \
		"33554432 " "SELECT dev, op, pid, tid, comm, count(*), sum(bytes), min(ts), max(ts) FROM block_io WHERE ts BETWEEN $w0 - 500000000 AND $r1 + 500000000 GROUP BY 1, 2, 3, 4, 5"
	DISK=$(sed -n 's/^DEVNAME=//p' "/sys/dev/block/$DEV/uevent")
	eq "(dio) each request names its disk as /sys does ($DEV is $DISK)" \
		"$(q "SELECT group_concat(DISTINCT disk) FROM block_io WHERE pid = $pid_dio AND dev = '$DEV'")" "$DISK "
	eqd "(dio) the writes issued while it wrote, each with a duration and a sector" \
		"$(q "SELECT count(*) = sum(ts BETWEEN $w0 - 20000000 AND $w1 + 20000000), count(*) = sum(dur > 0), count(*) = count(sector), min(tid) = max(tid), min(comm) FROM block_io WHERE pid = $pid_dio AND op = 'W'")" \
		"1,1,1,1,host_load " "SELECT ts - $w0 AS since_first_write, dur, op, bytes, sector, tid, comm FROM block_io WHERE pid = $pid_dio ORDER BY ts"
	eqd "(dio) 32 direct 1 MiB reads: R bytes of pid $pid_dio on $DEV while it read" \
		"$(q "SELECT sum(bytes) FROM block_io WHERE pid = $pid_dio AND op = 'R' AND dev = '$DEV' AND ts BETWEEN $r0 - 20000000 AND $r1 + 20000000")" \
		"33554432 " "SELECT ts - $r0 AS since_first_read, dur, dev, op, bytes, sector, pid, tid, comm FROM block_io WHERE (pid = $pid_dio OR ts BETWEEN $r0 - 20000000 AND $r1 + 20000000) AND op = 'R' ORDER BY ts"
fi

eq "(report) io-latency: the writer's W requests, 32 MiB, a histogram summing to them" \
	"$(rep --pid "$pid_dio" report io-latency | awk -F, -v dev="$DEV${DISK:+ $DISK}" '$1 == "block" && $2 == dev && $3 == "W" { if ($4 == "") { n = $5; b = $6 } else h += $5 } END { print b "," (n > 0 && n == h) }')" \
	"33554432,1"

# 4. File syscalls, each with its result.
fd1=$(out fileio fds 2) fd2=$(out fileio fds 3)
read -r _ f0 f1 < <(grep '^window' "$T/fileio.out")
OPEN=open
[ "$(uname -m)" = x86_64 ] || OPEN=openat # no open syscall elsewhere
p=$pid_fileio
eqd "(fileio) the openat of $T/fio.txt with its path and fd" \
	"$(q "SELECT syscall, fd, path FROM file_io WHERE pid = $p AND path = '$T/fio.txt'")" \
	"openat,$fd1,$T/fio.txt " "SELECT ts, syscall, fd, bytes, path FROM file_io WHERE pid = $p ORDER BY ts"
eqd "(fileio) every call, in order, with fd and result; paths as passed" \
	"$(q "SELECT syscall, fd, bytes, ifnull(path, 'NULL') FROM file_io WHERE pid = $p AND ts BETWEEN $f0 AND $f1 AND ifnull(path, '') NOT LIKE '%.missing' ORDER BY ts")" \
	"openat,$fd1,$fd1,$T/fio.txt write,$fd1,12345,NULL pwrite64,$fd1,100,NULL writev,$fd1,700,NULL fsync,$fd1,0,NULL fdatasync,$fd1,0,NULL $OPEN,$fd2,$fd2,fio.txt read,$fd2,50100,NULL read,$fd2,0,NULL pread64,$fd2,100,NULL readv,$fd2,30,NULL " \
	"SELECT ts - $f0 AS since_window, dur, syscall, fd, bytes, path FROM file_io WHERE pid = $p ORDER BY ts"
eqd "(fileio) a failed open: bytes = -ENOENT, the path" \
	"$(q "SELECT syscall, bytes, path FROM file_io WHERE pid = $p AND path LIKE '%.missing'")" \
	"openat,-2,$T/fio.txt.missing " "SELECT ts, syscall, fd, bytes, path FROM file_io WHERE pid = $p AND syscall LIKE '%open%'"
eq "(fileio) every row has a duration" "$(q "SELECT count(*) - count(dur), min(dur) >= 0 FROM file_io WHERE pid = $p")" "0,1 "

# 5. A process's row: exe, args, exit status, parent, times.
exe=$(realpath "$HL")
eqd "(exit) one exit row: exe, cmdline, exit_code 1792, start <= exit, ppid = this shell" \
	"$(q "SELECT exe, cmdline, exit_code, start_ts <= exit_ts, ppid, comm FROM process WHERE pid = $pid_exit AND exit_ts IS NOT NULL")" \
	"$exe,$HL exit 7 alpha beta,1792,1,$$,host_load " \
	"SELECT * FROM process WHERE pid = $pid_exit ORDER BY ts"
eqd "(exit) start_ts and exit_ts fall between this shell's clock readings (+-10 ms)" \
	"$(q "SELECT start_ts >= $t_exit0 - 10000000, exit_ts <= $t_exit1 + 10000000 FROM process WHERE pid = $pid_exit AND exit_ts IS NOT NULL")" \
	"1,1 " "SELECT start_ts - $t_exit0 AS start_after_fork, $t_exit1 - exit_ts AS exit_before_wait FROM process WHERE pid = $pid_exit"
# The cgroup column: the v2 path (recorder/proc/proc.c, cgroup_of).
mycg=$(awk -F: '$1 == "0" && $2 == "" { print $3 }' /proc/self/cgroup)
eq "(exit) its cgroup is this shell's" \
	"$(q "SELECT cgroup FROM process WHERE pid = $pid_exit AND exit_ts IS NOT NULL")" "$mycg "
eq "(exit) this shell, its ancestor, has a row" \
	"$(q "SELECT count(*) > 0, min(exe) FROM process WHERE pid = $$")" "1,$(readlink /proc/$$/exe) "

eqd "(pthexit) one exit row, when the last thread exits, with its status" \
	"$(q "SELECT count(*), min(exit_code), min(exit_ts) - $t_pth0 >= 300000000 FROM process WHERE pid = $pid_pth AND exit_ts IS NOT NULL")" \
	"1,1280,1 " "SELECT * FROM process WHERE pid = $pid_pth ORDER BY ts"

eq "(report) process: the short-lived process's story, exit status last" \
	"$(rep report process --param pid=$pid_exit | awk -F, '$1 == "identity" && ($2 == "exe" || $2 == "ppid") || $1 == "exit" && $2 == "exit_code" || $1 == "cuda errors" { print $1 ":" $2 "=" $4 "/" $3 }' | tr '\n' ' ')" \
	"identity:ppid=$$/ identity:exe=$(realpath "$HL")/ cuda errors:cudaMalloc 35=cudaErrorInsufficientDriver/1 exit:exit_code=1792/ "

# 6. The Kubernetes-shaped cgroup: pod uid (dashed) and container id.
eqd "(pod) cgroup path, container_id, pod_uid, exit_code" \
	"$(q "SELECT cgroup, container_id, pod_uid, exit_code FROM process WHERE pid = $pid_pod AND exit_ts IS NOT NULL")" \
	"${CGROOT%/}/$CGREL,$CID,$POD,0 " "SELECT * FROM process WHERE pid = $pid_pod"
cg_remove; eq "the test's cgroups are removed" $? 0

eqd "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 " "SELECT * FROM drops"
"$GPUREC" --data "$D" verify >"$T/verify.out" 2>&1
rc=$?
eq "the recording verifies" $rc 0
[ $rc = 0 ] || sed 's/^/    | /' "$T/verify.out" | head -20

# ---- run 2: default thresholds, --sched-all, --no-cuda -------------------
D="$T/data2"
# (--no-cuda: its uprobes take seconds to detach, and nothing here needs
# them: --sched-all traces every process, the files included.)
start_gpurecd --sched-all --no-cuda
spawn untracked2 -n sleep 5 20
spawn fileio2 -n fileio "$T/fio2.txt"
sleep 0.3
stop_gpurecd
tid=$(out untracked2 sleeper)
read -r _ f0 f1 < <(grep '^window' "$T/fileio2.out")
eqd "(--sched-all) a process that made no CUDA call: its 5 sleeps" \
	"$(q "SELECT count(*), sum(state = 'S'), sum(dur >= 18000000) FROM offcpu WHERE tid = $tid")" \
	"5,5,5 " "SELECT ts, dur, state, tid, comm FROM offcpu WHERE pid = $pid_untracked2"
eqd "(--sched-all, default --file-io-min-us) opens are always recorded" \
	"$(q "SELECT syscall, bytes, path FROM file_io WHERE pid = $pid_fileio2 AND syscall IN ('open', 'openat') AND ts BETWEEN $f0 AND $f1 ORDER BY ts")" \
	"openat,$(out fileio2 fds 2),$T/fio2.txt $OPEN,$(out fileio2 fds 3),fio2.txt openat,-2,$T/fio2.txt.missing " \
	"SELECT ts - $f0 AS since_window, dur, syscall, fd, bytes, path FROM file_io WHERE pid = $pid_fileio2 AND ts BETWEEN $f0 AND $f1 ORDER BY ts"
eqd "(default thresholds) no other file call under 1000 us, no off-CPU interval under 1000 us" \
	"$(q "SELECT (SELECT count(*) FROM file_io WHERE dur < 1000000 AND syscall NOT IN ('open', 'openat')), (SELECT count(*) FROM offcpu WHERE dur < 1000000)")" \
	"0,0 " "SELECT ts, pid, comm, syscall, dur FROM file_io WHERE dur < 1000000 AND syscall NOT IN ('open', 'openat') LIMIT 10"
eqd "(run 2) nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 " "SELECT * FROM drops"

# ---- run 3: --no-sched --no-io: processes are still recorded ------------
D="$T/data3"
start_gpurecd --no-sched --no-io
"$HL" exit 3 & p3=$!; wait $p3
sleep 0.3
stop_gpurecd
eq "(run 3) the status file: processes only" \
	"$(grep -o '"host":{[^}]*}' "$D/status.json")" \
	'"host":{"processes":true,"sched":false,"io":false,"switch_ins_recovered":0,"wakeups_unseen":0}'
eq "(run 3) the CUDA process's exit row, no scheduling or file rows" \
	"$(q "SELECT (SELECT exit_code FROM process WHERE pid = $p3 AND exit_ts IS NOT NULL), (SELECT count(*) FROM offcpu) + (SELECT count(*) FROM runq) + (SELECT count(*) FROM file_io) + (SELECT count(*) FROM block_io)")" \
	"768,0 "
"$GPUREC" --data "$D" verify >/dev/null 2>&1; eq "(run 2) the recording verifies" $? 0
finish
