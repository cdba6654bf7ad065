#!/usr/bin/env bash
# gapsum_bench.sh [BUILD] [BASE] - what sum_offcpu (issue 20) buys and costs,
# before and after in one run.  BASE is a build of the tree before it (its
# gpurec reads off-CPU intervals raw; its gpurec-synth writes no sum_offcpu);
# without BASE only the after figures print.
#
# An hour of one busy host's off-CPU intervals: 2,000 a second (issue 20's
# day) from 8 processes with their worker threads, stacks on those of 1 ms
# or more, written through the writer by gpurec-synth (BUILD/bench-offcpu-1h,
# made once and reused while its stamp matches; ~50 MB).
#   gapsum.offcpu_top_1h_s        offcpu-top from sum_offcpu, best of 3
#   gapsum.offcpu_top_1h_raw_s    offcpu-top --raw (what it ran before), 1 run
#   gapsum.offcpu_top_1h_base_s   BASE's offcpu-top (raw only), 1 run
#   gapsum.summary_equals_raw     1 if both forms printed the same
#   gapsum.offcpu_top_24h_s       offcpu-top over a day of them, summaries
#   gapsum.offcpu_top_10m{,_raw}_s  over 10 minutes of that day cut
#                                 mid-minute, both forms; equal if
#                                 gapsum.summary_equals_raw_10m is 1
# Then the write side, same seed and events for both builds, CPU seconds of
# the writer (user + sys) so the figure is per core:
#   gapsum.offcpu_ingest_events_per_s{,_base}   off-CPU intervals alone
#   gapsum.offcpu_bytes_per_event{,_base}       on disk, apparent size
#   gapsum.sum_offcpu_bytes_per_event           the difference: its cost
#   gapsum.launch_bytes_per_event{,_base}       the launch stream alone
#                                               (it feeds no new kind)
#   gapsum.launch_ingest_events_per_s{,_base}
set -euo pipefail
B=${1:-build}
BASE=${2:-}
D=$B/bench-offcpu-1h
N=7200000
STAMP="v1 offcpu events=$N gap=500000 procs=8 seed=1"
if [ "$(cat "$D/.stamp" 2>/dev/null)" != "$STAMP" ]; then
	chattr -R -i "$D" 2>/dev/null || true
	rm -rf "$D"
	echo "# generating $D (once): $STAMP" >&2
	"$B/gpurec-synth" --data "$D" --table offcpu --events $N \
		--offcpu-gap 500000 --procs 8 --flush-every 300000 \
		--rotate-every 2000000 --start 2026-11-01T00:00:00Z \
		>/dev/null 2>&1
	echo "$STAMP" >"$D/.stamp"
fi

secs() { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'; }
once() { # wall ns of "$@", its output in $B/bench-gapsum.out
	local t0 t1
	t0=$(date +%s%N)
	"$@" >"$B/bench-gapsum.out"
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

G="$B/gpurec --data $D --format csv"
P="--param limit=1000"
s=$(best $G report offcpu-top $P)
cp "$B/bench-gapsum.out" "$B/bench-gapsum.sum"
echo "gapsum.offcpu_top_1h_s $s s"
echo "gapsum.offcpu_top_1h_raw_s $(secs "$(once $G report offcpu-top $P --raw)") s"
same=0
cmp -s "$B/bench-gapsum.out" "$B/bench-gapsum.sum" && same=1
if [ -n "$BASE" ]; then
	echo "gapsum.offcpu_top_1h_base_s $(secs "$(once "$BASE/gpurec" --data "$D" --format csv report offcpu-top $P)") s"
	cmp -s "$B/bench-gapsum.out" "$B/bench-gapsum.sum" || same=0
fi
echo "gapsum.summary_equals_raw $same"
echo "# summary rows read: $($G sql 'SELECT count(*) FROM sum_offcpu' | tail -1 | tr -d '\r'), intervals: $N"

# The day itself: 172.8 million intervals (BUILD/bench-offcpu-24h, made once;
# about 1.2 GB).  Only the summary form: --raw over it takes tens of
# minutes here (the hour's raw time x 24).
D24=$B/bench-offcpu-24h
N24=172800000
STAMP24="v1 offcpu events=$N24 gap=500000 procs=8 seed=1"
if [ "$(cat "$D24/.stamp" 2>/dev/null)" != "$STAMP24" ]; then
	chattr -R -i "$D24" 2>/dev/null || true
	rm -rf "$D24"
	echo "# generating $D24 (once): $STAMP24" >&2
	"$B/gpurec-synth" --data "$D24" --table offcpu --events $N24 \
		--offcpu-gap 500000 --procs 8 --flush-every 300000 \
		--rotate-every 20000000 --segment-size 2G \
		--start 2026-11-01T00:00:00Z >/dev/null 2>&1
	echo "$STAMP24" >"$D24/.stamp"
fi
G24="$B/gpurec --data $D24 --format csv"
echo "gapsum.offcpu_top_24h_s $(best $G24 report offcpu-top $P) s"
W10="--since 2026-11-01T06:00:00.5Z --until 2026-11-01T06:10:00.25Z"
echo "gapsum.offcpu_top_10m_s $(best $G24 $W10 report offcpu-top $P) s"
cp "$B/bench-gapsum.out" "$B/bench-gapsum.sum"
echo "gapsum.offcpu_top_10m_raw_s $(secs "$(once $G24 $W10 report offcpu-top $P --raw)") s"
cmp -s "$B/bench-gapsum.out" "$B/bench-gapsum.sum" && same10=1 || same10=0
echo "gapsum.summary_equals_raw_10m $same10"

# write side: CPU seconds of gpurec-synth and the directory's size, off-CPU
# intervals at the synth's default 5,000/s (BASE's synth has no
# --offcpu-gap; the events are the same for both builds)
W=$B/bench-gapsum-w
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
show() { # show NAME SUFFIX EVENTS_PER_S BYTES_PER_EVENT
	echo "gapsum.${1}_ingest_events_per_s$2 $3 events/s"
	echo "gapsum.${1}_bytes_per_event$2 $4 B"
}
o=$(write "$B" 2000000 --table offcpu --procs 8)
show offcpu "" $o
l=$(write "$B" 4000000 --table cuda_kernel --procs 8)
show launch "" $l
if [ -n "$BASE" ]; then
	ob=$(write "$BASE" 2000000 --table offcpu --procs 8)
	show offcpu _base $ob
	awk -v a="$o" -v b="$ob" 'BEGIN { split(a, x, " "); split(b, y, " ")
		printf "gapsum.sum_offcpu_bytes_per_event %.3f B\n", x[2] - y[2] }'
	lb=$(write "$BASE" 4000000 --table cuda_kernel --procs 8)
	show launch _base $lb
fi
