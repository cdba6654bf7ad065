#!/usr/bin/env bash
# ncclday_bench.sh [BUILD] [HOURS] - the NCCL straggler reports over 8 hosts
# x HOURS (default 24) of the busy day's NCCL job alone (issue 20).
#
# The job is bench/busyday.sh's: 64 ranks, 8 a host, an iteration of 6
# collectives every 30 ms (200 collectives/s), rank 43 (host5) 5 ms late
# into every 10th.  Its calls alone, not the rest of the day (8 whole busy
# days are about 217 GB; these 8.4 GB), made once under
# BUILD/busyday/ncclday/hostN with gpurec-synth --table nccl and reused
# while their stamp matches.  Prints:
#   ncclday.gen_s                     making the 8 hosts (as when made)
#   ncclday.calls                     nccl calls over the 8 hosts
#   ncclday.nccl_b_per_call           the nccl blocks' payload per call
#   ncclday.coll_b_per_call           nccl_coll's records (store/ncclcoll.h)
#                                     per call: what nccl-arrivals reads
#   ncclday.arr_b_per_call            nccl_arr's arrivals per call: what
#                                     nccl-skew's second walk reads
#   reports.nccl_arrivals_8xLABEL_nccl_s  nccl-arrivals over all of it,
#                                     warm cache, median of 3
#   ncclday.nccl_arrivals_rss_mb      its peak RSS
#   ncclday.window_equals_calls       1 if over 10 minutes of its middle
#                                     nccl_last_arrival(1000) (the records)
#                                     printed what the table without an
#                                     argument (every call) printed
#   ncclday.window_records_s, ncclday.window_calls_s   those two, 1 run
#   reports.nccl_skew_8xLABEL_nccl_s, reports.rank_pace_8xLABEL_nccl_s
#                                     each over all of it (the arrivals,
#                                     nccl_arr), median of 3, and
#                                     ncclday.<report>_rss_mb its peak RSS
#   ncclday.<report>_window_equals_raw  1 if over 1 minute of its middle
#                                     the report printed what --raw (the
#                                     window-function SQL) printed
set -euo pipefail
B=${1:-build}
HOURS=${2:-24}
G=$B/gpurec
D=$B/busyday/ncclday
START=2026-11-01T00:00:00Z
S=$(awk -v h="$HOURS" 'BEGIN { printf "%d", h * 3600 }')
L=8x$([ $((S % 3600)) = 0 ] && echo "$((S / 3600))h" || echo "$((S / 60))m")
# One iteration: 30 ms, plus rank 43's 5 ms in one collective of ten
# (6 a iteration): 33 ms; the last second left free, as synth_day.c does.
ITERS=$(( (S * 1000 - 1000) / 33 ))
STAMP="v2 s=$S iters=$ITERS seed=1"

if [ "$(cat "$D/.stamp" 2>/dev/null)" != "$STAMP" ]; then
	chattr -R -i "$D" 2>/dev/null || true
	rm -rf "$D"
	mkdir -p "$D"
	echo "# generating $D (once): $STAMP" >&2
	t0=$(date +%s%N)
	for i in 0 1 2 3 4 5 6 7; do
		nice "$B/gpurec-synth" --data "$D/host$i" --host "host$i" \
			--start $START --flush-every 300000 --table nccl \
			--nccl-ranks 64 --nccl-host-ranks $((8 * i))-$((8 * i + 7)) \
			--nccl-iters $ITERS --nccl-step-ms 30 --nccl-late-rank 43 \
			--nccl-late-ms 5 --nccl-late-every 10 --seed 1 >/dev/null
	done
	t1=$(date +%s%N)
	awk -v n=$((t1 - t0)) 'BEGIN { printf "%.1f\n", n / 1e9 }' >"$D/.gen_s"
	echo "$STAMP" >"$D/.stamp"
fi
DATA=()
for i in 0 1 2 3 4 5 6 7; do DATA+=(--data "$D/host$i"); done

echo "ncclday.gen_s $(cat "$D/.gen_s") s"
for f in "$D"/host*/*.seg; do
	sqlite3 "$f" "SELECT (SELECT total(count) FROM blocks WHERE tbl = 'nccl'),
		(SELECT total(length(payload)) FROM blocks WHERE tbl = 'nccl'),
		(SELECT total(length(payload)) FROM nccl_coll),
		(SELECT total(length(payload)) FROM nccl_arr)"
done | awk -F'|' '{ c += $1; b += $2; r += $3; a += $4 }
	END { printf "ncclday.calls %d calls\n", c
	      printf "ncclday.nccl_b_per_call %.3f B\n", b / c
	      printf "ncclday.coll_b_per_call %.3f B\n", r / c
	      printf "ncclday.arr_b_per_call %.3f B\n", a / c }'

ns() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1 || return 1
	t1=$(date +%s%N); echo $((t1 - t0)); }
secs() { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'; }
median3() { # median wall of 3 runs of "$@" after a warm-up
	"$@" >/dev/null 2>&1 || true
	local a b c
	a=$(ns "$@") && b=$(ns "$@") && c=$(ns "$@") || { echo memory; return; }
	secs "$(printf '%s\n' "$a" "$b" "$c" | sort -n | sed -n 2p)"
}

echo "reports.nccl_arrivals_${L}_nccl_s $(median3 "$G" "${DATA[@]}" --format csv report nccl-arrivals) s"
rss=$( { /usr/bin/time -f '%M' "$G" "${DATA[@]}" --format csv \
	report nccl-arrivals >/dev/null; } 2>&1 | tail -1)
echo "ncclday.nccl_arrivals_rss_mb $((rss / 1024)) MB"

MID=$(( 1793491200 + S / 2 ))
W=(--since "@$MID" --until "@$(( MID + 600 ))")
Q="comm_id, seq, op, bytes, n, nranks, first_ts, last_ts, last_host,
   last_rank, last_pid, prev_ts"
O="ORDER BY last_ts - first_ts DESC, first_ts, comm_id, seq"
t0=$(date +%s%N)
"$G" "${DATA[@]}" "${W[@]}" --format csv \
	sql "SELECT $Q FROM nccl_last_arrival(1000) $O" >"$D/.records.csv"
t1=$(date +%s%N)
"$G" "${DATA[@]}" "${W[@]}" --format csv --max-memory 8G \
	sql "SELECT $Q FROM nccl_last_arrival $O LIMIT 1000" >"$D/.calls.csv"
t2=$(date +%s%N)
same=0
if [ "$(wc -l <"$D/.records.csv")" = 1001 ] &&
	cmp -s "$D/.records.csv" "$D/.calls.csv"; then same=1; fi
echo "ncclday.window_equals_calls $same bool"
echo "ncclday.window_records_s $(secs $((t1 - t0))) s"
echo "ncclday.window_calls_s $(secs $((t2 - t1))) s"

W1=(--since "@$MID" --until "@$(( MID + 60 ))")
for r in nccl-skew rank-pace; do
	k=${r//-/_}
	echo "reports.${k}_${L}_nccl_s $(median3 "$G" "${DATA[@]}" --format csv report $r) s"
	rss=$( { /usr/bin/time -f '%M' "$G" "${DATA[@]}" --format csv \
		report $r >/dev/null; } 2>&1 | tail -1)
	echo "ncclday.${k}_rss_mb $((rss / 1024)) MB"
	"$G" "${DATA[@]}" "${W1[@]}" --format csv report $r >"$D/.$r.csv"
	"$G" "${DATA[@]}" "${W1[@]}" --format csv --max-memory 8G --raw \
		report $r >"$D/.$r-raw.csv"
	same=0
	if [ "$(wc -l <"$D/.$r.csv")" = 65 ] &&
		cmp -s "$D/.$r.csv" "$D/.$r-raw.csv"; then same=1; fi
	echo "ncclday.${k}_window_equals_raw $same bool"
done
