#!/usr/bin/env bash
# latsum.sh - the latency summaries (sum_runq, kind 7; sum_io, kind 8;
# issue 20): the writer keeps run-queue waits, block requests and file
# calls per process, key and minute with a duration histogram, and
# runq-latency and io-latency read from them print exactly what they print
# --raw, over the whole recording (two segments, a minute split between
# them) and over a 10-minute window cut mid-minute at both ends; a segment
# written before the kinds existed is summarized from its raw rows.  Every
# check compares exact text or exact counts.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-latsum.XXXXXX)
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
# Rows only, no header.
q() { g sql "$1" | tail -n +2; }

# 20 minutes of exact rows (deterministic, Park-Miller): 30,000 run-queue
# waits of 4 processes (pid 400 never waits on its main thread, pid 300's
# main thread renames itself halfway), 6,000 block requests on a named and
# an unnamed disk, 6,000 file calls, some failed (-errno bytes).  Every
# 7th duration is a bucket's lower bound (1000 * 2^k ns) or 1 ns below.
cat >"$T/gen.awk" <<'AWK'
# prints the rows whose ts is in [lo, hi) s after the start S (seconds).
# Times are kept as ns offsets (exact in a double) and printed after S.
function at(off) { return sprintf("%d%09d", S + int(off / 1e9), off % 1e9) }
function rnd() { seed = (seed * 16807) % 2147483647; return seed / 2147483647 }
# A duration: log-uniform from 1 ns to 16 ms, or every 7th one exactly on
# a bucket's lower bound (1000 * 2^k ns) or 1 ns below it.
function dur(i,   k) {
	if (i % 7 == 0) { k = int(rnd() * 13); return 1000 * 2 ^ k - (i % 2) }
	return int(2 ^ (rnd() * 24))
}
BEGIN {
	seed = 42; lo *= 1e9; hi *= 1e9
	for (i = 0; i < 30000; i++) {
		ts = i * 40000000 + int(rnd() * 1000000)
		p = 100 * (1 + i % 4); th = int(rnd() * 4)
		# pid 400 has no main-thread waits: its comm is its least one;
		# pid 300's main thread renames itself halfway.
		if (p == 400 && th == 0) th = 3
		tid = p + th
		if (th == 0) c = p == 300 ? (i < 15000 ? "boot" : "trainer") : "python3"
		else c = p == 400 ? "zz-" th : "worker-" th
		d = dur(i)
		if (ts >= lo && ts < hi)
			printf "runq\tts=%s\tpid=%d\ttid=%d\tcomm=%s\tdur=%d\tcpu=%d\n", at(ts), p, tid, c, d, i % 8
	}
	for (i = 0; i < 6000; i++) {
		ts = i * 200000000 + 7
		d = dur(i) * 4
		p = i % 3 ? 100 : 200
		if (i % 5 == 0)
			line = sprintf("dev=8:0\top=%s\tbytes=%d", i % 2 ? "F" : "W", (i % 2) ? 0 : 4096 * (1 + i % 9))
		else
			line = sprintf("dev=259:0\top=%s\tbytes=%d\tdisk=nvme0n1", i % 3 ? "R" : "W", 4096 * (1 + i % 33))
		if (ts >= lo && ts < hi)
			printf "block_io\tts=%s\tpid=%d\ttid=%d\tcomm=kworker\tdur=%d\tsector=%d\t%s\n", at(ts), p, p, d, i * 8, line
		ts += 100000000
		sc = i % 4 == 0 ? "read" : i % 4 == 1 ? "write" : i % 4 == 2 ? "openat" : "fsync"
		b = sc == "openat" ? 3 + i % 5 : sc == "fsync" ? 0 : 512 * (i % 17)
		if (i % 11 == 0) b = -(2 + i % 3)	# -ENOENT, -EIO...
		p = 100 * (1 + i % 3)
		if (ts >= lo && ts < hi)
			printf "file_io\tts=%s\tpid=%d\ttid=%d\tcomm=%s\tdur=%d\tsyscall=%s\tfd=%d\tbytes=%d\n", at(ts), p, p + i % 2, i % 2 ? "loader" : "python3", dur(i + 3), sc, 3 + i % 5, b
	}
}
AWK
S=1793491200 # 2026-11-01T00:00:00Z
A="$T/a"
# Two runs, so two sealed segments, the second from 00:11:30: minute 11 is
# in both.
awk -v S=$S -v lo=0 -v hi=690 -f "$T/gen.awk" >"$T/r1.tsv"
awk -v S=$S -v lo=690 -v hi=1e9 -f "$T/gen.awk" >"$T/r2.tsv"
synth --data "$A" --host alpha --rows "$T/r1.tsv"
synth --data "$A" --host alpha --rows "$T/r2.tsv"
W="--since 2026-11-01T00:03:00.5Z --until 2026-11-01T00:13:00.25Z"

eq "the recording: 30,000 waits, 6,000 block requests, 6,000 file calls in 2 segments" \
	"$(q 'SELECT (SELECT count(*) FROM runq), (SELECT count(*) FROM block_io), (SELECT count(*) FROM file_io), (SELECT count(*) FROM segments WHERE sealed)')" \
	"30000,6000,6000,2"
eq "sum_runq counts every wait once, sum_io every request and call" \
	"$(q 'SELECT (SELECT sum(waits) FROM sum_runq WHERE minute IS NOT NULL), (SELECT sum(calls) FROM sum_io WHERE minute IS NOT NULL AND block = 1), (SELECT sum(calls) FROM sum_io WHERE minute IS NOT NULL AND block = 0)')" \
	"30000,6000,6000"
eq "each segment's meta lists sum_runq (7) and sum_io (8), and holds their rows" \
	"$(for f in "$A"/*.seg; do python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?immutable=1", uri=True)
k = int(db.execute("SELECT value FROM meta WHERE key = ?", ("summary_kinds",)).fetchone()[0])
print(k >> 7 & 1, k >> 8 & 1, *db.execute("SELECT count(*) > 0 FROM summary WHERE kind = ? AND minute = -1", (7,)).fetchone(), *db.execute("SELECT count(*) > 0 FROM summary WHERE kind = ? AND minute = -1", (8,)).fetchone())' "$f"; done | sort | uniq -c | sed 's/^ *//')" \
	"2 1 1 1 1"

# The finest grouping the summaries keep, against the raw rows (the
# bucket as the reports compute it from dur).
BUCKET='CASE WHEN dur < 1000 THEN 0 ELSE CAST(power(2, CAST(log2(dur / 1000.0) AS INTEGER)) AS INTEGER) END'
RUNQ_SUM='SELECT pid, comm, main, bucket_us, sum(waits), sum(dur_total), min(dur_min), max(dur_max), min(ts), max(ts_last) FROM sum_runq GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4'
RUNQ_RAW="SELECT pid, comm, tid = pid, $BUCKET, count(*), sum(dur), min(dur), max(dur), min(ts), max(ts) FROM runq GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
BLOCK_SUM='SELECT pid, dev, disk, op, bucket_us, sum(calls), sum(bytes), sum(dur_total), min(dur_min), max(dur_max), min(ts), max(ts_last) FROM sum_io WHERE block = 1 GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5'
BLOCK_RAW="SELECT pid, dev, disk, op, $BUCKET, count(*), sum(bytes), sum(dur), min(dur), max(dur), min(ts), max(ts) FROM block_io GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
FILE_SUM='SELECT pid, syscall, comm, sum(calls), sum(bytes), sum(dur_total), min(dur_min), max(dur_max), min(ts), max(ts_last) FROM sum_io WHERE block = 0 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3'
FILE_RAW='SELECT pid, syscall, comm, count(*), sum(max(bytes, 0)), sum(dur), min(dur), max(dur), min(ts), max(ts) FROM file_io GROUP BY 1, 2, 3 ORDER BY 1, 2, 3'
# The groups each check needs in the whole recording.
eq "runq groups: 4 processes, 9 thread names, main threads and not, buckets 0 to 16384 us" \
	"$(q "SELECT count(DISTINCT pid), count(DISTINCT comm), count(DISTINCT tid = pid), min($BUCKET), max($BUCKET), count(*) FROM (SELECT DISTINCT pid, tid, comm, dur FROM runq) GROUP BY NULL" | cut -d, -f1-5)" \
	"4,9,2,0,16384"
same() { # NAME SUMMARY-SQL RAW-SQL WHICH
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
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	same "sum_runq by pid, comm, main thread, bucket" "$RUNQ_SUM" "$RUNQ_RAW"
	same "sum_io's block rows by pid, dev, disk, op, bucket" "$BLOCK_SUM" "$BLOCK_RAW"
	same "sum_io's file rows by pid, syscall, comm" "$FILE_SUM" "$FILE_RAW"
	for r in runq-latency io-latency; do
		# shellcheck disable=SC2086
		g $win report $r >"$T/$r.sum"
		# shellcheck disable=SC2086
		g $win report $r --raw >"$T/$r.raw"
		n=$(($(wc -l <"$T/$r.raw") - 1))
		if [ "$n" -gt 0 ] && cmp -s "$T/$r.sum" "$T/$r.raw"; then
			ok "$w: $r from summaries equals --raw ($n rows)"
		else
			bad "$w: $r from summaries equals --raw" \
				"$(diff "$T/$r.sum" "$T/$r.raw" | head -5) ($n rows)"
		fi
		cp "$T/$r.sum" "$T/$r.$w"
	done
done
eq "the window holds the waits its 599.75 s hold in the rows written" \
	"$(g $W sql 'SELECT count(*) FROM runq' | tail -1)" \
	"$(cat "$T/r1.tsv" "$T/r2.tsv" | awk -F'\t' -v lo=$((S * 1000000000 + 180500000000)) -v hi=$((S * 1000000000 + 780250000000)) \
		'$1 == "runq" { t = substr($2, 4) } $1 == "runq" && t >= lo "" && t <= hi "" { n++ } END { print n }')"
eq "runq-latency: each process's waits, and one comm per pid (main thread's, the last renaming; else the least)" \
	"$(grep -E '^[0-9]+,[^,]*,,' "$T/runq-latency.whole" | cut -d, -f1-4 | tr '\n' ' ')" \
	"100,python3,,7500 200,python3,,7500 300,trainer,,7500 400,zz-1,,7500 "
eq "runq-latency: every process's histogram sums to its waits" \
	"$(awk -F, 'NR > 1 && $3 == "" { w[$1] = $4 } NR > 1 && $3 != "" { h[$1] += $4 } END { for (p in w) print p, w[p] == h[p] }' "$T/runq-latency.whole" | sort | tr '\n' ' ')" \
	"100 1 200 1 300 1 400 1 "
eq "io-latency: block devices and ops, their requests and bytes" \
	"$(grep '^block,' "$T/io-latency.whole" | awk -F, '$4 == ""' | cut -d, -f2,3,5,6 | tr '\n' ' ')" \
	"$(q "SELECT dev || coalesce(' ' || disk, ''), op, count(*), sum(bytes) FROM block_io GROUP BY 1, 2 ORDER BY 1, 2" | tr '\n' ' ')"
eq "io-latency: file calls per process and syscall, failed calls' bytes left out" \
	"$(grep '^file,' "$T/io-latency.whole" | cut -d, -f2,3,5,6 | tr '\n' ' ')" \
	"$(q "SELECT pid || ' ' || min(comm), syscall, count(*), sum(max(bytes, 0)) FROM file_io GROUP BY pid, syscall ORDER BY 1, 2" | tr '\n' ' ')"

# A recording made before sum_runq and sum_io: no kind 7 or 8 rows, their
# bits not in summary_kinds; both must read the raw rows instead of
# finding none.
O="$T/old"
cp -r "$A" "$O"
chattr -R -i "$O" 2>/dev/null
for f in "$O"/*.seg; do
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
k = int(db.execute("SELECT value FROM meta WHERE key = ?", ("summary_kinds",)).fetchone()[0])
db.execute("UPDATE meta SET value = ? WHERE key = ?", (k & ~(1 << 7 | 1 << 8), "summary_kinds"))
db.execute("DELETE FROM summary WHERE kind IN (7, 8)")
db.commit()' "$f"
done
for r in runq-latency io-latency; do
	eq "old segments: $r equals the new recording's" \
		"$("$GPUREC" --data "$O" --format csv report $r 2>&1 | tr -d '\r')" \
		"$(cat "$T/$r.whole")"
	eq "old segments: $r over the window equals the new recording's" \
		"$("$GPUREC" --data "$O" $W --format csv report $r 2>&1 | tr -d '\r')" \
		"$(cat "$T/$r.window")"
done
eq "old segments: sum_runq and sum_io still count every event" \
	"$("$GPUREC" --data "$O" --format csv sql 'SELECT (SELECT sum(waits) FROM sum_runq), (SELECT sum(calls) FROM sum_io)' 2>&1 | tr -d '\r' | tail -1)" \
	"30000,12000"

# process's I/O section reads sum_io too: the same lines as its --raw half
# (file calls that failed count, their bytes do not), for pids with block
# requests and file calls, whole and in the window.
for pid in 100 200 300; do
	for w in whole window; do
		[ $w = whole ] && win="" || win=$W
		# shellcheck disable=SC2086
		# (these pids have no process row: its "matched nothing" line is
		# expected on stderr)
		sum=$("$GPUREC" --data "$A" --format csv $win report process --param pid=$pid 2>/dev/null | tr -d '\r' | grep -E '^(file|block) i/o,')
		# shellcheck disable=SC2086
		raw=$("$GPUREC" --data "$A" --format csv $win report process --param pid=$pid --raw 2>/dev/null | tr -d '\r' | grep -E '^(file|block) i/o,')
		n=$(echo "$sum" | grep -c .)
		if [ "$n" -ge 4 ] && [ "$sum" == "$raw" ]; then
			ok "$w: process $pid's I/O lines from sum_io equal --raw ($n lines)"
		else
			bad "$w: process $pid's I/O lines" "$(diff <(echo "$sum") <(echo "$raw") | head -4) ($n lines)"
		fi
	done
done

eq "nothing on stderr" "$(cat "$T/err")" ""
finish
