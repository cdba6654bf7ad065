#!/bin/bash
# live_verify.sh - gpurec verify against a recorder that is writing,
# sealing and deleting as fast as it can, and after a backward clock step.
#
# A synthetic writer rotates every few hundred ms (and retention deletes
# under --max-disk) while verify runs in a loop: every run must pass (the
# open segment "open", never a failure).  Then a writer whose realtime
# clock steps back an hour after its first rotation (test hook
# GPUREC_TEST_CLOCK_STEP_NS): segment names go backwards, verify passes.
#
# env: GPUREC, SYNTH, TRIALS (verify runs, default 30).
set -u
cd "$(dirname "$0")/../.."
GPUREC=${GPUREC:-build/asan/gpurec}
SYNTH=${SYNTH:-build/asan/gpurec-synth}
TRIALS=${TRIALS:-30}
T=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
pass=0; fail=0; skipped=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

"$SYNTH" --data "$T/live" --events 100000000 --rate 20000 --flush-every 200 \
	--rotate-every 3000 --max-disk 3M >/dev/null 2>"$T/synth.err" &
pid=$!
sleep 1
false_fail=0 runs=0 opened=0
for i in $(seq "$TRIALS"); do
	"$GPUREC" --data "$T/live" -v verify >"$T/out" 2>&1; rc=$?
	runs=$((runs + 1))
	grep -q "open" "$T/out" && opened=$((opened + 1))
	if [ $rc -ne 0 ]; then
		false_fail=$((false_fail + 1))
		echo "  run $i: $(grep -v '^ok\|^note' "$T/out" | head -3)"
	fi
	sleep 0.$((RANDOM % 3))
done
kill -0 "$pid" 2>/dev/null || bad "the writer died: $(tail -3 "$T/synth.err")"
kill "$pid"; wait "$pid" 2>/dev/null; pid=
deleted=$(grep -c '^delete ' "$T/live/MANIFEST")
sealed=$(grep -c '^seal ' "$T/live/MANIFEST")
[ "$false_fail" -eq 0 ] &&
	ok "verify on a live recorder: $runs runs, 0 false failures ($sealed seals, $deleted deletions meanwhile)" ||
	bad "verify on a live recorder: $false_fail of $runs runs failed"
[ "$opened" -gt 0 ] && ok "the open segment was reported open" ||
	bad "no run saw an open segment"
"$GPUREC" --data "$T/live" verify >"$T/out" 2>&1 &&
	ok "the recording verifies after the writer was killed" ||
	bad "after kill: $(head -3 "$T/out")"

# The same with sealing, 1-second epochs: the writer moves its key and
# writes anchors while verify checks tags and fss.key's epoch.
mkdir -p "$T/sealed"
if K=$("$GPUREC" seal-setup --data "$T/sealed" --interval 1s 2>"$T/err"); then
	"$SYNTH" --data "$T/sealed" --events 100000000 --rate 20000 \
		--flush-every 200 --rotate-every 3000 --max-disk 3M \
		>/dev/null 2>"$T/synth.err" &
	pid=$!
	sleep 1
	false_fail=0 runs=0
	for i in $(seq $(((TRIALS + 2) / 3))); do
		"$GPUREC" --data "$T/sealed" --verification-key "$K" verify \
			>"$T/out" 2>&1 || {
			false_fail=$((false_fail + 1))
			echo "  sealed run $i: $(grep -v '^ok\|^note' "$T/out" | head -3)"
		}
		runs=$((runs + 1))
		sleep 0.$((RANDOM % 9))
	done
	kill "$pid"; wait "$pid" 2>/dev/null; pid=
	[ "$false_fail" -eq 0 ] &&
		ok "verify --verification-key on a live sealed recorder: $runs runs, 0 false failures" ||
		bad "verify --verification-key live: $false_fail of $runs runs failed"
else
	bad "seal-setup failed: $(cat "$T/err")"
fi

# A backward clock step: names of later segments sort before earlier ones.
GPUREC_TEST_CLOCK_STEP_NS=-3600000000000 "$SYNTH" --data "$T/step" \
	--events 4000 --rotate-every 1000 >/dev/null 2>&1
first=$(sed -n 's/^seal \([^ ]*\) .*seq=1 .*/\1/p' "$T/step/MANIFEST")
last=$(sed -n 's/^seal \([^ ]*\) .*seq=4 .*/\1/p' "$T/step/MANIFEST")
[[ -n "$first" && -n "$last" && "$last" < "$first" ]] &&
	ok "the clock step made a later segment's name sort first" ||
	bad "no backward step seen ($first, $last)"
"$GPUREC" --data "$T/step" verify >"$T/out" 2>&1 &&
	ok "verify passes across a backward clock step" ||
	bad "clock step: $(head -3 "$T/out")"
n=$("$GPUREC" --data "$T/step" sql "SELECT count(*) FROM cuda_kernel" | tail -1 | tr -d " \r")
[ "$n" = 4000 ] && ok "every event reads after the clock step" ||
	bad "clock step: $n events read, 4000 written"
# And its next start continues the chain by seq.
GPUREC_TEST_CLOCK_STEP_NS=-3600000000000 "$SYNTH" --data "$T/step" \
	--events 2000 --rotate-every 1000 >/dev/null 2>&1
"$GPUREC" --data "$T/step" verify >"$T/out" 2>&1 &&
	ok "a second run after the step verifies" ||
	bad "second run: $(head -3 "$T/out")"

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
