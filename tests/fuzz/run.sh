#!/usr/bin/env bash
# run.sh - runs each fuzzer for FUZZ_SECONDS seconds (or FUZZ_RUNS inputs,
# the CI smoke) over its corpus and reports one line per fuzzer:
#   ok   fuzz_block: 1234567 execs in 600 s, cov 812 ft 2345, corpus 410, 0 crashes
# then `N passed, N failed, N skipped`.  A crash, leak, timeout or out-of-memory input
# fails the fuzzer and its reproducer is kept in $FUZZ_DIR/crashes/ (rerun:
# build/fuzz/fuzz_block FILE).  Env: FUZZ_DIR (build/fuzz: the binaries,
# seeds/ and the corpus/ that grows across runs), FUZZ_SECONDS, FUZZ_RUNS,
# FUZZ_NICE (nice level, default 10), FUZZ_ONLY (one fuzzer's name).
set -uo pipefail
FUZZ_DIR=${FUZZ_DIR:-build/fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_RUNS=${FUZZ_RUNS:-}
FUZZ_NICE=${FUZZ_NICE:-10}
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
mkdir -p "$FUZZ_DIR/crashes" "$FUZZ_DIR/logs"
for name in block segment; do
	f=fuzz_$name
	[ -n "${FUZZ_ONLY:-}" ] && [ "$FUZZ_ONLY" != "$f" ] && continue
	bin=$FUZZ_DIR/$f
	if [ ! -x "$bin" ]; then
		bad "$f" "$bin not built (make $bin)"
		continue
	fi
	mkdir -p "$FUZZ_DIR/corpus/$name"
	log=$FUZZ_DIR/logs/$f.log
	if [ -n "$FUZZ_RUNS" ]; then
		lim=(-runs="$FUZZ_RUNS")
	else
		lim=(-max_total_time="$FUZZ_SECONDS")
	fi
	before=$(find "$FUZZ_DIR/crashes" -name "$f-*" | wc -l)
	# The segment fuzzer writes a file and opens SQLite per input: give
	# it room for a slow one; 2 GiB of RSS is far above any real read.
	start=$(date +%s)
	nice -n "$FUZZ_NICE" "$bin" "${lim[@]}" -print_final_stats=1 \
		-timeout=25 -rss_limit_mb=2048 -max_len=262144 \
		-artifact_prefix="$FUZZ_DIR/crashes/$f-" \
		"$FUZZ_DIR/corpus/$name" "$FUZZ_DIR/seeds/$name" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
	after=$(find "$FUZZ_DIR/crashes" -name "$f-*" | wc -l)
	crashes=$((after - before))
	msg="${execs:-?} execs in $secs s, ${cov:-cov ?}, $crashes crashes"
	if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]; then
		ok "$f: $msg"
	else
		bad "$f" "$msg, exit $rc; log $log; reproducers in $FUZZ_DIR/crashes"
		grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/     /'
	fi
done
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
