#!/usr/bin/env bash
# ab_reports.sh BASE NEW [DATA] - every per-host report over DATA (default
# build/busyday/host0, bench/busyday.sh's day) with two gpurec binaries in
# turn: a warm-up run of each (whose outputs must be identical), then two
# rounds alternating them; prints per report the best wall time of each,
# in ms, and whether the outputs were the same.  For before/after figures
# measured side by side on a noisy machine.
set -uo pipefail
A=${1:?usage: ab_reports.sh BASE NEW [DATA]} B=${2:?usage: ab_reports.sh BASE NEW [DATA]}
H=${3:-build/busyday/host0}
MID=$(( 1793491200 + 43200 )) # bench/busyday.sh's START + 12 h
T=$(mktemp -d /tmp/ab_reports.XXXXXX)
trap 'rm -rf "$T"' EXIT
ms() { local t0 t1; t0=$(date +%s%N); timeout 300 "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
echo "report base_ms new_ms output"
for r in $("$B" --data "$H" --format csv report list | tail -n +2 | cut -d, -f1); do
	case $r in
	nccl-*|rank-pace) continue ;; # fleet reports: bench/busyday.sh
	timeline) p=(--param "at=${MID}000000000") ;;
	process) p=(--param pid=41000) ;;
	*) p=() ;;
	esac
	timeout 300 "$A" --data "$H" --format csv report "$r" "${p[@]}" >"$T/a" 2>&1
	timeout 300 "$B" --data "$H" --format csv report "$r" "${p[@]}" >"$T/b" 2>&1
	same=$(cmp -s "$T/a" "$T/b" && echo same || echo DIFFERENT)
	ba=999999 bb=999999
	for _ in 1 2; do
		x=$(ms "$A" --data "$H" --format csv report "$r" "${p[@]}"); [ "$x" -lt "$ba" ] && ba=$x
		x=$(ms "$B" --data "$H" --format csv report "$r" "${p[@]}"); [ "$x" -lt "$bb" ] && bb=$x
	done
	echo "$r $ba $bb $same"
done
