#!/usr/bin/env bash
# export_bench.sh - `make bench`'s export.*: how long `gpurec export` takes
# and how much memory it holds, per format, over a synthetic recording.
#
#   bash bench/export_bench.sh [BUILD]
#
# The recording (BUILD/bench-export, made once and reused while its stamp
# matches) holds EVENTS launches (a copy after every 10th) and EVENTS
# off-CPU intervals of 4 processes.  Each format is exported ROUNDS times;
# printed per format: the median wall seconds, the median peak RSS (from
# /usr/bin/time) and the output's size.  BASELINE=PATH times another gpurec
# the same way, in turn within each round, for a before/after in one run.
# The Perfetto export nests each thread's slices by merging its tables in
# time order, which SQLite sorts: its memory grows with the events a
# thread has, not with the whole recording.
set -euo pipefail
B=${1:-build}
EVENTS=${EVENTS:-1000000}
ROUNDS=${ROUNDS:-3}
D=$B/bench-export
STAMP="v1 events=$EVENTS tables=cuda_kernel,offcpu memcpy=10 procs=4 seed=1"
[ -x /usr/bin/time ] || { echo "export_bench: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
if [ "$(cat "$D/.stamp" 2>/dev/null)" != "$STAMP" ]; then
	chattr -R -i "$D" 2>/dev/null || true
	rm -rf "$D"
	echo "# generating $D (once): $STAMP" >&2
	"$B/gpurec-synth" --data "$D" --events "$EVENTS" --table cuda_kernel \
		--table offcpu --memcpy-every 10 --procs 4 --seed 1 \
		--start 2026-11-01T00:00:00Z >/dev/null
	echo "$STAMP" >"$D/.stamp"
fi
out=$(mktemp -d /tmp/gpurec-export-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT

# one GPUREC FORMAT: "seconds kib bytes" of one export.
one() {
	local o="$out/x"
	rm -rf "$o"
	/usr/bin/time -o "$out/time" -f "%e %M" "$1" --data "$D" export \
		--format "$2" -o "$o" >/dev/null 2>"$out/err" ||
		{ echo "export_bench: $1 --format $2: $(tail -1 "$out/err")" >&2; exit 1; }
	echo "$(tail -1 "$out/time") $(du -sb "$o" | cut -f1)"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

events=$("$B/gpurec" --data "$D" --format csv sql \
	'SELECT sum(events) FROM segments' | tail -1)
echo "export.events $events events"
for f in perfetto sqlite csv jsonl; do
	: >"$out/new" ; : >"$out/old"
	for _ in $(seq "$ROUNDS"); do
		one "$B/gpurec" "$f" >>"$out/new"
		[ -z "${BASELINE:-}" ] || one "$BASELINE" "$f" >>"$out/old"
	done
	for w in new old; do
		[ -s "$out/$w" ] || continue
		sfx=; [ $w = old ] && sfx=_baseline
		echo "export.${f}_s$sfx $(cut -d' ' -f1 "$out/$w" | median) s"
		echo "export.${f}_rss_mib$sfx $(cut -d' ' -f2 "$out/$w" | median |
			awk '{ printf "%.1f", $1 / 1024 }') MiB"
		echo "export.${f}_mib$sfx $(cut -d' ' -f3 "$out/$w" | median |
			awk '{ printf "%.1f", $1 / 1048576 }') MiB"
	done
done
