#!/usr/bin/env bash
# lookups.sh - lookups into the event tables one after another (a join's
# or a correlated subquery's: launch-gaps' ends of each pause, its off-CPU
# and file calls per pause) keep their sealed segment open and its last
# block decoded from one to the next, even across the cursors SQLite opens
# for each run of a subquery.  The answers must be those of the same
# lookups into a plain copy of the rows: lookups alternating between
# columns of one block (a different set decoded each time), between
# tables, hopping back and forth across segments, over a host filter and
# a window; and the segments opened must be few (one per move to another
# segment, not one per lookup).
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-lookups.XXXXXX)
cleanup() { [ -n "${KEEP:-}" ] || { chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
g() { "$GPUREC" --data "$D" --format csv "$@" 2>>"$T/err" | tr -d '\r'; }

# Four segments of 40 s each, one gpurec-synth run apiece: two processes
# launch a kernel every 7 ms (some without a duration) and go off-CPU
# every 50 ms.  Blocks of 2,000 rows (--flush-every), so each segment has
# several.
S=1793491200000000000
python3 - "$T/rows" "$S" <<'PY'
import random, sys
out, S = sys.argv[1], int(sys.argv[2])
rnd = random.Random(7)
MS = 1000000
for k in range(4):
    with open('%s.%d' % (out, k), 'w') as f:
        for pid in (100, 200):
            t = S + k * 40000 * MS + pid
            while t < S + (k + 1) * 40000 * MS:
                tid = pid + rnd.randrange(2)
                x = ['cuda_kernel', 'ts=%d' % t, 'pid=%d' % pid,
                     'tid=%d' % tid, 'comm=w%d' % tid,
                     'api=cudaLaunchKernel', 'kernel=k%d' % rnd.randrange(4),
                     'grid_x=%d' % rnd.randrange(1, 9), 'block_x=32']
                if rnd.random() > 0.1:
                    x.append('dur=%d' % rnd.randrange(0, 5 * MS))
                f.write('\t'.join(x) + '\n')
                if t % (50 * MS) < 7 * MS:
                    f.write('\t'.join(['offcpu', 'ts=%d' % (t + 1),
                                       'pid=%d' % pid, 'tid=%d' % tid,
                                       'comm=w%d' % tid,
                                       'dur=%d' % rnd.randrange(MS, 9 * MS),
                                       'state=S']) + '\n')
                t += 7 * MS
PY
D="$T/d"
for k in 0 1 2 3; do
	synth --data "$D" --rows "$T/rows.$k" --host h1 --flush-every 2000
done
eq "four sealed segments, several blocks of launches each" \
	"$(g sql "SELECT count(*), sum(sealed) FROM segments" | tail -1) $(g sql 'SELECT count(*) FROM cuda_kernel' | tail -1)" \
	"4,4 45720"

# 300 probes: a process and a 30 ms range, in time order (the order
# launch-gaps looks up in) and then shuffled (hopping across segments).
python3 - "$S" >"$T/probes.sql" <<'PY'
import random, sys
S = int(sys.argv[1])
rnd = random.Random(11)
p = [(rnd.choice((100, 200)), S + rnd.randrange(0, 170000) * 1000000)
     for _ in range(300)]
rows = sorted(p, key=lambda x: x[1]) + p
for part in (rows[:300], rows):
    print('probe(n, pid, a, b) AS (VALUES ' +
          ', '.join('(%d, %d, %d, %d)' % (i, pid, a, a + 30000000)
                    for i, (pid, a) in enumerate(part)) + ')')
PY
# The recording is read-only (no temporary table): the copy is a
# materialized WITH.
# Q TABLE-FOR-LAUNCHES TABLE-FOR-OFFCPU: per probe, the last launch's
# thread, name and end, the first launch's api and grid, the count in
# range, and the off-CPU time of the range; each a lookup of its own.
Q() {
	cat <<SQL
SELECT n,
  (SELECT json_array(tid, comm, ts + coalesce(dur, 0)) FROM $1 k
   WHERE k.pid = probe.pid AND k.ts >= a AND k.ts < b
   ORDER BY ts DESC LIMIT 1) AS last,
  (SELECT json_array(ts, api, grid_x) FROM $1 k
   WHERE k.pid = probe.pid AND k.ts >= a AND k.ts < b
   ORDER BY ts LIMIT 1) AS first,
  (SELECT count(*) FROM $1 k WHERE k.host = 'h1' AND k.pid = probe.pid
     AND k.ts >= a AND k.ts < b) AS launches,
  (SELECT sum(dur) FROM $2 o WHERE o.pid = probe.pid AND o.ts >= a
     AND o.ts < b) AS offcpu
FROM probe ORDER BY n;
SQL
}
{
	echo "WITH $(sed -n 2p "$T/probes.sql")"
	Q cuda_kernel offcpu
} >"$T/vt.sql"
{
	echo "WITH $(sed -n 1p "$T/probes.sql")"
	Q cuda_kernel offcpu
} >"$T/sorted.sql"
{
	echo "WITH $(sed -n 2p "$T/probes.sql"),"
	echo "ck AS MATERIALIZED (SELECT * FROM cuda_kernel),"
	echo "oc AS MATERIALIZED (SELECT * FROM offcpu)"
	Q ck oc
} >"$T/copy.sql"
g sql "$(cat "$T/vt.sql")" >"$T/vt.out"
g sql "$(cat "$T/copy.sql")" >"$T/copy.out"
eq "600 probes of 4 lookups each answer as the same lookups into a copy" \
	"$(wc -l <"$T/vt.out") $(cmp -s "$T/vt.out" "$T/copy.out" && echo same)" \
	"601 same"
eq "the probes find launches, off-CPU time and empty ranges" \
	"$(awk -F'"' 'NR > 1 { if ($2 != "") l++; else e++ } END { print (l > 500), (e > 0) }' "$T/vt.out") $(grep -c ',[0-9][0-9]*$' "$T/vt.out")" \
	"1 1 $(grep -c ',[0-9][0-9]*$' "$T/copy.out")"
# Without the segment kept, each of the 1,200 lookups of the time-ordered
# probes opened its segment (and each of the 2,400 of all): now a cursor
# opens a segment again only when a lookup moves to another one.
opened() { GPUREC_DEBUG_STATS=1 "$GPUREC" --data "$D" --format csv sql "$1" \
	2>&1 >/dev/null | grep -o 'segments_opened=[0-9]*' | cut -d= -f2; }
o1=$(opened "$(cat "$T/sorted.sql")")
o2=$(opened "$(cat "$T/vt.sql")")
eq "segments opened: under 120 for 1,200 lookups in time order, under 1,200 for 2,400" \
	"$([ -n "$o1" ] && [ "$o1" -lt 120 ] && [ "$o2" -lt 1200 ] && echo yes) ($o1, $o2)" \
	"yes ($o1, $o2)"

# The same within a window cutting the second and third segments, and
# with --host: the kept segment is judged by both as a new one would be.
W="--since 2026-11-01T00:00:50Z --until 2026-11-01T00:01:40Z"
# shellcheck disable=SC2086
"$GPUREC" --data "$D" --format csv $W --host h1 sql "$(cat "$T/vt.sql")" \
	2>>"$T/err" | tr -d '\r' >"$T/vt.w"
# shellcheck disable=SC2086
"$GPUREC" --data "$D" --format csv $W --host h1 sql "$(cat "$T/copy.sql")" \
	2>>"$T/err" | tr -d '\r' >"$T/copy.w"
eq "in a window, with --host: the same as the copy's, and fewer found" \
	"$(cmp -s "$T/vt.w" "$T/copy.w" && echo same) $([ "$(grep -c '\[' "$T/vt.w")" -lt "$(grep -c '\[' "$T/vt.out")" ] && echo fewer)" \
	"same fewer"
eq "nothing on stderr" "$(cat "$T/err")" ""
finish
