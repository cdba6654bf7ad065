#!/usr/bin/env bash
# gapsum.sh - the off-CPU summaries (sum_offcpu, issue 20): the writer
# keeps them per process, thread, state, stack, thread name and minute, and
# offcpu-top read from them prints exactly what it prints --raw, over the
# whole recording and over a 10-minute window cut mid-minute at both ends;
# a segment written before sum_offcpu existed is summarized from its raw
# intervals.  Every check compares exact text or exact counts.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-gapsum.XXXXXX)
cleanup() { chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# CSV lines end in CRLF (RFC 4180): compared as lines here.
g() { "$GPUREC" --data "$A" --format csv "$@" 2>>"$T/err" | tr -d '\r'; }

# 24,000 off-CPU intervals 50 ms apart on average (20 minutes, 3
# processes, some with NULL stacks) beside as many launches, over four
# segments, three of them sealed.
A="$T/a"
synth --data "$A" --table offcpu --table cuda_kernel --events 24000 \
	--offcpu-gap 50000000 --procs 3 --rotate-every 7000 \
	--start 2026-11-01T00:00:00Z
W="--since 2026-11-01T00:03:00.5Z --until 2026-11-01T00:13:00.25Z"

eq "sum_offcpu counts every interval once" \
	"$(g sql 'SELECT sum(intervals) FROM sum_offcpu WHERE minute IS NOT NULL')" \
	"sum(intervals)
24000"
eq "the writer lists the kinds it summarized in each segment's meta" \
	"$(for f in "$A"/*.seg; do python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?immutable=1", uri=True)
print(db.execute("SELECT value FROM meta WHERE key = ?", ("summary_kinds",)).fetchone()[0],
      db.execute("SELECT count(*) > 0 FROM summary WHERE kind = 4").fetchone()[0])' "$f"; done | sort | uniq -c | sed 's/^ *//')" \
	"4 1022 1"

# The finest grouping the summaries keep, against the raw intervals.
FINE_SUM='SELECT pid, tid, state, stack, comm, sum(intervals), sum(dur_total), max(dur_max), min(ts), max(ts_last) FROM sum_offcpu GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5'
FINE_RAW='SELECT pid, tid, state, stack, comm, count(*), sum(dur), max(dur), min(ts), max(ts) FROM offcpu GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5'
groups=$(g sql 'SELECT count(*) FROM (SELECT DISTINCT pid, tid, state, stack, comm FROM offcpu)' | tail -1)
eq "the recording has the groups the check needs (3 processes, workers, S and D, NULL stacks)" \
	"$groups" "24"
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	# shellcheck disable=SC2086
	g $win sql "$FINE_SUM" | tail -n +2 >"$T/fine.sum"
	# shellcheck disable=SC2086
	g $win sql "$FINE_RAW" | tail -n +2 >"$T/fine.raw"
	n=$(wc -l <"$T/fine.raw")
	if [ "$n" -gt 0 ] && cmp -s "$T/fine.sum" "$T/fine.raw"; then
		ok "$w: sum_offcpu by pid, tid, state, stack, comm equals offcpu's $n groups"
	else
		bad "$w: sum_offcpu by pid, tid, state, stack, comm" \
			"$(diff "$T/fine.sum" "$T/fine.raw" | head -5) ($n raw groups)"
	fi
	# shellcheck disable=SC2086
	g $win report offcpu-top --param limit=1000 >"$T/top.sum"
	# shellcheck disable=SC2086
	g $win report offcpu-top --param limit=1000 --raw >"$T/top.raw"
	n=$(($(wc -l <"$T/top.raw") - 1))
	threads=$(g $win sql 'SELECT count(*) FROM (SELECT DISTINCT pid, tid, comm, state FROM offcpu)' | tail -1)
	if [ "$n" -eq "$threads" ] && [ "$n" -gt 0 ] &&
	   cmp -s "$T/top.sum" "$T/top.raw"; then
		ok "$w: offcpu-top from summaries equals --raw ($n rows)"
	else
		bad "$w: offcpu-top from summaries equals --raw" \
			"$(diff "$T/top.sum" "$T/top.raw" | head -5) ($n rows, $threads threads)"
	fi
done
eq "the window's intervals are fewer than the recording's" \
	"$(g $W sql 'SELECT count(*) < 24000 AND count(*) > 10000 FROM offcpu' | tail -1)" "1"

# A recording made before sum_offcpu: its segments have summaries of the
# CUDA kinds only and no summary_kinds; sum_offcpu must read their raw
# intervals instead of finding no row.
O="$T/old"
cp -r "$A" "$O"
chattr -R -i "$O" 2>/dev/null
for f in "$O"/*.seg; do
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DELETE FROM meta WHERE key = ?", ("summary_kinds",))
db.execute("DELETE FROM summary WHERE kind = 4")
db.commit()' "$f"
done
eq "old segments: offcpu-top equals the new recording's" \
	"$("$GPUREC" --data "$O" --format csv report offcpu-top --param limit=1000 2>&1 | tr -d '\r')" \
	"$(g report offcpu-top --param limit=1000)"
eq "old segments: sum_offcpu still counts every interval" \
	"$("$GPUREC" --data "$O" --format csv sql 'SELECT sum(intervals) FROM sum_offcpu' 2>&1 | tr -d '\r' | tail -1)" \
	"24000"

eq "nothing on stderr" "$(cat "$T/err")" ""
finish
