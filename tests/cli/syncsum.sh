#!/usr/bin/env bash
# syncsum.sh - sum_sync (kind 9; issue 20): the writer keeps CUDA
# synchronizations per process, thread, API and minute, and sync-long,
# which reads raw only the minutes whose longest wait can rank, prints
# exactly what it prints --raw: over two hosts (the same pids on both),
# the whole recording (one host's two segments split a minute) and a
# window cut mid-minute at both ends, for several per_thread and limit
# values; a segment written before the kind existed is read raw.  Every
# check compares exact text or exact counts.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-syncsum.XXXXXX)
cleanup() { chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# CSV lines end in CRLF (RFC 4180): compared as lines here.
g() { "$GPUREC" "${DATA[@]}" --format csv "$@" 2>>"$T/err" | tr -d '\r'; }
# Rows only, no header.
q() { g sql "$1" | tail -n +2; }

# Two hours of exact synchronizations (deterministic, Park-Miller) by
# host: pids 100 (threads 100-103) and 200 (200, 201) on both hosts, and
# on alpha thread 104 of pid 100 waiting only in minutes 5 and 6 (fewer
# minutes than per_thread).  Durations log-uniform from 1 ns to 16.8 ms;
# every 13th call has none (still waiting when the recording ended:
# NULL), every 997th waits exactly 20 ms (longer than any other: ties,
# ordered by ts), every 19th fails, every 101st has no thread id.
cat >"$T/gen.awk" <<'AWK'
function at(off) { return sprintf("%d%09d", S + int(off / 1e9), off % 1e9) }
function rnd() { seed = (seed * 16807) % 2147483647; return seed / 2147483647 }
BEGIN {
	seed = host == "alpha" ? 7 : 11; lo *= 1e9; hi *= 1e9
	split("cudaStreamSynchronize cudaDeviceSynchronize cudaEventSynchronize cuStreamSynchronize", api, " ")
	for (i = 0; i < 24000; i++) {
		ts = i * 300000000 + int(rnd() * 1000000)
		p = i % 3 ? 100 : 200
		tid = p + int(rnd() * (p == 100 ? 4 : 2))
		if (host == "alpha" && p == 100 && ts >= 300e9 && ts < 420e9 && i % 10 == 0) tid = 104
		d = int(2 ^ (rnd() * 24))
		f = sprintf("cuda_sync\tts=%s\tpid=%d\ttid=%d\tcomm=%s\tapi=%s\tstream=%d\tret=%d",
			at(ts), p, tid, tid == p ? "python3" : "worker-" (tid - p),
			api[1 + int(rnd() * 4)], 4096 * (1 + i % 3), i % 19 ? 0 : 700)
		if (i % 997 == 0) d = 20000000
		if (i % 13) f = f "\tdur=" d
		# A thread id the probe could not read: (pid, NULL) is a
		# thread of its own.
		if (i % 101 == 50) sub(/\ttid=[0-9]+/, "", f)
		if (ts >= lo && ts < hi) print f
	}
}
AWK
S=1793491200 # 2026-11-01T00:00:00Z
A="$T/alpha" B="$T/beta"
# alpha in two runs, so two sealed segments, the second from 00:11:30:
# minute 11 is in both.  Small blocks, so that reading a few minutes
# reads a few blocks.
awk -v S=$S -v host=alpha -v lo=0 -v hi=690 -f "$T/gen.awk" >"$T/a1.tsv"
awk -v S=$S -v host=alpha -v lo=690 -v hi=1e9 -f "$T/gen.awk" >"$T/a2.tsv"
awk -v S=$S -v host=beta -v lo=0 -v hi=1e9 -f "$T/gen.awk" >"$T/b.tsv"
synth --data "$A" --host alpha --block-rows 64 --rows "$T/a1.tsv"
synth --data "$A" --host alpha --block-rows 64 --rows "$T/a2.tsv"
synth --data "$B" --host beta --block-rows 64 --rows "$T/b.tsv"
DATA=(--data "$A" --data "$B")
W="--since 2026-11-01T00:03:00.5Z --until 2026-11-01T00:13:00.25Z"

eq "the recording: 48,000 synchronizations, 3,694 with no duration, 3 segments" \
	"$(q 'SELECT (SELECT count(*) FROM cuda_sync), (SELECT sum(dur IS NULL) FROM cuda_sync), (SELECT count(*) FROM segments WHERE sealed)')" \
	"48000,3694,3"
eq "sum_sync counts every synchronization once" \
	"$(q 'SELECT sum(syncs) FROM sum_sync WHERE minute IS NOT NULL')" "48000"
eq "each segment's meta lists sum_sync (9), and holds its rows" \
	"$(for f in "$A"/*.seg "$B"/*.seg; do python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?immutable=1", uri=True)
k = int(db.execute("SELECT value FROM meta WHERE key = ?", ("summary_kinds",)).fetchone()[0])
print(k >> 9 & 1, *db.execute("SELECT count(*) > 0 FROM summary WHERE kind = 9 AND minute = -1").fetchone())' "$f"; done | sort | uniq -c | sed 's/^ *//')" \
	"3 1 1"

# The finest grouping sum_sync keeps, against the raw rows (a wait with no
# duration counts 0).
SUM='SELECT host, pid, tid, api, sum(syncs), sum(dur_total), min(dur_min), max(dur_max), sum(errors), min(ts), max(ts_last) FROM sum_sync GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4'
RAW='SELECT host, pid, tid, api, count(*), sum(coalesce(dur, 0)), min(coalesce(dur, 0)), max(coalesce(dur, 0)), sum(ret != 0), min(ts), max(ts) FROM cuda_sync GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4'
same() { # NAME SUMMARY-SQL RAW-SQL
	local n
	# shellcheck disable=SC2086
	g $win sql "$2" | tail -n +2 >"$T/s"
	# shellcheck disable=SC2086
	g $win sql "$3" | tail -n +2 >"$T/r"
	n=$(wc -l <"$T/r")
	if [ "$n" -gt 0 ] && cmp -s "$T/s" "$T/r"; then
		ok "$w: $1 equals the raw rows' $n groups"
	else
		bad "$w: $1" "$(diff "$T/s" "$T/r" | head -5) ($n raw groups)"
	fi
}
# report NAME PARAMS...: sync-long from sum_sync equals --raw, saved as
# $T/sl.$w.NAME.
report() {
	local name=$1 n; shift
	# shellcheck disable=SC2086
	g $win report sync-long "$@" >"$T/sl.$w.$name"
	# shellcheck disable=SC2086
	g $win report sync-long --raw "$@" >"$T/raw"
	n=$(($(wc -l <"$T/raw") - 1))
	if [ "$n" -gt 0 ] && cmp -s "$T/sl.$w.$name" "$T/raw"; then
		ok "$w: sync-long $* equals --raw ($n rows)"
	else
		bad "$w: sync-long $* equals --raw" "$(diff "$T/sl.$w.$name" "$T/raw" | head -5) ($n rows)"
	fi
}
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	same "sum_sync by host, pid, tid, api" "$SUM" "$RAW"
	report default
	report one --param per_thread=1
	report three --param per_thread=3 --param limit=7
	report all --param per_thread=100000 --param limit=100000
done
# Each thread's rows, against SQL's own ORDER BY ... LIMIT per thread.
threads=$(q 'SELECT DISTINCT pid || '"' '"' || tid FROM cuda_sync WHERE dur IS NOT NULL AND tid IS NOT NULL ORDER BY pid, tid')
eq "7 threads (pid 100 and 200 on both hosts are one thread each)" "$(echo "$threads" | wc -l)" 7
eq "sync-long (all): the 440 waits with no thread id, as (pid, NULL) threads" \
	"$(grep -c '^[0-9]*,,' "$T/sl.whole.all")" \
	"$(q 'SELECT count(*) FROM cuda_sync WHERE tid IS NULL AND dur IS NOT NULL')"
eq "sync-long: per_thread=0 lists nothing, as --raw" \
	"$(g report sync-long --param per_thread=0 | wc -l) $(g report sync-long --raw --param per_thread=0 | wc -l)" "1 1"
for n in default all; do
	[ $n = default ] && k=5 || k=100000
	while read -r pid tid; do
		eq "sync-long ($n): thread $pid/$tid's rows are its $k longest, ties by ts" \
			"$(grep "^$pid,$tid," "$T/sl.whole.$n" | cut -d, -f5,8)" \
			"$(q "SELECT dur, ts FROM cuda_sync WHERE pid = $pid AND tid = $tid AND dur IS NOT NULL ORDER BY dur DESC, ts LIMIT $k")"
	done <<<"$threads"
done
eq "sync-long per_thread=1: every thread's first row but 104's is a 20 ms tie" \
	"$(tail -n +2 "$T/sl.whole.one" | grep -v -e '^100,104,' -e '^[0-9]*,,' | cut -d, -f5 | sort -u)" "20000000"

# Reading only the minutes that can rank reads fewer blocks than every
# synchronization (GPUREC_DEBUG_STATS counts decoded blocks).
blocks() { GPUREC_DEBUG_STATS=1 "$GPUREC" "${DATA[@]}" report sync-long "$@" 2>&1 >/dev/null | sed -n 's/.*blocks_read=//p'; }
sb=$(blocks) rb=$(blocks --raw)
if [ -n "$sb" ] && [ -n "$rb" ] && [ "$sb" -gt 0 ] && [ $((sb * 3)) -lt "$rb" ]; then
	ok "sync-long reads under a third of the blocks --raw reads ($sb of $rb)"
else
	bad "sync-long reads under a third of the blocks --raw reads" "$sb of $rb"
fi

# Segments written before sum_sync: no kind 9 rows, its bit not in
# summary_kinds; sum_sync and sync-long read the raw rows instead.
O="$T/old"
cp -r "$A" "$O"
chattr -R -i "$O" 2>/dev/null
for f in "$O"/*.seg; do
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
k = int(db.execute("SELECT value FROM meta WHERE key = ?", ("summary_kinds",)).fetchone()[0])
db.execute("UPDATE meta SET value = ? WHERE key = ?", (k & ~(1 << 9), "summary_kinds"))
db.execute("DELETE FROM summary WHERE kind = 9")
db.commit()' "$f"
done
DATA=(--data "$O" --data "$B")
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	# shellcheck disable=SC2086
	eq "old segments: sync-long over the $w equals the new recording's" \
		"$(g $win report sync-long)" "$(cat "$T/sl.$w.default")"
done
eq "old segments: sum_sync still counts every synchronization" \
	"$(q 'SELECT sum(syncs) FROM sum_sync')" "48000"
eq "no warnings" "$(cat "$T/err")" ""
finish
