# wait.sh - waiting for a condition with a deadline that grows with the
# machine's load (sourced by the test scripts and the demo, not run).
#
# A fixed deadline is too long for an idle machine's failures or too short
# for a loaded one: on a 2-core host running four builds, gpurecd (ASan,
# every probe attached, maybe under strace) has taken over 15 s to be
# ready, and a test that then skipped hid the failure.  The deadline here
# is BASE seconds times max(1, the 1-minute load average per CPU); a test
# waits on the real condition and, past the deadline, fails saying how
# long it waited and why that long.

# load_secs BASE: BASE seconds scaled to the load, rounded up.
load_secs() {
	local load _
	read -r load _ </proc/loadavg
	awk -v b="$1" -v l="$load" -v n="$(nproc)" 'BEGIN {
		f = l / n; if (f < 1) f = 1
		s = b * f; printf "%d\n", s == int(s) ? s : int(s) + 1 }'
}

# load_why: "load 3.20 on 2 CPUs", for a timeout's message.
load_why() {
	local load _
	read -r load _ </proc/loadavg
	echo "load $load on $(nproc) CPUs"
}

# wait_until BASE CMD...: runs CMD every 0.1 s until it succeeds (returns
# 0) or load_secs BASE seconds have passed (returns 1).  WAITED then says
# how long, and the load that made it so long.
wait_until() {
	local secs end
	secs=$(load_secs "$1")
	shift
	# In microseconds (bash 5's EPOCHREALTIME): SECONDS ticks on whole
	# seconds since the shell started, so a deadline in it may come up
	# to a second early.
	end=$((${EPOCHREALTIME/./} + secs * 1000000))
	WAITED="$secs s ($(load_why))"
	until "$@"; do
		[ "${EPOCHREALTIME/./}" -ge $end ] && return 1
		sleep 0.1
	done
}

# ready_or_gone LOG PID: gpurecd said it is ready, or PID is gone.
ready_or_gone() {
	grep -q "gpurecd: ready" "$1" || ! kill -0 "$2" 2>/dev/null
}

# wait_ready LOG PID BASE: waits for "gpurecd: ready" in LOG while PID
# lives.  Returns 0 once ready, 1 if PID exited first (it could not start:
# BPF unavailable, a bad option), 2 past the deadline (WAITED says it).
wait_ready() {
	wait_until "$3" ready_or_gone "$1" "$2" || return 2
	grep -q "gpurecd: ready" "$1" || return 1
}
