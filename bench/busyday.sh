#!/usr/bin/env bash
# busyday.sh [BUILD] [HOURS] [FLEET_HOURS] - every report over a busy day
# of one 8-GPU host, and the fleet reports over 8 such hosts (issue 20).
#
# The recordings (gpurec-synth --day, bench/synth_day.h: 30,000 launches/s
# over 8 ranks with copies and syncs, NCCL at 200 collectives/s, off-CPU
# 2,000/s with stacks, run-queue waits 20,000/s, file calls 1,000/s, block
# I/O 500/s, helper processes starting and exiting, 8 GPUs sampled each
# second), made once and reused while their stamp matches:
#   BUILD/busyday/host0          one host, HOURS long (default 24)
#   BUILD/busyday/fleet/hostN    8 hosts of one 64-rank job, FLEET_HOURS
#                                long (default HOURS); rank 43 (host5)
#                                enters every 10th collective 5 ms late
# HOURS and FLEET_HOURS: hours, or minutes with an m (10m).  A 24-hour
# host is about 4.9 billion events: tens of minutes to make here.
#
# Prints, LABEL being 24h (or the length run):
#   busyday.gen_s, busyday.events, busyday.bytes   making host0 (as when
#                                                  it was made)
#   busyday.<table>_b_per_event                    its blocks' payload
#                                                  bytes per row
#   busyday.summary_bytes                          its summary tables
#   reports.<name>_LABEL_s     every report of `gpurec report list` over
#                              all of host0 (timeline: at its middle;
#                              process: rank 0's pid)
#   reports.user_pid_10m_s     SELECT ... WHERE pid = ? AND ts BETWEEN
#                              over 10 minutes
#   reports.<name>_8xLABEL_s   nccl-skew, nccl-arrivals, rank-pace over the
#                              8 hosts; busyday.straggler_named 1 if
#                              nccl-skew's first row is host5's rank 43
# Times: warm cache, the median of 3 after a warm-up run; a report whose
# warm-up takes over SLOW (default 20) seconds is timed by that run alone,
# and one that runs past CAP (default 1800) seconds prints ">CAP".
set -euo pipefail
B=${1:-build}
HOURS=${2:-24}
FLEET_HOURS=${3:-$HOURS}
SLOW=${SLOW:-20}
CAP=${CAP:-1800}
G=$B/gpurec
START=2026-11-01T00:00:00Z
START_S=1793491200 # $START in s: timeline and the user query look at its middle

secs() { # 24 -> 86400, 10m -> 600
	case $1 in
	*m) echo $(( ${1%m} * 60 )) ;;
	*) awk -v h="$1" 'BEGIN { printf "%d", h * 3600 }' ;;
	esac
}
label() { # 86400 -> 24h, 600 -> 10m
	if [ $(( $1 % 3600 )) = 0 ]; then echo "$(( $1 / 3600 ))h"
	else echo "$(( $1 / 60 ))m"; fi
}
S=$(secs "$HOURS") FS=$(secs "$FLEET_HOURS")
L=$(label "$S") FL=8x$(label "$FS")

# make DIR STAMP ARGS...: gpurec-synth --day ARGS into DIR unless its stamp
# matches; the time it took kept beside it.
make_day() {
	local d=$1 stamp=$2; shift 2
	if [ "$(cat "$d/.stamp" 2>/dev/null)" = "$stamp" ]; then return; fi
	chattr -R -i "$d" 2>/dev/null || true
	rm -rf "$d"
	mkdir -p "$(dirname "$d")"
	echo "# generating $d (once): $stamp" >&2
	local t0 t1
	t0=$(date +%s%N)
	nice "$B/gpurec-synth" --data "$d" --start $START \
		--flush-every 300000 "$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v n=$(( t1 - t0 )) 'BEGIN { printf "%.1f\n", n / 1e9 }' >"$d/.gen_s"
	echo "$stamp" >"$d/.stamp"
}

H=$B/busyday/host0
# v4: the codec's zstd block per byte plane (the bytes, not the events,
# changed); v5: the nccl blocks' records (store/ncclcoll.h), which
# nccl-arrivals reads; v6: their calls' arrivals, which nccl-skew reads.
# Recordings of an older stamp are written again.
make_day "$H" "v6 day=$S seed=1 host=host0" --day "$S" --seed 1 --host host0
LATE="--job-hosts 8 --nccl-late-rank 43 --nccl-late-ms 5 --nccl-late-every 10"
FLEET=()
for i in 0 1 2 3 4 5 6 7; do
	make_day "$B/busyday/fleet/host$i" \
		"v6 day=$FS seed=1 host=host$i $LATE index=$i" \
		--day "$FS" --seed 1 --host "host$i" --host-index "$i" $LATE
	FLEET+=(--data "$B/busyday/fleet/host$i")
done

csv() { "$G" --format csv "$@" | tr -d '\r' | tail -n +2; }
events=$(csv --data "$H" sql 'SELECT sum(events) FROM segments')
bytes=$(du -sb "$H" | cut -f1)
echo "busyday.gen_s $(cat "$H/.gen_s") s"
echo "busyday.events $events events"
echo "busyday.bytes $bytes bytes"
awk -v e="$events" -v s="$(cat "$H/.gen_s")" \
	'BEGIN { printf "busyday.gen_events_per_s %.0f events/s\n", e / s }'
# Blocks' payload per row, per table, over every segment.
for f in "$H"/*.seg; do
	sqlite3 "$f" 'SELECT tbl, sum(count), sum(length(payload)) FROM blocks GROUP BY tbl'
done | awk -F'|' '{ n[$1] += $2; b[$1] += $3 }
	END { for (t in n) printf "busyday.%s_b_per_event %.2f B (%.0f rows)\n",
	      t, b[t] / n[t], n[t] }' | sort
# Summaries: the pages their table takes (dbstat), and per kind an
# estimate (its blobs plus 64 bytes a row of keys and sums).
for f in "$H"/*.seg; do
	sqlite3 "$f" "SELECT 'all', 0, sum(pgsize) FROM dbstat WHERE name = 'summary'"
	sqlite3 "$f" "SELECT kind, count(*), coalesce(sum(length(hist)), 0) + coalesce(sum(length(dur_sq)), 0) + 64 * count(*) FROM summary GROUP BY kind"
done | awk -F'|' -v e="$events" '$1 == "all" { all += $3; next }
	{ n[$1] += $2; b[$1] += $3 }
	END { for (k in n) printf "busyday.summary_kind%s_bytes %d B (%d rows)\n",
	      k, b[k], n[k]
	      printf "busyday.summary_bytes %d B (%.3f B/event)\n", all, all / e }' | sort
awk -v b="$bytes" -v e="$events" \
	'BEGIN { printf "busyday.b_per_event %.2f B/event\n", b / e }'

# median of 3 wall times of "$@" after a warm-up run (or the warm-up alone
# when it is slow), seconds.
median() {
	local t0 t1 w
	t0=$(date +%s%N)
	if ! timeout "$CAP" "$@" >/dev/null; then
		t1=$(date +%s%N)
		if [ $(( (t1 - t0) / 1000000000 )) -ge "$CAP" ]; then
			echo ">$CAP"; return
		fi
		echo "# failed: $*" >&2
		echo "error"; return
	fi
	t1=$(date +%s%N)
	w=$(( t1 - t0 ))
	if [ $(( w / 1000000000 )) -ge "$SLOW" ]; then
		awk -v n=$w 'BEGIN { printf "%.3f", n / 1e9 }'; return
	fi
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null
		t1=$(date +%s%N)
		echo $(( t1 - t0 ))
	done | sort -n | awk 'NR == 2 { printf "%.3f", $1 / 1e9 }'
}

MID=$(( START_S + S / 2 ))
for r in $(csv --data "$H" report list | cut -d, -f1); do
	case $r in
	timeline) p=(--param "at=${MID}000000000") ;;
	process) p=(--param pid=41000) ;;
	*) p=() ;;
	esac
	echo "reports.${r//-/_}_${L}_s $(median "$G" --data "$H" --format csv report "$r" "${p[@]}") s"
done
# A user's own query: one process over ten minutes of the middle.
echo "reports.user_pid_10m_s $(median "$G" --data "$H" --format csv sql \
	"SELECT api, count(*), sum(dur) FROM cuda_kernel WHERE pid = 41017 AND ts BETWEEN ${MID}000000000 AND $(( MID + 600 ))000000000 GROUP BY api") s"

for r in nccl-skew nccl-arrivals rank-pace; do
	echo "reports.${r//-/_}_${FL}_s $(median "$G" "${FLEET[@]}" --format csv report "$r") s"
done
skew=$(csv "${FLEET[@]}" report nccl-skew)
top=$(echo "$skew" | sed -n 1p | cut -d, -f1,2)
echo "busyday.straggler_named $([ "$top" = host5,43 ] && echo 1 || echo 0) bool"
