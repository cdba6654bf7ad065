#!/usr/bin/env bash
# reliability.sh DURATION - the reliability suite (make reliability; docs/
# reliability.md): for half of DURATION, every tests/faults/*.sh in turn,
# again and again, with TRIALS trials each; for the other half the fuzzers
# (tests/fuzz/run.sh), a quarter each.  Prints every script's lines as it
# goes, then a summary in Markdown to paste into docs/reliability.md.
# DURATION: N, Ns, Nm or Nh.  Root (the fault tests plant files as other
# users and mount file systems); under CI=true a non-root run fails.
# Env: GPUREC, GPURECD, SYNTH, KILLPOINT_SO, FUZZ_DIR, TRIALS (50),
# SLOW_TRIALS (2: for the scripts whose trials take a minute).
set -uo pipefail
dur=${1:-1h}
case $dur in
*h) secs=$((${dur%h} * 3600)) ;;
*m) secs=$((${dur%m} * 60)) ;;
*s) secs=${dur%s} ;;
*) secs=$dur ;;
esac
TRIALS=${TRIALS:-50}
# Trials of the scripts whose one trial takes a minute or more (a tmpfs
# filled and drained, a recorder started several times); the rest (kill9:
# two seconds a trial) take TRIALS.
SLOW_TRIALS=${SLOW_TRIALS:-2}
SLOW="diskfull symlinks live_verify readonly"
FUZZ_DIR=${FUZZ_DIR:-build/fuzz}
if [ "$(id -u)" != 0 ]; then
	echo "FAIL reliability: needs root (sudo make reliability)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
L=$(mktemp -d /tmp/gpurec-reliability.XXXXXX)
trap 'rm -rf "$L"' EXIT
t0=$(date +%s)
fault_end=$((t0 + secs / 2))
declare -A runs passed failed
rounds=0
scripts=(tests/faults/*.sh)
while [ "$(date +%s)" -lt "$fault_end" ]; do
	rounds=$((rounds + 1))
	for s in "${scripts[@]}"; do
		[ "$(date +%s)" -lt "$fault_end" ] || break
		n=$(basename "$s" .sh)
		t=$TRIALS
		[[ " $SLOW " == *" $n "* ]] && t=$SLOW_TRIALS
		echo "== round $rounds: $s (TRIALS=$t)"
		TRIALS=$t bash "$s" 2>&1 | tee "$L/out" | grep -v '^ok '
		read -r p f < <(awk '/^[0-9]+ passed, [0-9]+ failed/ {p=$1; f=$3}
			END {print p+0, f+0}' "$L/out")
		runs[$n]=$((${runs[$n]:-0} + 1))
		passed[$n]=$((${passed[$n]:-0} + p))
		failed[$n]=$((${failed[$n]:-0} + f))
		grep '^# ' "$L/out" | sed "s/^/$n: /" >>"$L/notes"
	done
done
fault_secs=$(($(date +%s) - t0))
fuzz_secs=$(((secs - fault_secs) / 2))
[ "$fuzz_secs" -lt 10 ] && fuzz_secs=10
echo "== fuzzers, ${fuzz_secs} s each"
FUZZ_DIR=$FUZZ_DIR FUZZ_SECONDS=$fuzz_secs FUZZ_NICE=0 \
	bash tests/fuzz/run.sh | tee "$L/fuzz"

# The summary, in Markdown.
echo
echo "### make reliability DURATION=$dur: $(date -u +%Y-%m-%dT%H:%MZ)," \
     "$(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs"
echo
echo "| fault test | runs | checks passed | checks failed |"
echo "|---|---|---|---|"
tp=0 tf=0
for n in $(printf '%s\n' "${!runs[@]}" | sort); do
	echo "| $n | ${runs[$n]} | ${passed[$n]} | ${failed[$n]} |"
	tp=$((tp + ${passed[$n]})) tf=$((tf + ${failed[$n]}))
done
if [ -s "$L/notes" ]; then
	# kill9's per-run line: trials, survived, lost max (bound), lost total.
	awk '/^kill9: # kill9:/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "trials") t += $(i + 1)
			if ($i == "survived") s += $(i + 1)
			if ($i == "max" && $(i + 1) + 0 > m) m = $(i + 1) + 0
			if ($i == "(bound") b = $(i + 1)
			if ($i == "total") l += $(i + 1)
		}
	} END {
		if (t) printf "\nkill -9: %d trials, %d survived; events lost per " \
			"kill at most %d (bound %d, one flush interval), %d in all\n",
			t, s, m, b, l
	}' "$L/notes"
fi
echo
echo "| fuzzer | executions | coverage | crashes |"
echo "|---|---|---|---|"
sed -nE 's/^(ok  |FAIL) (fuzz_[a-z]+):? ([0-9?]+) execs in ([0-9]+) s, (cov: [0-9]+ ft: [0-9]+)[^,]*, ([0-9]+) crashes.*/| \2 | \3 in \4 s | \5 | \6 |/p' \
	"$L/fuzz"
fz=$(grep -c '^FAIL' "$L/fuzz")
echo
echo "faults: $tp checks passed, $tf failed; fuzzers: $fz failed"
echo "$((tp + $(grep -c '^ok' "$L/fuzz"))) passed, $((tf + fz)) failed, 0 skipped"
[ "$tf" -eq 0 ] && [ "$fz" -eq 0 ]
