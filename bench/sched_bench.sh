#!/usr/bin/env bash
# sched_bench.sh - `make bench`'s sched.cpu_pct_at_100k_switches: what
# gpurecd's scheduler probes cost a busy host whose switching processes are
# not traced (gpurecd follows CUDA processes only and drops the rest inside
# its sched_switch/sched_wakeup programs, so this is the price every host
# pays for having the family on).
#
#   bash bench/sched_bench.sh GPURECD_BINARY      (root)
#
# The load is build/switch-load (bench/switch_load.c): two threads on CPU 0
# ping-ponging over pipes at RATE context switches per second.  Rounds
# run (a) the load alone, (b) the load while gpurecd records to a scratch
# directory with CUDA and I/O off (`sched`: the scheduler and process
# families, what sched.cpu_pct_at_100k_switches measures) and (c) with only
# CUDA off (`host`: file calls too; their sys_enter/sys_exit programs run on
# every system call of the host), the order rotated every round so drift
# (a neighbour's build, the VM's steal) falls on all.  Over each window:
#
#   bpf     the run_time_ns of gpurecd's BPF programs (sysctl
#           kernel.bpf_stats_enabled=1 while this runs; the old value comes
#           back on exit).  The programs run in the switching tasks, so this
#           is time the load loses, not time gpurecd spends;
#   daemon  gpurecd's own utime+stime (/proc/PID/stat, clock ticks);
#   cpu_pct 100 * (bpf + daemon) / wall: percent of one CPU.
#
# gpurecd's programs are the ones whose "pids" in `bpftool prog show -j`
# include its pid; bpftool builds without the pid iterator (Debian 12's
# 7.1.0) leave "pids" out, so the program fds in /proc/PID/fdinfo count
# too.  Each round also prints the load's own CPU seconds and switch rate
# in both modes: their ratio is the same cost seen from the load.
#
# If Debian's libbpf-tools is installed, one round each runs the same load
# under runqlat and offcputime, measured the same way, for comparison.
# They run with a duration longer than the window (`runqlat 5 1` would end
# before it closes) and are stopped with SIGTERM once it has.  Nothing is
# installed if they are missing.
#
# Exits non-zero with a one-line reason if not root, a tool is missing or
# gpurecd does not start, run or stop cleanly.  About 45 s (60 with the
# libbpf-tools rounds).
set -uo pipefail

RATE=100000   # context switches per second, the load's own
SECS=5        # one load window
ROUNDS=3      # of each mode (a multiple of 3: each order as often)
READY_S=20    # how long gpurecd may take to print "gpurecd: ready"
STOP_S=10     # how long it may take to exit after SIGTERM

die() { echo "sched_bench: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: sched_bench.sh GPURECD_BINARY"
GPURECD=$1
# switch-load: next to gpurecd, else in this tree's build/.
LOAD=${SWITCH_LOAD:-$(dirname "$GPURECD")/switch-load}
[ -x "$LOAD" ] || [ -n "${SWITCH_LOAD:-}" ] ||
	LOAD=$(dirname "$0")/../build/switch-load
[ "$(id -u)" = 0 ] || die "needs root (BPF, kernel.bpf_stats_enabled)"
[ -x "$GPURECD" ] || die "$GPURECD: not an executable"
[ -x "$LOAD" ] || die "$LOAD: not an executable (make build/switch-load)"
command -v bpftool >/dev/null || die "bpftool not found"
command -v jq >/dev/null || die "jq not found"
TICK=$(getconf CLK_TCK) || die "getconf CLK_TCK failed"

tmp=$(mktemp -d /tmp/sched_bench.XXXXXX) || die "mktemp failed"
old_stats=$(sysctl -n kernel.bpf_stats_enabled) ||
	die "cannot read kernel.bpf_stats_enabled"
dpid=""     # gpurecd or the comparison tool now running
cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	# gpurecd seals segments FS_IMMUTABLE_FL (store/writer.c).
	chattr -R -i "$tmp" 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sysctl -qw kernel.bpf_stats_enabled=1 ||
	die "cannot set kernel.bpf_stats_enabled=1"

# now_us: the wall clock in microseconds.
now_us() { echo "${EPOCHREALTIME//[.,]/}"; }

# ctxt: the host's context switches since boot.
ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }

# ticks PID: PID's utime+stime in clock ticks (fields 14 and 15; the comm
# in field 2 may hold spaces, so count from its closing parenthesis).
ticks() {
	local st
	st=$(<"/proc/$1/stat") || return 1
	st=${st##*) }
	awk '{ print $12 + $13 }' <<<"$st"
}

# snap PID FILE: one instant of the host and of PID (0: none): writes
# [{id, name, ns, mine}] for every BPF program (ns: run_time_ns since load;
# mine: PID's) to FILE and prints "us ticks ctxt".
snap() {
	local fd t=0
	fd=$(grep -hs '^prog_id:' /proc/"$1"/fdinfo/* | awk '{ print $2 }' |
		sort -un | paste -sd,)
	bpftool prog show -j | jq -c --argjson pid "$1" --argjson fd "[$fd]" '
		map({ id, name, ns: (.run_time_ns // 0),
		      mine: ((.id | IN($fd[])) or
			     ((.pids // []) | any(.pid == $pid))) })' \
		>"$2" || return 1
	if [ "$1" != 0 ]; then t=$(ticks "$1") || return 1; fi
	echo "$(now_us) $t $(ctxt)"
}

# load: runs the load once; prints its line ("switches_per_s H
# roundtrips_per_s R cpu_s C [short_of_target N]").
load() {
	"$LOAD" --rate "$RATE" --seconds "$SECS" ||
		die "$LOAD --rate $RATE --seconds $SECS failed"
}

# field NAME LINE: the value after NAME in a "name value ..." line.
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i+1) }' <<<"$2"; }

# window PID: the load while PID runs (0: alone); prints the load's line
# followed by "others_bpf_ms O", the run time of BPF programs not PID's
# (another tracer on the host: the numbers are not clean), and for a PID
# "wall_s S progs P bpf_ms B daemon_ms D cpu_pct C bpf_ns_per_switch N",
# then a line with each of its programs' run time per host switch.
window() {
	local pid=$1 s0 s1 out bpf
	s0=$(snap "$pid" "$tmp/s0.json") ||
		die "pid $pid exited before the window opened"
	out=$(load) || exit 1
	s1=$(snap "$pid" "$tmp/s1.json") ||
		die "pid $pid exited during the window"
	# "mine_ns others_ns programs name ns name ns ...": deltas by id of
	# the programs in s1 (one loaded meanwhile counts in full; one
	# unloaded meanwhile is lost).
	bpf=$(jq -rn --slurpfile a "$tmp/s0.json" --slurpfile b "$tmp/s1.json" '
		($a[0] | map({ key: (.id | tostring), value: .ns })
		       | from_entries) as $old
		| ($b[0] | map(.ns -= ($old[.id | tostring] // 0))) as $d
		| ($d | map(select(.mine))) as $p
		| "\($p | map(.ns) | add // 0) " +
		  "\($d | map(select(.mine | not) | .ns) | add // 0) " +
		  "\($p | length) " +
		  ($p | map("\(.name) \(.ns)") | join(" "))') ||
		die "jq failed on bpftool's output"
	awk -v a="$s0" -v b="$s1" -v tick="$TICK" -v out="$out" -v p="$bpf" \
	    -v pid="$pid" '
	BEGIN {
		split(a, x); split(b, y); n = split(p, q)
		wall = (y[1] - x[1]) / 1e6; dt = y[2] - x[2]
		sw = y[3] - x[3]; bpf = q[1]
		printf "%s others_bpf_ms %.3f", out, q[2] / 1e6
		if (pid == 0) {
			printf "\n"
			exit
		}
		pct = 100 * (bpf / 1e9 + dt / tick) / wall
		printf " wall_s %.3f progs %d bpf_ms %.3f daemon_ms %d " \
		       "cpu_pct %.3f bpf_ns_per_switch %.1f\n", wall, q[3],
		       bpf / 1e6, dt * 1000 / tick, pct, sw ? bpf / sw : 0
		if (n > 3) {
			printf "    bpf ns per switch:"
			for (i = 4; i < n; i += 2)
				printf " %s %.1f", q[i], sw ? q[i + 1] / sw : 0
			printf "\n"
		}
	}'
}

# start_gpurecd DIR [FLAGS]: starts gpurecd recording to DIR, sets dpid, returns
# once it has said it is ready.
start_gpurecd() {
	local err=$tmp/daemon.err i
	local dir=$1
	shift
	"$GPURECD" --data "$dir" --config /dev/null --no-cuda "$@" \
		</dev/null >/dev/null 2>"$err" &
	dpid=$!
	for ((i = 0; i < READY_S * 20; i++)); do
		grep -q '^gpurecd: ready' "$err" && return 0
		kill -0 "$dpid" 2>/dev/null || {
			wait "$dpid"
			die "gpurecd exited $? before ready: $(tail -n1 "$err")"
		}
		sleep 0.05
	done
	die "gpurecd not ready after ${READY_S}s: $(tail -n1 "$err")"
}

# stop PID NAME [expect_rc]: SIGTERM, then waits STOP_S for it to exit.
stop() {
	local pid=$1 i rc
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < STOP_S * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null &&
		die "$2 still running ${STOP_S}s after SIGTERM"
	wait "$pid"; rc=$?
	dpid=""
	[ $# -lt 3 ] || [ "$rc" = "$3" ] ||
		die "$2 exited $rc after SIGTERM: $(tail -n1 "$tmp/daemon.err")"
}

median() { sort -g | awk '{ v[NR] = $1 } END {
	if (!NR) { print "nan"; exit }
	print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Per-round values, one file per series.
rec() { echo "$2" >>"$tmp/$1"; }

round_alone() {
	local out
	out=$(window 0) || exit 1
	printf "round %d alone    %s\n" "$1" "$out"
	rec alone_sw "$(field switches_per_s "$out")"
	rec alone_cpu "$(field cpu_s "$out")"
	rec others "$(field others_bpf_ms "$out")"
}

# round_gpurecd R MODE FLAGS...: one window under gpurecd MODE (sched:
# the scheduler and process families, --no-io; host: every host family,
# file calls included).
round_gpurecd() {
	local out r=$1 mode=$2
	shift 2
	start_gpurecd "$tmp/data.$r.$mode" "$@"
	out=$(window "$dpid") || exit 1
	stop "$dpid" gpurecd 0
	printf "round %d %-6s  %s\n" "$r" "$mode" "$out"
	# A family that failed to load would read as a cheap one.
	grep -q ' sched_switch ' <<<"$out" ||
		die "gpurecd ($mode) runs no sched_switch program: $(tail -n1 "$tmp/daemon.err")"
	rec "${mode}_sw" "$(field switches_per_s "$out")"
	rec "${mode}_cpu" "$(field cpu_s "$out")"
	rec "${mode}_pct" "$(field cpu_pct "$out")"
	rec "${mode}_ns" "$(field bpf_ns_per_switch "$out")"
	rec others "$(field others_bpf_ms "$out")"
}

echo "sched: $ROUNDS rounds of the load alone, under gpurecd --no-cuda" \
     "--no-io (sched) and under gpurecd --no-cuda (host: file calls too)," \
     "$RATE switches/s for ${SECS}s on CPU 0"
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 3; k++)); do # the order rotates every round
		case $(((r + k) % 3)) in
		0) round_alone "$r" ;;
		1) round_gpurecd "$r" sched --no-io ;;
		2) round_gpurecd "$r" host ;;
		esac
	done
done

# Comparison: libbpf-tools, if installed.  The tools print nothing when
# attached, so the window opens once their links show in fdinfo.
tool_path() { command -v "$1" 2>/dev/null ||
	{ [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; }; }
compare=()
for tool in runqlat offcputime; do
	path=$(tool_path "$tool") || continue
	args=($((SECS + 10)))
	[ "$tool" = runqlat ] && args+=(1)
	"$path" "${args[@]}" </dev/null >/dev/null 2>"$tmp/daemon.err" &
	dpid=$!
	for ((i = 0; i < 100; i++)); do
		grep -qs '^link_id:' /proc/"$dpid"/fdinfo/* && break
		kill -0 "$dpid" 2>/dev/null ||
			die "$tool exited before attaching: $(tail -n1 "$tmp/daemon.err")"
		sleep 0.05
	done
	((i < 100)) || die "$tool: no BPF link after 5s"
	out=$(window "$dpid") || exit 1
	stop "$dpid" "$tool"
	printf "%-16s %s\n" "$tool" "$out"
	compare+=("$(printf "sched.%s_cpu_pct %.2f %%" "$tool" \
		"$(field cpu_pct "$out")")")
done

printf "sched.switches_per_s_alone %.0f /s\n" "$(median <"$tmp/alone_sw")"
a=$(median <"$tmp/alone_cpu")
printf "sched.load_cpu_s_alone %.3f s\n" "$a"
for mode in sched host; do
	printf "%s.cpu_pct_at_100k_switches %.2f %%\n" "$mode" \
		"$(median <"$tmp/${mode}_pct")"
	printf "%s.switches_per_s %.0f /s\n" "$mode" "$(median <"$tmp/${mode}_sw")"
	printf "%s.bpf_ns_per_switch %.1f ns\n" "$mode" \
		"$(median <"$tmp/${mode}_ns")"
	g=$(median <"$tmp/${mode}_cpu")
	printf "%s.load_cpu_s_gpurecd %.3f s\n" "$mode" "$g"
	awk -v m="$mode" -v a="$a" -v g="$g" -v s="$SECS" 'BEGIN {
		printf "%s.load_cpu_ratio %.3f x\n", m, (a > 0 ? g / a : 0)
		printf "%s.load_extra_cpu_pct %.2f %%\n", m, 100 * (g - a) / s }'
done
for line in "${compare[@]}"; do echo "$line"; done
# Another tracer (a second gpurecd, a test) on the same hooks taxes both
# modes and the load's CPU time: say so rather than print clean-looking
# numbers.
awk -v s="$SECS" '$1 > s { n++; if ($1 > m) m = $1 } END {
	if (n) printf "sched_bench: warning: other BPF programs ran up to " \
		"%.0f ms per window in %d of %d windows: the numbers are not " \
		"clean\n", m, n, NR }' "$tmp/others" >&2
