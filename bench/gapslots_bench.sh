#!/usr/bin/env bash
# gapslots_bench.sh [BUILD] [BASE] - what sum_launch_slots (issue 20) buys
# and costs, before and after in one run.  BASE is a build of the tree
# before it (its launch-gaps runs a window over every launch; its
# gpurec-synth writes no sum_launch_slots); without BASE only the after
# figures print.
#
# Over BUILD/busyday/host0, bench/busyday.sh's busy host (made here as it
# makes it, 10 minutes unless it is there already: 30,000 launches/s over 8
# ranks, and every other stream):
#   gapslots.launch_gaps_10m_s{,_20ms,_1s}   launch-gaps from the slots over
#                                 all of it, min_ms 100 ms (default), 20 ms,
#                                 1 s; best of 3
#   gapslots.launch_gaps_1m_s     the same over its first minute
#   gapslots.launch_gaps_1m_raw_s launch-gaps --raw over that minute, 1 run
#   gapslots.launch_gaps_1m_base_s  BASE's launch-gaps over it, 1 run
#   gapslots.summary_equals_raw_1m  1 if all three printed the same
# (--raw over the whole 10 minutes takes minutes: ten times the minute's.)
# Then a recording with thousands of pauses (BUILD/gapslots-pauses, made
# once: 6 processes over 20 minutes, bursts of 1-11 launches 1-3 ms apart
# and a pause of 5 ms to 8 s after each, as tests/cli/gapslots.sh writes;
# 4 sealed segments), launch-gaps at min_ms 20 ms; best of 3:
#   gapslots.pauses_candidates     candidate pauses from the slots
#   gapslots.pauses_slots_s        from the slots however many candidates
#                                  (lookup_every=0: each reads the launches
#                                  at its ends)
#   gapslots.pauses_default_s      with the default lookup_every
#   gapslots.pauses_raw_s          --raw (a window over every launch)
#   gapslots.pauses_{slots,raw}_pre_s  the same with PRE/gpurec, where
#                                  GAPSLOTS_PRE=PRE names a build before the
#                                  event tables kept a segment and block
#                                  across lookups
#   gapslots.pauses_equal          1 if every form printed the same rows
# Then the write side, launches alone, same seed and events for both
# builds, CPU seconds of the writer (user + sys), so per core:
#   gapslots.launch_ingest_events_per_s{,_base}
#   gapslots.launch_bytes_per_event{,_base}   on disk, apparent size
#   gapslots.sum_launch_slots_bytes_per_event the difference: its cost
set -euo pipefail
B=${1:-build}
BASE=${2:-}
D=$B/busyday/host0
# The stamp bench/busyday.sh gives it: either script's copy serves both.
STAMP="v4 day=600 seed=1 host=host0"
if [ "$(cat "$D/.stamp" 2>/dev/null)" != "$STAMP" ]; then
	chattr -R -i "$D" 2>/dev/null || true
	rm -rf "$D"
	mkdir -p "$(dirname "$D")"
	echo "# generating $D (once): 10 minutes as bench/busyday.sh" >&2
	t0=$(date +%s%N)
	nice "$B/gpurec-synth" --data "$D" --start 2026-11-01T00:00:00Z \
		--flush-every 300000 --day 600 --seed 1 --host host0 \
		>/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v n=$(( t1 - t0 )) 'BEGIN { printf "%.1f\n", n / 1e9 }' \
		>"$D/.gen_s"
	echo "$STAMP" >"$D/.stamp"
fi

secs() { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'; }
once() { # wall ns of "$@", its output in $B/bench-gapslots.out
	local t0 t1
	t0=$(date +%s%N)
	"$@" >"$B/bench-gapslots.out"
	t1=$(date +%s%N)
	echo $(( t1 - t0 ))
}
best() { # best of 3 wall times of "$@", seconds
	local b="" s
	for _ in 1 2 3; do
		s=$(once "$@")
		if [ -z "$b" ] || [ "$s" -lt "$b" ]; then b=$s; fi
	done
	secs "$b"
}
rows() { echo $(( $(wc -l <"$B/bench-gapslots.out") - 1 )); }

G="$B/gpurec --data $D --format csv"
P="--param limit=100000"
echo "# recording: $(cat "$D/.stamp")"
echo "gapslots.launch_gaps_10m_s $(best $G report launch-gaps $P) s ($(rows) rows)"
echo "gapslots.launch_gaps_10m_20ms_s $(best $G report launch-gaps $P --param min_ms=20ms) s ($(rows) rows)"
echo "gapslots.launch_gaps_10m_1s_s $(best $G report launch-gaps $P --param min_ms=1s) s ($(rows) rows)"
M="--until 2026-11-01T00:01:00Z --param min_ms=20ms"
echo "gapslots.launch_gaps_1m_s $(best $G $M report launch-gaps $P) s ($(rows) rows, min_ms 20 ms)"
cp "$B/bench-gapslots.out" "$B/bench-gapslots.sum"
echo "gapslots.launch_gaps_1m_raw_s $(secs "$(once $G $M report launch-gaps $P --raw)") s"
same=0
cmp -s "$B/bench-gapslots.out" "$B/bench-gapslots.sum" && same=1
if [ -n "$BASE" ]; then
	echo "gapslots.launch_gaps_1m_base_s $(secs "$(once "$BASE/gpurec" --data "$D" --format csv $M report launch-gaps $P)") s"
	cmp -s "$B/bench-gapslots.out" "$B/bench-gapslots.sum" || same=0
fi
echo "gapslots.summary_equals_raw_1m $same"
echo "# sum_launch_slots rows read: $($G sql 'SELECT count(*) FROM sum_launch_slots' | tail -1 | tr -d '\r')"

PD=$B/gapslots-pauses
if [ ! -f "$PD/.stamp" ]; then
	chattr -R -i "$PD" 2>/dev/null || true
	rm -rf "$PD"
	mkdir -p "$PD"
	python3 - "$PD/rows" <<'PY'
import random, sys
out, S, MS = sys.argv[1], 1793491200000000000, 1000000
rnd = random.Random(20)
PAUSES = [5, 19, 20, 21, 25, 99, 100, 101, 150, 400, 999, 1000, 1001, 2500,
          4000, 6000, 8000]
rows = []
for pid in range(100, 700, 100):
    t = S + rnd.randrange(1, 50) * MS + pid
    while t < S + 1200 * 1000 * MS:
        for i in range(rnd.randrange(1, 12)):
            dur = rnd.randrange(0, 8 * MS)
            tid = pid + rnd.randrange(0, 2)
            if rnd.random() < 0.2:
                f = ['cuda_graph', 'op=launch', 'api=cudaGraphLaunch',
                     'graph_exec=%d' % (pid * 10)]
            else:
                f = ['cuda_kernel', 'api=cudaLaunchKernel',
                     'kernel=k%d' % rnd.randrange(3), 'grid_x=1',
                     'block_x=32']
            f += ['ts=%d' % t, 'pid=%d' % pid, 'tid=%d' % tid,
                  'comm=w%d' % tid, 'dur=%d' % dur]
            rows.append((t, f))
            end = t + dur
            t = end + rnd.randrange(1 * MS, 3 * MS)
        t = end + rnd.choice(PAUSES) * MS
rows.sort(key=lambda r: r[0])
for k in range(4):
    with open('%s.%d' % (out, k), 'w') as f:
        for _, x in rows[k * len(rows) // 4:(k + 1) * len(rows) // 4]:
            f.write('\t'.join(x) + '\n')
PY
	for k in 0 1 2 3; do
		"$B/gpurec-synth" --data "$PD" --rows "$PD/rows.$k" --host p1 \
			>/dev/null 2>&1
	done
	rm -f "$PD"/rows.?
	echo "v1 pauses procs=6 minutes=20" >"$PD/.stamp"
fi
PG="$B/gpurec --data $PD --format csv"
PM="report launch-gaps $P --param min_ms=20ms"
echo "# pauses recording: $($PG sql "SELECT count(*) FROM cuda_kernel" | tail -1 | tr -d '\r') kernel launches, $($PG sql "SELECT count(*) FROM cuda_graph" | tail -1 | tr -d '\r') graph launches"
echo "gapslots.pauses_candidates $($PG sql "SELECT count(*) FROM (SELECT slot_gaps(minute, slots, 20000000) AS r FROM sum_launch_slots GROUP BY host, pid) s, json_each(s.r)" | tail -1 | tr -d '\r')"
echo "gapslots.pauses_slots_s $(best $PG $PM --param lookup_every=0) s ($(rows) rows)"
cp "$B/bench-gapslots.out" "$B/bench-gapslots.sum"
pequal=1
echo "gapslots.pauses_default_s $(best $PG $PM) s"
cmp -s "$B/bench-gapslots.out" "$B/bench-gapslots.sum" || pequal=0
echo "gapslots.pauses_raw_s $(best $PG $PM --raw) s"
cmp -s "$B/bench-gapslots.out" "$B/bench-gapslots.sum" || pequal=0
if [ -n "${GAPSLOTS_PRE:-}" ]; then
	PP="$GAPSLOTS_PRE/gpurec --data $PD --format csv"
	echo "gapslots.pauses_slots_pre_s $(best $PP $PM --param lookup_every=0) s"
	cmp -s "$B/bench-gapslots.out" "$B/bench-gapslots.sum" || pequal=0
	echo "gapslots.pauses_raw_pre_s $(best $PP $PM --raw) s"
	cmp -s "$B/bench-gapslots.out" "$B/bench-gapslots.sum" || pequal=0
fi
echo "gapslots.pauses_equal $pequal"

# write side: CPU seconds of gpurec-synth and the directory's size
W=$B/bench-gapslots-w
write() { # write BUILD EVENTS ARGS...: prints "events/s B/event"
	local bin=$1 n=$2
	shift 2
	rm -rf "$W"
	local t bytes
	/usr/bin/time -o "$W.time" -f "%U %S" "$bin/gpurec-synth" --data "$W" \
		--events "$n" --seed 1 --start 2026-11-01T00:00:00Z \
		--flush-every 300000 "$@" >/dev/null 2>&1
	t=$(tail -1 "$W.time")
	bytes=$(du -sb --apparent-size "$W" | cut -f1)
	awk -v t="$t" -v n="$n" -v b="$bytes" 'BEGIN {
		split(t, a, " "); printf "%.0f %.3f\n", n / (a[1] + a[2]), b / n }'
	chattr -R -i "$W" 2>/dev/null || true
	rm -rf "$W" "$W.time"
}
show() { # show SUFFIX EVENTS_PER_S BYTES_PER_EVENT
	echo "gapslots.launch_ingest_events_per_s$1 $2 events/s"
	echo "gapslots.launch_bytes_per_event$1 $3 B"
}
l=$(write "$B" 4000000 --table cuda_kernel --procs 8 --rate 30000)
show "" $l
if [ -n "$BASE" ]; then
	lb=$(write "$BASE" 4000000 --table cuda_kernel --procs 8 --rate 30000)
	show _base $lb
	awk -v a="$l" -v b="$lb" 'BEGIN { split(a, x, " "); split(b, y, " ")
		printf "gapslots.sum_launch_slots_bytes_per_event %.4f B\n", x[2] - y[2] }'
fi
