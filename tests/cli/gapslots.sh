#!/usr/bin/env bash
# gapslots.sh - launch-gaps from sum_launch_slots (issue 20): the writer
# keeps, per process and minute, the 10 ms slots in which it launched a
# kernel or graph; launch-gaps finds pauses between set slots and reads
# only the launches at their two ends.  It must print exactly what --raw
# prints (a window over every launch): over the whole recording and a
# 10-minute window cut mid-minute, for min_ms 20ms, 100ms and 1s; and the
# same over segments written before the kind existed.  The launches are
# exact rows: bursts, pauses just under, at and over each min_ms (from a
# launch's end and from its start), graph launches and other graph calls
# (instantiate, which ends no pause), rows written out of time order
# across flushes, pauses across minutes and segments, a trailing pause.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-gapslots.XXXXXX)
cleanup() { chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# CSV lines end in CRLF (RFC 4180): compared as lines here.
g() { "$GPUREC" --data "$D" --format csv "$@" 2>>"$T/err" | tr -d '\r'; }

# Three processes over about 12 minutes (13 minute rows) from 2026-11-01T00:00:00Z.  Each burst
# launches every 1-3 ms (durations 0-8 ms, some NULL); each pause is one of
# PAUSES, taken from the last launch's end (as launch-gaps measures it) or,
# every third, from its start (so that its end lies inside the pause).
# pid 200 launches every third time through a graph and calls
# cudaGraphInstantiate inside pauses; pid 300 stops at 9 minutes and then
# only goes off-CPU (its trailing pause).  Rows are written in four runs
# of gpurec-synth (four segments), each shuffled in runs of 9 rows, and
# rows near each cut swapped across it: out of time order within a block
# and across segments.
S=1793491200000000000
python3 - "$T/rows" "$S" <<'PY'
import random, sys
out, S = sys.argv[1], int(sys.argv[2])
rnd = random.Random(20)
MS = 1000000
PAUSES = [5, 19, 20, 21, 25, 99, 100, 101, 150, 400, 999, 1000, 1001, 2500,
          4000, 6000, 8000, 8000]
rows = []
for pid, stop in ((100, 720), (200, 720), (300, 540)):
    t = S + rnd.randrange(1, 50) * MS + pid
    end = None
    k = 0
    while t < S + stop * 1000 * MS:
        for i in range(rnd.randrange(1, 12)):
            dur = None if rnd.random() < 0.1 else rnd.randrange(0, 8 * MS)
            tid = pid + rnd.randrange(0, 2)
            if pid == 200 and rnd.random() < 0.33:
                f = ['cuda_graph', 'op=launch', 'api=cudaGraphLaunch',
                     'graph_exec=%d' % (pid * 10)]
            else:
                f = ['cuda_kernel', 'api=cudaLaunchKernel',
                     'kernel=k%d' % rnd.randrange(3), 'grid_x=1',
                     'block_x=32']
            f += ['ts=%d' % t, 'pid=%d' % pid, 'tid=%d' % tid,
                  'comm=w%d' % tid]
            if dur is not None:
                f.append('dur=%d' % dur)
            rows.append((t, f))
            last_ts, end = t, t + (dur or 0)
            t = end + rnd.randrange(1 * MS, 3 * MS) + rnd.randrange(1000)
        k += 1
        p = rnd.choice(PAUSES) * MS
        t = (last_ts if k % 3 == 0 else end) + p
        if pid == 200 and k % 4 == 0:
            rows.append((last_ts + 1, ['cuda_graph', 'op=instantiate',
                        'api=cudaGraphInstantiate', 'ts=%d' % (last_ts + 1),
                        'pid=200', 'tid=200', 'comm=w200',
                        'dur=%d' % (p // 2)]))
    if pid == 300:
        for j in range(1, 6):
            ts = end + j * 7000 * MS
            rows.append((ts, ['offcpu', 'ts=%d' % ts, 'pid=300',
                              'tid=300', 'comm=w300', 'dur=%d' % (MS * 3),
                              'state=S']))
rows.sort(key=lambda r: r[0])
# Four parts, one gpurec-synth run (one segment) each, cut in time but
# with rows near each cut swapped across it: segments out of time order.
part = [i * 4 // len(rows) for i in range(len(rows))]
for i in range(1, len(rows)):
    if part[i] != part[i - 1]:
        for j in range(i - 15, i + 15):
            if rnd.random() < 0.4:
                part[j] = part[i] if j < i else part[i - 1]
for k in range(4):
    run = [x for (_, x), p in zip(rows, part) if p == k]
    with open('%s.%d' % (out, k), 'w') as f:
        for i in range(0, len(run), 9):
            chunk = run[i:i + 9]
            rnd.shuffle(chunk)
            for x in chunk:
                f.write('\t'.join(x) + '\n')
PY
D="$T/a"
for k in 0 1 2 3; do
	synth --data "$D" --rows "$T/rows.$k" --host h1
done
W="--since 2026-11-01T00:00:30.5Z --until 2026-11-01T00:10:30.25Z"
launches=$(cat "$T"/rows.? | grep -c 'op=launch\|^cuda_kernel')

eq "sum_launch_slots counts every kernel and graph launch once" \
	"$(g sql 'SELECT sum(launches) FROM sum_launch_slots' | tail -1)" \
	"$launches"
eq "the recording has several sealed segments, the minutes and processes the checks need" \
	"$(g sql "SELECT (SELECT count(*) >= 3 FROM segments WHERE sealed), count(DISTINCT minute), count(DISTINCT pid) FROM sum_launch_slots" | tail -1)" \
	"1,13,3"
# Every set bit is a launch's slot and every launch's slot is set.
g sql 'SELECT pid, minute, hex(slots) FROM sum_launch_slots' >"$T/bits"
g sql "SELECT pid, ts FROM cuda_kernel UNION ALL SELECT pid, ts FROM cuda_graph WHERE op = 'launch'" >"$T/launch.ts"
eq "the slots set are exactly the launches' 10 ms slots" \
	"$(python3 - "$T/bits" "$T/launch.ts" <<'PY'
import sys
bits, want = set(), set()
for l in open(sys.argv[1]).read().split()[1:]:
    pid, minute, h = l.split(',')
    b = bytes.fromhex(h)
    for i in range(len(b) * 8):
        if b[i >> 3] >> (i & 7) & 1:
            bits.add((int(pid), int(minute) + i * 10000000))
for l in open(sys.argv[2]).read().split()[1:]:
    pid, ts = map(int, l.split(','))
    want.add((pid, ts - ts % 10000000))
print(len(bits), bits == want)
PY
)" "$(g sql "SELECT count(*) FROM (SELECT DISTINCT pid, ts / 10000000 FROM (SELECT pid, ts FROM cuda_kernel UNION ALL SELECT pid, ts FROM cuda_graph WHERE op = 'launch'))" | tail -1) True"

# compare DATA LABEL ARGS...: launch-gaps from the slots (lookup_every=0:
# however many candidates there are) and --raw.
compare() {
	local d=$1 label=$2; shift 2
	"$GPUREC" --data "$d" --format csv "$@" report launch-gaps \
		--param limit=100000 --param lookup_every=0 2>>"$T/err" |
		tr -d '\r' >"$T/sum"
	"$GPUREC" --data "$d" --format csv "$@" report launch-gaps \
		--param limit=100000 --raw 2>>"$T/err" | tr -d '\r' >"$T/raw"
	local n=$(($(wc -l <"$T/raw") - 1))
	if [ "$n" -gt 0 ] && cmp -s "$T/sum" "$T/raw"; then
		ok "$label: launch-gaps equals --raw ($n pauses)"
	else
		bad "$label: launch-gaps equals --raw" \
			"$(diff "$T/sum" "$T/raw" | head -5) ($n raw rows)"
	fi
	echo "$n" >"$T/n.$label"
}
for m in 20ms 100ms 1s; do
	compare "$D" "whole, min_ms=$m" --param min_ms=$m
	# shellcheck disable=SC2086
	compare "$D" "window, min_ms=$m" $W --param min_ms=$m
done
# The rows sit on both sides of each bound: the exact test is exercised.
eq "pauses at exactly 20 ms, 100 ms and 1 s from a launch's end are listed" \
	"$(for m in 20 100 1000; do g report launch-gaps --param min_ms=${m}ms --param limit=100000 | awk -F, -v m=$m 'NR > 1 && $6 == m ".0" { n++ } END { print (n > 0) }'; done | tr '\n' ' ')" \
	"1 1 1 "
eq "pauses between 99 ms and 100 ms (start to start over 100 ms) are not listed at 100 ms" \
	"$(g report launch-gaps --param min_ms=100ms --param limit=100000 | awk -F, 'NR > 1 && $6 < 100 { n++ } END { print n + 0 }')" \
	"0"
eq "a pause ends at a graph launch, and pid 300's trailing pause ends when it was last seen" \
	"$(g report launch-gaps --param min_ms=1s --param limit=100000 | awk -F, 'NR > 1 && ($7 == "cudaGraphLaunch" || $7 == "(last seen)") { print $1, $7 }' | sort -u | tr '\n' ' ')" \
	"200 cudaGraphLaunch 300 (last seen) "
eq "some pause spans a minute, and some a segment's end" \
	"$(g sql "WITH g AS (SELECT ts, lead(ts) OVER (PARTITION BY pid ORDER BY ts) AS nx FROM (SELECT pid, ts FROM cuda_kernel UNION ALL SELECT pid, ts FROM cuda_graph WHERE op = 'launch')) SELECT (SELECT count(*) > 0 FROM g WHERE nx - ts >= 20000000 AND nx / 60000000000 > ts / 60000000000), (SELECT count(*) > 0 FROM g, segments s WHERE nx - ts >= 20000000 AND s.end_ts >= g.ts AND s.end_ts < g.nx)" | tail -1)" \
	"1,1"
# With its default lookup_every this recording, a pause per ~8 launches,
# has too many candidates: launch-gaps reads every launch, as --raw.
g report launch-gaps --param min_ms=20ms --param limit=100000 >"$T/dflt"
g report launch-gaps --param min_ms=20ms --param limit=100000 --raw >"$T/raw"
if cmp -s "$T/dflt" "$T/raw"; then
	ok "whole, min_ms=20ms, default lookup_every: equals --raw"
else
	bad "whole, min_ms=20ms, default lookup_every" "$(diff "$T/dflt" "$T/raw" | head -5)"
fi
# Below 20 ms launch-gaps reads every launch, as --raw does.
compare "$D" "whole, min_ms=5ms (raw form)" --param min_ms=5ms

# Segments written before sum_launch_slots: summary_kinds without its bit
# and no rows of kind 5; launch-gaps reads their launches for the slots.
O="$T/old"
cp -r "$D" "$O"
chattr -R -i "$O" 2>/dev/null
for f in "$O"/*.seg; do
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE meta SET value = 30 WHERE key = ?", ("summary_kinds",))
db.execute("DELETE FROM summary WHERE kind = 5")
db.commit()' "$f"
done
for m in 20ms 1s; do
	"$GPUREC" --data "$O" --format csv report launch-gaps --param min_ms=$m \
		--param limit=100000 --param lookup_every=0 2>>"$T/err" | tr -d '\r' >"$T/old.out"
	g report launch-gaps --param min_ms=$m --param limit=100000 --raw \
		>"$T/new.raw"
	if cmp -s "$T/old.out" "$T/new.raw"; then
		ok "old segments, min_ms=$m: launch-gaps equals --raw"
	else
		bad "old segments, min_ms=$m" "$(diff "$T/old.out" "$T/new.raw" | head -5)"
	fi
done
eq "old segments: sum_launch_slots still counts every launch" \
	"$("$GPUREC" --data "$O" --format csv sql 'SELECT sum(launches) FROM sum_launch_slots' 2>&1 | tr -d '\r' | tail -1)" \
	"$launches"

eq "nothing on stderr" "$(cat "$T/err")" ""
finish
