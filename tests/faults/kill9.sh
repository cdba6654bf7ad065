#!/usr/bin/env bash
# kill9.sh - kill -9 a writer at random points and at the points where a
# segment is created and sealed, restart it, and check that nothing
# committed was lost and nothing invalid was left (issue 15, points 1, 4, 9).
#
# The writer is gpurec-synth --live: the real store writer fed a
# deterministic stream (cuda_kernel, ts = start + i * 1 us) at RATE events
# a second, flushing every FLUSH_MS ms, with a tiny segment size so that
# nearly every flush seals a segment and creates the next.  It keeps its
# counters (appended; committed = appended when its last flush returned)
# in a MAP_SHARED page that survives the kill.  Each trial uses its own
# stretch of timestamps, in one data directory that accumulates.
#
# Where it is killed, in turn: at a random instant, or held at a point by
# tests/faults/killpoint.so (LD_PRELOAD; the store is unchanged) and killed
# there: create (a new *.seg exists, empty), schema (its first
# transaction), seal (sealed, not yet in the MANIFEST), fold (the WAL being
# folded back at the seal), manifest (the seal line being written).
#
# After each kill the writer is restarted (gpurec-synth --events 0: it
# recovers the directory, then closes cleanly), and the trial passes when:
#   - the restart exits 0;
#   - no *.seg is empty, and every *.seg is sealed in the MANIFEST;
#   - every segment sealed before the trial is still there;
#   - gpurec verify passes;
#   - the trial's events in the store are a prefix of its stream (no hole),
#     at least all it had committed and at most all it had appended;
#   - events lost (appended - stored) <= RATE * FLUSH_MS / 1000 + RATE/100
#     (one flush interval, and a 10 ms pacing tick);
#   - every earlier trial's events are all still there.
# A trial that leaves invalid *.seg files has them moved aside, so later
# trials are judged on their own.
#
# Env: GPUREC, SYNTH (binaries under test; GPURECD by convention, unused),
# KILLPOINT_SO, TRIALS (16: each point twice), RATE (20000), FLUSH_MS (1000), SEED.
# Prints ok/FAIL per trial, a `# kill9:` summary line, then `N passed, N
# failed, N skipped`; exits 1 on a failure.
set -uo pipefail
GPUREC=${GPUREC:-build/asan/gpurec}
GPURECD=${GPURECD:-build/asan/gpurecd}
SYNTH=${SYNTH:-build/asan/gpurec-synth}
KILLPOINT_SO=${KILLPOINT_SO:-build/faults/killpoint.so}
TRIALS=${TRIALS:-16}
RATE=${RATE:-20000}
FLUSH_MS=${FLUSH_MS:-1000}
SEED=${SEED:-$(date +%s)}
RANDOM=$SEED
T=$(mktemp -d /tmp/gpurec-kill9.XXXXXX)
D=$T/data
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

# A preloaded shim and ASan: ASan wants to come first; it need not here.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
for b in "$GPUREC" "$SYNTH" "$KILLPOINT_SO"; do
	if [ ! -e "$b" ]; then
		bad "kill9 setup" "$b missing (make fault-test builds it)"
		echo "$pass passed, $fail failed, $skipped skipped"
		exit 1
	fi
done
KILLPOINT_SO=$(realpath "$KILLPOINT_SO")

BOUND=$((RATE * FLUSH_MS / 1000 + RATE / 100))
BASE=1700000000000000000
STRETCH=1000000000000 # ns of stream time per trial: far beyond a trial
POINTS=(random create seal random schema fold random manifest)
total_stored=0 lost_max=0 lost_sum=0 survived=0
declare -A hit

sealed_names() { # the segments the MANIFEST seals and does not delete
	[ -f "$D/MANIFEST" ] || return 0
	awk '$1 == "seal" {s[$2] = 1} $1 == "delete" {delete s[$2]}
	     END {for (n in s) print n}' "$D/MANIFEST" | sort
}
sql() { # CSV lines end in CRLF (RFC 4180)
	"$GPUREC" --data "$D" --format csv sql "$1" 2>>"$T/sql.err" |
		tail -n +2 | tr -d '\r'
}

for ((k = 1; k <= TRIALS; k++)); do
	p=${POINTS[$(((k - 1) % ${#POINTS[@]}))]}
	start=$((BASE + k * STRETCH))
	prog=$T/progress.$k mark=$T/mark.$k
	before=$(sealed_names)
	env=()
	if [ "$p" != random ]; then
		env=(LD_PRELOAD="$KILLPOINT_SO" KILLPOINT="$p"
		     KILLPOINT_SKIP=$((RANDOM % 3)) KILLPOINT_MARK="$mark"
		     KILLPOINT_MS=5000)
	fi
	env "${env[@]}" "$SYNTH" --data "$D" --live "$RATE" \
		--flush-ms "$FLUSH_MS" --progress "$prog" --segment-size 16K \
		--interval 1000 --start "$start" >"$T/w.$k.log" 2>&1 &
	pid=$!
	why=
	if [ "$p" = random ]; then
		# 0.3 to 3 s: startup, appends, flushes, seals, creations.
		sleep "$((RANDOM % 3000 / 1000 + 0)).$(printf %03d $((300 + RANDOM % 700)))"
	else
		for ((i = 0; i < 1500; i++)); do
			[ -e "$mark" ] && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.01
		done
		[ -e "$mark" ] || why="the writer never reached $p"
		sleep "0.0$((RANDOM % 5))"
	fi
	kill -9 "$pid" 2>/dev/null || why=${why:-"the writer had exited: $(tail -n 2 "$T/w.$k.log")"}
	wait "$pid" 2>/dev/null
	pid=
	read -r appended committed _ < <(od -An -t u8 -j 8 -N 24 \
		"$prog" 2>/dev/null | tr -s ' \n' '  ')
	appended=${appended:-0} committed=${committed:-0}

	# Restart: recovery, then a clean close.
	"$SYNTH" --data "$D" --events 0 >"$T/r.$k.log" 2>&1
	rrc=$?
	probs=()
	[ -n "$why" ] && probs+=("$why")
	[ "$rrc" -eq 0 ] || probs+=("the restart exited $rrc: $(tail -n 1 "$T/r.$k.log")")
	empty=$(find "$D" -maxdepth 1 -name '*.seg' -size 0 -printf '%f ')
	[ -z "$empty" ] || probs+=("empty segment left: $empty")
	now=$(sealed_names)
	unsealed=$(comm -23 <(cd "$D" && ls -1 -- *.seg 2>/dev/null | sort) \
		<(echo "$now") | tr '\n' ' ')
	[ -z "$unsealed" ] || probs+=("segment not sealed in the MANIFEST: $unsealed")
	gone=$(comm -23 <(echo "$before") <(echo "$now") | grep . | tr '\n' ' ')
	[ -z "$gone" ] || probs+=("sealed segment gone from the MANIFEST: $gone")
	missing=$(for n in $now; do [ -e "$D/$n" ] || echo -n "$n "; done)
	[ -z "$missing" ] || probs+=("sealed segment missing: $missing")
	# Killed before its first flush, a writer leaves no segment at all,
	# and verify has nothing to check (it says so, and exits 1).
	if ls "$D"/*.seg >/dev/null 2>&1; then
		"$GPUREC" --data "$D" verify >"$T/v.$k.log" 2>&1 ||
			probs+=("gpurec verify: $(grep -m1 -v '^ok' "$T/v.$k.log")")
	fi
	IFS=, read -r n lo hi nd < <(sql "SELECT count(*), min(ts), max(ts),
		count(DISTINCT ts) FROM cuda_kernel WHERE ts BETWEEN $start
		AND $((start + STRETCH - 1))")
	n=${n:-0}
	if [ "$n" -gt 0 ] && { [ "$lo" != "$start" ] ||
	   [ "$hi" != "$((start + (n - 1) * 1000))" ] || [ "$nd" != "$n" ]; }; then
		probs+=("stored events are not a prefix of the stream: $n events, ts $lo..$hi, $nd distinct")
	fi
	[ "$n" -ge "$committed" ] || probs+=("committed $committed events, $n stored")
	[ "$n" -le "$appended" ] || probs+=("$n events stored, only $appended appended")
	lost=$((appended - n))
	[ "$lost" -le "$BOUND" ] || probs+=("lost $lost events, more than one flush interval ($BOUND)")
	total_stored=$((total_stored + n))
	all=$(sql "SELECT count(*) FROM cuda_kernel")
	[ "${all:-0}" = "$total_stored" ] ||
		probs+=("the store holds ${all:-?} events, the trials stored $total_stored")

	[ "$lost" -gt "$lost_max" ] && lost_max=$lost
	lost_sum=$((lost_sum + lost))
	hit[$p]=$((${hit[$p]:-0} + 1))
	desc="trial $k (kill -9 at $p): committed $committed <= stored $n <= appended $appended, lost $lost ($((lost * 1000 / RATE)) ms) <= $BOUND"
	if [ ${#probs[@]} -eq 0 ]; then
		survived=$((survived + 1))
		ok "$desc; verify passes"
	else
		bad "$desc" "$(printf '%s; ' "${probs[@]}" | sed 's/ *; $//; s/  *;/;/g')"
		# Judge later trials on their own: set invalid files aside.
		mkdir -p "$T/aside"
		for f in $empty $unsealed; do mv -f "$D/$f" "$T/aside/" 2>/dev/null; done
		for f in "$D"/*.seg-wal "$D"/*.seg-shm; do
			[ -e "$f" ] && mv -f "$f" "$T/aside/"
		done
		total_stored=$(sql "SELECT count(*) FROM cuda_kernel")
		total_stored=${total_stored:-0}
	fi
done
points=$(for p in "${!hit[@]}"; do echo -n "$p=${hit[$p]} "; done)
echo "# kill9: trials $TRIALS, survived $survived, events lost max $lost_max" \
     "(bound $BOUND = ${FLUSH_MS} ms at $RATE/s), lost total $lost_sum," \
     "points ${points% }, seed $SEED"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
