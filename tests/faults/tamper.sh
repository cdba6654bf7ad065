#!/bin/bash
# tamper.sh - a root attacker edits a recording; gpurec verify must say so.
#
# Each case copies an intact recording, changes it as someone with write
# access would (fields of a seal line, newest segments cut with their seal
# lines, a forged retention deletion, reordered lines, a broken line
# chain), re-chains lh= where that hides the edit from the line chain, and
# expects verify to exit 1 naming the change.  With a verification key
# (gpurec seal-setup, when the build has it): a line forged with the
# current key for a past epoch, and a run's tail cut off.
#
# env: GPUREC, GPURECD (unused here), SYNTH, TRIALS (repeats, default 1).
set -u
cd "$(dirname "$0")/../.."
GPUREC=${GPUREC:-build/asan/gpurec}
SYNTH=${SYNTH:-build/asan/gpurec-synth}
TRIALS=${TRIALS:-1}
M="python3 tests/faults/lib_manifest.py"
T=$(mktemp -d); trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
pass=0; fail=0; skipped=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

"$SYNTH" --data "$T/base" --events 5000 --rotate-every 1000 \
	--interval 1000000 --start 1763000000000000000 >/dev/null 2>&1 ||
	{ bad "synth could not record"; }
"$GPUREC" --data "$T/base" verify >"$T/out" 2>&1 &&
	ok "the intact recording verifies" || bad "intact: $(cat "$T/out")"
# Line numbers in base/MANIFEST: 1 start, 2-6 seal seq 1-5, 7 stop.
segs=($(sed -n 's/^seal \([^ ]*\) .*/\1/p' "$T/base/MANIFEST"))

# expect NAME PATTERN: verify on $T/c exits 1 and prints PATTERN.
expect() {
	"$GPUREC" --data "$T/c" verify >"$T/out" 2>&1; local rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$2" "$T/out"; then ok "$1"
	else bad "$1 (exit $rc): $(head -5 "$T/out")"; fi
}
fresh() { rm -rf "$T/c"; cp -a "$T/base" "$T/c"; chmod u+w "$T/c"/*; }

for trial in $(seq "$TRIALS"); do
	for f in "events 1" "start 5" "end 7" "host elsewhere"; do
		set -- $f
		fresh; $M "$T/c/MANIFEST" set 4 "$1" "$2"
		expect "seal line $1= edited (chain re-made) is caught" \
			"manifest says"
	done
	fresh
	rm "$T/c/${segs[3]}" "$T/c/${segs[4]}"; $M "$T/c/MANIFEST" drop 5 6
	expect "newest segments cut with their seal lines are caught" \
		"tail missing"
	fresh
	$M "$T/c/MANIFEST" insert 0 "delete ${segs[2]} reason=max-disk at=1 bytes=1 seq=3"
	rm "$T/c/${segs[2]}"
	expect "a forged max-disk deletion of a middle segment is caught" \
		"deleted out of order"
	fresh
	$M "$T/c/MANIFEST" insert 0 "delete ${segs[0]} reason=max-disk at=1 bytes=1 seq=4"
	rm "$T/c/${segs[0]}"
	expect "a forged deletion naming the wrong seq is caught" \
		"the segment was sealed as seq"
	fresh; $M "$T/c/MANIFEST" swap 3 4
	expect "reordered seal lines are caught" "out of order"
	fresh; $M "$T/c/MANIFEST" raw-edit 1 "pid=" "pid=1"
	expect "an edited line breaks lh" "line chain broken"
	fresh; $M "$T/c/MANIFEST" drop 7
	"$GPUREC" --data "$T/c" verify >"$T/out" 2>&1
	grep -q "not sealed: anyone with write access" "$T/out" &&
		ok "without a key, verify states the limit" ||
		bad "no limit statement: $(cat "$T/out")"
done

# --- a recording made before MANIFEST format 2 -------------------------
rm -rf "$T/f1"; mkdir -p "$T/f1"
zstd -dc tests/fixtures/format1-recording.tar.zst | tar -C "$T/f1" -xf -
"$GPUREC" --data "$T/f1/oldrec" verify >"$T/out" 2>&1 &&
	ok "a format-1 recording verifies" || bad "format 1: $(head -3 "$T/out")"
n=$("$GPUREC" --data "$T/f1/oldrec" sql "SELECT count(*) FROM cuda_kernel" |
	tail -1 | tr -d ' \r')
[ "$n" = 300 ] && ok "a format-1 recording reads all 300 events" ||
	bad "format 1: $n events read"
"$SYNTH" --data "$T/f1/oldrec" --events 200 --rotate-every 100 \
	--start 1763000001000000000 >/dev/null 2>&1
"$GPUREC" --data "$T/f1/oldrec" verify >"$T/out" 2>&1 &&
	grep -q "seq=4 " "$T/f1/oldrec/MANIFEST" &&
	ok "a new writer continues it (seq 4 after three format-1 seals), verifies" ||
	bad "format 1 continued: $(head -3 "$T/out")"
rm -rf "$T/c"; cp -a "$T/f1/oldrec" "$T/c"; chmod -R u+w "$T/c"
$M "$T/c/MANIFEST" raw-edit 2 "events=100 " "events=1 "
expect "a format-1 seal line's edited events= is caught" "manifest says events=1,"
rm -rf "$T/c"

# --- with a verification key -----------------------------------------
# Two runs a few 1-second epochs apart: lines of epoch 0, then later ones.
rm -rf "$T/k"; mkdir -p "$T/k"
if K=$("$GPUREC" seal-setup --data "$T/k" --interval 1s 2>"$T/err"); then
	"$SYNTH" --data "$T/k" --events 3000 --rotate-every 1000 \
		--interval 1000000 >/dev/null 2>&1
	sleep 2.2
	"$SYNTH" --data "$T/k" --events 2000 --rotate-every 1000 \
		--interval 1000000 >/dev/null 2>&1
	kverify() { "$GPUREC" --data "$T/c" --verification-key "$K" verify \
		>"$T/out" 2>&1; }
	kexpect() {
		kverify; local rc=$?
		if [ $rc -eq 1 ] && grep -q -- "$2" "$T/out"; then ok "$1"
		else bad "$1 (exit $rc): $(head -5 "$T/out")"; fi
	}
	rm -rf "$T/c"; cp -a "$T/k" "$T/c"
	kverify && ok "a sealed recording verifies with its key" ||
		bad "sealed: $(head -5 "$T/out")"
	"$GPUREC" --data "$T/c" verify >"$T/out" 2>&1 &&
		! grep -q "not sealed" "$T/out" &&
		ok "a sealed recording verifies without the key, no 'not sealed' note" ||
		bad "sealed, no key: $(head -5 "$T/out")"
	# Line 3 is the first seal, in epoch 0; the attacker holds only the
	# current key.
	for trial in $(seq "$TRIALS"); do
		rm -rf "$T/c"; cp -a "$T/k" "$T/c"; chmod -R u+w "$T/c"
		$M "$T/c/MANIFEST" set 3 events 1 --retag "$T/c/fss.key"
		kexpect "a past epoch's line forged with the current key is caught" \
			"sealing tag does not verify"
		rm -rf "$T/c"; cp -a "$T/k" "$T/c"; chmod -R u+w "$T/c"
		first2=$(grep -n '^start ' "$T/c/MANIFEST" | sed -n 2p | cut -d: -f1)
		last=$(wc -l <"$T/c/MANIFEST")
		for s in $(sed -n "$((first2 - 1)),${last}s/^seal \([^ ]*\) .*/\1/p" \
			"$T/c/MANIFEST"); do rm -f "$T/c/$s"; done
		$M "$T/c/MANIFEST" drop $(seq $((first2 - 1)) "$last")
		kexpect "a run's tail cut back into an earlier epoch is caught" \
			"tail missing: fss.key is at epoch"
		rm -rf "$T/c"; cp -a "$T/k" "$T/c"; chmod -R u+w "$T/c"
		rm "$T/c/fss.key"
		kexpect "fss.key removed while lines are sealed is caught" \
			"missing, while MANIFEST lines are"
	done
else
	bad "seal-setup failed: $(cat "$T/err")"
fi

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
