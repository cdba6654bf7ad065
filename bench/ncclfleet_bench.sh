#!/usr/bin/env bash
# ncclfleet_bench.sh [BUILD] [FLEET] [BASE] - the NCCL straggler reports over a
# fleet, from the C tables (query/nccl_fleet.c) and --raw (the window
# functions they replaced), side by side in one run.
#
# FLEET is a directory of host directories of one job (default
# BUILD/busyday/fleet, which bench/busyday.sh makes: 8 busy hosts, 64
# ranks, rank 43 late).  For each of nccl-skew, nccl-arrivals, rank-pace:
#   ncclfleet.<report>_s            from the C tables, best of 3 (wall)
#   ncclfleet.<report>_raw_s        --raw, 1 run
#   ncclfleet.<report>_base_s       BASE's gpurec (a build of the tree
#                                   before: the window functions), 1 run,
#                                   where BASE is given
#   ncclfleet.<report>_equals_raw   1 if both printed the same bytes
#   ncclfleet.<report>_rss_mb       peak RSS of the C form
#   ncclfleet.<report>_ns_per_call  its wall time over the NCCL calls
#   ncclfleet.<report>_24h_est_s    that time per call times the calls of
#                                   a day of the same fleet (the recording's
#                                   span scaled to 24 h): nccl-skew and
#                                   rank-pace read every call, so they grow
#                                   with them (nccl-arrivals reads records:
#                                   bench/ncclday_bench.sh times its day)
# and ncclfleet.calls, ncclfleet.span_s, ncclfleet.hosts.  RAW=0 skips
# --raw (minutes over a fleet of 10 minutes or more).
set -euo pipefail
B=${1:-build}
FLEET=${2:-$B/busyday/fleet}
BASE=${3:-}
RAW=${RAW:-1}
G=$B/gpurec

if ! compgen -G "$FLEET/*/MANIFEST" >/dev/null; then
	echo "ncclfleet_bench: no host directories under $FLEET" \
		"(bench/busyday.sh makes them)" >&2
	exit 1
fi
DATA=()
for d in "$FLEET"/*/; do DATA+=(--data "${d%/}"); done
OUT=$B/bench-ncclfleet
mkdir -p "$OUT"

csv() { "$G" --format csv "${DATA[@]}" "$@" | tr -d '\r'; }
secs() { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'; }
once() { # wall ns of "$@", its output in $OUT/$1.out
	local out=$1 t0 t1
	shift
	t0=$(date +%s%N)
	"$@" >"$OUT/$out.out"
	t1=$(date +%s%N)
	echo $(( t1 - t0 ))
}

read -r calls span <<<"$(csv sql 'SELECT count(*), max(ts) - min(ts) FROM nccl' |
	tail -1 | tr ',' ' ')"
echo "ncclfleet.hosts $(( ${#DATA[@]} / 2 )) hosts"
echo "ncclfleet.calls $calls calls"
echo "ncclfleet.span_s $(secs "$span") s"
for r in nccl-skew nccl-arrivals rank-pace; do
	n=${r//-/_}
	best=""
	for _ in 1 2 3; do
		s=$(once "$n" "$G" --format csv "${DATA[@]}" report "$r")
		if [ -z "$best" ] || [ "$s" -lt "$best" ]; then best=$s; fi
	done
	rss=$( { /usr/bin/time -f %M "$G" --format csv "${DATA[@]}" \
		report "$r" >/dev/null; } 2>&1 | tail -1)
	echo "ncclfleet.${n}_s $(secs "$best") s"
	if [ -n "$BASE" ]; then
		base=$(once "${n}_base" "$BASE/gpurec" --format csv "${DATA[@]}" \
			report "$r")
		cmp -s "$OUT/$n.out" "$OUT/${n}_base.out" ||
			echo "ncclfleet: $r differs from BASE's" >&2
		echo "ncclfleet.${n}_base_s $(secs "$base") s"
	fi
	if [ "$RAW" != 0 ]; then
		raw=$(once "${n}_raw" "$G" --format csv "${DATA[@]}" \
			report "$r" --raw)
		same=0
		cmp -s "$OUT/$n.out" "$OUT/${n}_raw.out" && same=1
		echo "ncclfleet.${n}_raw_s $(secs "$raw") s"
		echo "ncclfleet.${n}_equals_raw $same"
	fi
	echo "ncclfleet.${n}_rss_mb $(( rss / 1024 )) MB"
	# nccl-arrivals reads the records kept per block, not the calls:
	# bench/ncclday_bench.sh times it over a day instead.
	[ "$r" = nccl-arrivals ] && continue
	awk -v t="$best" -v c="$calls" -v s="$span" 'BEGIN {
		printf "ncclfleet.'"$n"'_ns_per_call %.0f ns\n", t / c
		printf "ncclfleet.'"$n"'_24h_est_s %.0f s\n", t * 86400e9 / s / 1e9 }'
done
