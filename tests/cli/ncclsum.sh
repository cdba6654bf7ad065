#!/usr/bin/env bash
# ncclsum.sh - the NCCL summaries (sum_nccl, issue 20) and the text-key
# filter of the summary tables (issue 18's gpu-util).  The writer keeps NCCL
# calls per process, communicator, rank, op, communicator size, bytes per
# call and minute; nccl-sum read from them prints exactly what it prints
# --raw, over the whole recording and a window cut mid-minute at both
# ends; a segment written before sum_nccl is summarized from its raw rows.
# `kernel IN (...)` / `kernel = ...` on sum_kernel, which the table answers
# from only those kernels' stored rows, gives the rows SQLite's own test
# gives.  Every check compares exact text or exact counts.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-ncclsum.XXXXXX)
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

# An 8-rank NCCL job of 1,500 iterations 800 ms apart (20 minutes: its
# collectives, sends/receives, group calls and communicator set-up) beside
# 30,000 launches of 3 processes, over several segments, all but the last
# sealed.
A="$T/a"
synth --data "$A" --table nccl --table cuda_kernel --events 30000 \
	--rate 25 --procs 3 --nccl-iters 1500 --nccl-step-ms 800 --rotate-every 12000 \
	--start 2026-11-01T00:00:00Z
W="--since 2026-11-01T00:03:00.5Z --until 2026-11-01T00:13:00.25Z"
N=$(g sql 'SELECT count(*) FROM nccl' | tail -1)

eq "sum_nccl counts every NCCL call once" \
	"$(g sql 'SELECT sum(calls) FROM sum_nccl WHERE minute IS NOT NULL' | tail -1)" "$N"
eq "each segment's meta lists sum_nccl (kind 6) among the kinds summarized" \
	"$(for f in "$A"/*.seg; do python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?immutable=1", uri=True)
k = int(db.execute("SELECT value FROM meta WHERE key = ?", ("summary_kinds",)).fetchone()[0])
print(k >> 6 & 1)' "$f"; done | sort -u)" "1"

# The finest grouping the summaries keep, against the raw calls.
FINE_SUM='SELECT pid, comm_id, rank, op, nranks, call_bytes, sum(calls), sum(bytes), sum(dur_total), min(dur_min), max(dur_max), min(ts), max(ts_last) FROM sum_nccl GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6'
FINE_RAW='SELECT pid, comm_id, rank, op, nranks, bytes, count(*), coalesce(sum(bytes), 0), sum(dur), min(dur), max(dur), min(ts), max(ts) FROM nccl GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6'
eq "the job has the rows the check needs (8 ranks; collectives, p2p, group calls)" \
	"$(g sql "SELECT count(DISTINCT rank), count(DISTINCT op) >= 6, sum(bytes IS NULL) > 0 FROM nccl" | tail -1)" \
	"8,1,1"
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	# shellcheck disable=SC2086
	g $win sql "$FINE_SUM" | tail -n +2 >"$T/fine.sum"
	# shellcheck disable=SC2086
	g $win sql "$FINE_RAW" | tail -n +2 >"$T/fine.raw"
	n=$(wc -l <"$T/fine.raw")
	if [ "$n" -gt 20 ] && cmp -s "$T/fine.sum" "$T/fine.raw"; then
		ok "$w: sum_nccl by pid, comm, rank, op, nranks, bytes equals nccl's $n groups"
	else
		bad "$w: sum_nccl by pid, comm, rank, op, nranks, bytes" \
			"$(diff "$T/fine.sum" "$T/fine.raw" | head -5) ($n raw groups)"
	fi
	# shellcheck disable=SC2086
	g $win report nccl-sum >"$T/ns.sum"
	# shellcheck disable=SC2086
	g $win report nccl-sum --raw >"$T/ns.raw"
	n=$(($(wc -l <"$T/ns.raw") - 1))
	if [ "$n" -ge 8 ] && cmp -s "$T/ns.sum" "$T/ns.raw"; then
		ok "$w: nccl-sum from summaries equals --raw ($n rows)"
	else
		bad "$w: nccl-sum from summaries equals --raw" \
			"$(diff "$T/ns.sum" "$T/ns.raw" | head -5) ($n rows)"
	fi
	# gpu-util's NCCL time per process and minute.
	# shellcheck disable=SC2086
	eq "$w: NCCL time per process and minute from sum_nccl equals nccl's" \
		"$(g $win sql 'SELECT pid, minute AS m, sum(dur_total) AS d FROM sum_nccl GROUP BY 1, 2 ORDER BY 1, 2' | md5sum)" \
		"$(g $win sql 'SELECT pid, ts / 60000000000 * 60000000000 AS m, sum(dur) AS d FROM nccl GROUP BY 1, 2 ORDER BY 1, 2' | md5sum)"
done
eq "the window's calls are fewer than the recording's" \
	"$(g $W sql "SELECT count(*) < $N AND count(*) > $N / 3 FROM nccl" | tail -1)" "1"

# A recording made before sum_nccl: no kind 6 rows, its bit not in
# summary_kinds; sum_nccl must read the raw calls instead of finding none.
O="$T/old"
cp -r "$A" "$O"
chattr -R -i "$O" 2>/dev/null
for f in "$O"/*.seg; do
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE meta SET value = CAST(value AS INTEGER) & ~64 WHERE key = ?", ("summary_kinds",))
db.execute("DELETE FROM summary WHERE kind = 6")
db.commit()' "$f"
done
eq "old segments: nccl-sum equals the new recording's" \
	"$("$GPUREC" --data "$O" --format csv report nccl-sum 2>&1 | tr -d '\r')" \
	"$(g report nccl-sum)"
eq "old segments: sum_nccl still counts every call" \
	"$("$GPUREC" --data "$O" --format csv sql 'SELECT sum(calls) FROM sum_nccl' 2>&1 | tr -d '\r' | tail -1)" "$N"

# The text-key filter: the table reads only the named kernels' rows; a `+`
# before the column keeps SQLite from handing the test down, so the table
# returns every row and SQLite filters: the same rows either way.
TOP='SELECT kernel FROM sum_kernel GROUP BY kernel ORDER BY sum(launches) DESC, kernel'
TOP2="$TOP LIMIT 2"
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	for f in "kernel IN ($TOP2)" "+kernel IN ($TOP2)" \
		 "kernel = ($TOP LIMIT 1 OFFSET 1)" "+kernel = ($TOP LIMIT 1 OFFSET 1)"; do
		# shellcheck disable=SC2086
		g $win sql "SELECT pid, minute, kernel, grid_x, block_x, sum(launches), sum(dur_total) FROM sum_kernel WHERE $f GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5" >"$T/k.${f:0:1}"
		n=$(($(wc -l <"$T/k.${f:0:1}") - 1))
		[ "${f:0:1}" == "+" ] || continue
		if [ "$n" -gt 30 ] && cmp -s "$T/k.k" "$T/k.+"; then
			ok "$w: sum_kernel WHERE ${f:1:8}… reads the same $n rows as SQLite's own filter"
		else
			bad "$w: sum_kernel WHERE ${f:1:8}…" "$(diff "$T/k.k" "$T/k.+" | head -3) ($n rows)"
		fi
	done
done
eq "a kernel no segment has: no row" \
	"$(g sql "SELECT count(*) FROM sum_kernel WHERE kernel = 'no such kernel' AND minute >= 0" | tail -1)" "0"
eq "= NULL: no row" \
	"$(g sql "SELECT count(*) FROM sum_kernel WHERE kernel = NULL" | tail -1)" "0"
eq "a list mixing text and numbers: SQLite's own answer" \
	"$(g sql "SELECT sum(launches) FROM sum_kernel WHERE kernel IN (5, ($TOP LIMIT 1))" | tail -1)" \
	"$(g sql "SELECT sum(launches) FROM sum_kernel WHERE +kernel IN (5, ($TOP LIMIT 1))" | tail -1)"
eq "COLLATE NOCASE: the filter is left to SQLite, the rows still come" \
	"$(g sql "SELECT sum(launches) FROM sum_kernel WHERE kernel = upper(($TOP LIMIT 1)) COLLATE NOCASE" | tail -1)" \
	"$(g sql "SELECT sum(launches) FROM sum_kernel WHERE kernel = ($TOP LIMIT 1)" | tail -1)"
eq "the main kernel's launches from its rows equal cuda_kernel's" \
	"$(g sql "SELECT sum(launches) FROM sum_kernel WHERE kernel IN ($TOP LIMIT 1) AND minute >= 0" | tail -1)" \
	"$(g sql "SELECT count(*) FROM cuda_kernel WHERE kernel IN ($TOP LIMIT 1)" | tail -1)"

# Over a sealed segment the filter seeks to each minute, process and id
# (its whole-segment rows list the processes); a segment without them (one
# still being written, or sealed by an older gpurec) is walked: the same
# rows either way.
U="$T/unsealed"
cp -r "$A" "$U"
chattr -R -i "$U" 2>/dev/null
for f in "$U"/*.seg; do
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DELETE FROM summary WHERE kind = 2 AND minute = -1")
db.commit()' "$f"
done
K="SELECT pid, minute, kernel, grid_x, block_x, sum(launches), sum(dur_total) FROM sum_kernel WHERE kernel IN ($TOP2) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	# shellcheck disable=SC2086
	eq "$w: kernel IN over segments without whole-segment rows: the same rows" \
		"$("$GPUREC" --data "$U" $win --format csv sql "$K" 2>&1 | tr -d '\r' | md5sum)" \
		"$(g $win sql "$K" | md5sum)"
done

eq "nothing on stderr" "$(cat "$T/err")" ""
finish
