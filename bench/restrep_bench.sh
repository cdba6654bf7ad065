#!/usr/bin/env bash
# restrep_bench.sh [BUILD] [BASE] [DAY] - the reports that summaries now
# point at the few minutes worth reading, and recording, which counts
# events from block headers (issue 20): before and after in one run.  BASE is a build of the tree
# before them (its reports read those tables whole); without BASE only the
# after figures and --raw print.
#
# DAY is a busy day made by bench/busyday.sh (default BUILD/busyday/host0:
# run that first; its length names the figures, LABEL: 24h, 10m).
#   restrep.<report>_LABEL_s        from summaries, best of 3
#   restrep.<report>_LABEL_raw_s    --raw (the old query where the report
#                                   had no raw half), 1 run
#   restrep.<report>_LABEL_base_s   BASE's report, 1 run
#   restrep.<report>_equals_raw     1 if summaries, --raw and BASE printed
#                                   the same
# process is rank 0's pid (41000); xid is every Xid of the day, 10 s before.
# cuda-errors, xid and recording have a -- raw: half now; process had one.
set -euo pipefail
B=${1:-build}
BASE=${2:-}
D=${3:-$B/busyday/host0}
if [ ! -f "$D/.stamp" ]; then
	echo "restrep_bench: no busy day at $D: run bench/busyday.sh first" >&2
	exit 1
fi
span=$("$B/gpurec" --data "$D" --format csv sql \
	'SELECT (max(end_ts) - min(start_ts) + 500000000) / 1000000000 FROM segments' |
	tail -1 | tr -d '\r')
if [ $(( span % 3600 )) = 0 ]; then L=$(( span / 3600 ))h
else L=$(( (span + 59) / 60 ))m; fi

secs() { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'; }
once() { # once OUT CMD...: wall ns of CMD, its output in OUT
	local out=$1 t0 t1
	shift
	t0=$(date +%s%N)
	"$@" >"$out"
	t1=$(date +%s%N)
	echo $(( t1 - t0 ))
}
best() { # best OUT CMD...: best of 3 wall times, seconds
	local b="" s
	for _ in 1 2 3; do
		s=$(once "$@")
		if [ -z "$b" ] || [ "$s" -lt "$b" ]; then b=$s; fi
	done
	secs "$b"
}

O=$B/bench-restrep
for r in cuda-errors process xid recording; do
	case $r in
	process) p=(--param pid=41000) ;;
	*) p=() ;;
	esac
	n=${r//-/_}_$L
	G=("$B/gpurec" --data "$D" --format csv)
	echo "restrep.${n}_s $(best "$O.sum" "${G[@]}" report "$r" "${p[@]}") s"
	echo "restrep.${n}_raw_s $(secs "$(once "$O.raw" "${G[@]}" report "$r" "${p[@]}" --raw)") s"
	same=0
	cmp -s "$O.sum" "$O.raw" && same=1
	if [ -n "$BASE" ]; then
		echo "restrep.${n}_base_s $(secs "$(once "$O.base" "$BASE/gpurec" --data "$D" --format csv report "$r" "${p[@]}")") s"
		cmp -s "$O.sum" "$O.base" || same=0
	fi
	echo "restrep.${r//-/_}_equals_raw $same"
done
rm -f "$O.sum" "$O.raw" "$O.base"
