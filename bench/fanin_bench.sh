#!/usr/bin/env bash
# fanin_bench.sh [BUILD] - a fleet read together (issue 20, point 3): the
# NCCL reports over 1 host's recording against the same job's 8 hosts',
# read by one glob, so that the cost per host can be compared.
#
# The job: 64 ranks, 8 a host (host0N writes ranks 8N..8N+7), an
# iteration every 250 ms (6 collectives and a Send/Recv group: 40 rows a
# second per rank, 320 per host), rank 43 (node05) 30 ms late into every
# collective, the synth's default jitter.  FANIN_ITERS iterations (default
# 1500: 6.25 minutes of the job, 120,024 rows per host) are made once
# into BUILD/bench-fanin and reused while its stamp matches; a segment is
# sealed every 20,000 rows, so a host has 7.
#   fanin.gen_s                    making the 8 hosts (once), wall seconds
#   fanin.rows_per_host            rows of nccl per host
#   fanin.<report>_1host_s         the report over node00 alone, wall s
#   fanin.<report>_8hosts_s        ... over --data 'BUILD/bench-fanin/*'
#   fanin.<report>_1host_cpu_s     the same in CPU seconds (user + sys):
#   fanin.<report>_8hosts_cpu_s    on a shared machine the steadier figure
#   fanin.<report>_per_host_ratio  8hosts_cpu / (8 x 1host_cpu): 1.00 is
#                                  "as fast per host as one"
#   fanin.straggler_named          1 if all three reports put node05 rank
#                                  43 first
#   fanin.window_1m_8hosts_s       nccl-skew over one minute of 8 hosts
#   fanin.window_segments_opened   segments that minute opened (of 56)
#   fanin.hosts1000_window_check_s a windowed query's start over 1,000
#                                  small hosts (5,000 segments, made once
#                                  into BUILD/bench-fanin-1000, 180 MB):
#                                  the window checked against every
#                                  segment's span; with FANIN_BEFORE=BIN
#                                  also ..._before_s, the same by BIN
# Each figure is the best of 3 runs.
set -euo pipefail
B=${1:-build}
D=$B/bench-fanin
ITERS=${FANIN_ITERS:-1500}
STAMP="v1 hosts=8 ranks=64 iters=$ITERS step=250 late=43/30 rotate=20000"
G="$B/gpurec --format csv"

if [ "$(cat "$D/.stamp" 2>/dev/null)" != "$STAMP" ]; then
	rm -rf "$D"
	mkdir -p "$D"
	echo "# generating $D (once): $STAMP" >&2
	t0=$(date +%s%N)
	for h in 0 1 2 3 4 5 6 7; do
		"$B/gpurec-synth" --data "$D/node0$h" --host "node0$h" \
			--table nccl --start 2026-11-01T00:00:00Z \
			--nccl-ranks 64 --nccl-host-ranks "$((8 * h))-$((8 * h + 7))" \
			--nccl-iters "$ITERS" --nccl-step-ms 250 \
			--nccl-late-rank 43 --nccl-late-ms 30 \
			--rotate-every 20000 >/dev/null 2>"$D/.synth.log"
	done
	t1=$(date +%s%N)
	awk -v n=$(( t1 - t0 )) 'BEGIN { printf "%.3f\n", n / 1e9 }' >"$D/.gen_s"
	echo "$STAMP" >"$D/.stamp"
fi
echo "fanin.gen_s $(cat "$D/.gen_s") s"
echo "fanin.rows_per_host $($G --data "$D/node00" sql 'SELECT count(*) FROM nccl' | tail -1 | tr -d '\r') rows"

# best3 VAR_WALL VAR_CPU ARGS…: the best of 3 wall and CPU seconds.
best3() {
	local -n w=$1 c=$2
	shift 2
	w="" c=""
	for _ in 1 2 3; do
		/usr/bin/time -f "%e %U %S" -o "$D/.time" "$@" >/dev/null
		read -r e u s <"$D/.time"
		local cpu
		cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$w" ] || awk -v a="$e" -v b="$w" 'BEGIN { exit !(a < b) }'; then w=$e; fi
		if [ -z "$c" ] || awk -v a="$cpu" -v b="$c" 'BEGIN { exit !(a < b) }'; then c=$cpu; fi
	done
}

named=1
for r in nccl-skew nccl-arrivals rank-pace; do
	n=${r//-/_}
	best3 w1 c1 $G --data "$D/node00" report "$r"
	best3 w8 c8 $G --data "$D/*" report "$r"
	echo "fanin.${n}_1host_s $w1 s"
	echo "fanin.${n}_8hosts_s $w8 s"
	echo "fanin.${n}_1host_cpu_s $c1 s"
	echo "fanin.${n}_8hosts_cpu_s $c8 s"
	echo "fanin.${n}_per_host_ratio $(awk -v a="$c8" -v b="$c1" \
		'BEGIN { printf "%.2f", a / (8 * b) }') x"
	# nccl-arrivals' row is a collective: its last_host, last_rank
	first=$($G --data "$D/*" report "$r" | sed -n 2p | tr -d '\r')
	case $r in
	nccl-arrivals) who=$(echo "$first" | cut -d, -f8,9) ;;
	*) who=$(echo "$first" | cut -d, -f1,2) ;;
	esac
	if [ "$who" != "node05,43" ]; then
		named=0
		echo "# $r names $who first, not node05,43" >&2
	fi
done
echo "fanin.straggler_named $named bool"

W=(--since 2026-11-01T00:03:00Z --until 2026-11-01T00:04:00Z)
best3 ww cw $G --data "$D/*" "${W[@]}" report nccl-skew
echo "fanin.window_1m_8hosts_s $ww s"
GPUREC_DEBUG_STATS=1 $G --data "$D/*" "${W[@]}" report nccl-skew \
	2>"$D/.stats" >/dev/null
echo "fanin.window_segments_opened $(grep -o 'segments_opened=[0-9]*' "$D/.stats" | cut -d= -f2) segments"

# A thousand hosts: the cost of a windowed query before it reads a row.
K=$B/bench-fanin-1000
STAMPK="v1 hosts=1000 ranks=6 iters=20 rotate=100"
if [ "$(cat "$K/.stamp" 2>/dev/null)" != "$STAMPK" ]; then
	rm -rf "$K"
	mkdir -p "$K"
	echo "# generating $K (once): $STAMPK" >&2
	"$B/gpurec-synth" --data "$K/h0000" --host h0000 --table nccl \
		--start 2026-11-01T00:00:00Z --nccl-ranks 6 \
		--nccl-host-ranks 0-1 --nccl-iters 20 --rotate-every 100 \
		>/dev/null 2>"$K/.synth.log"
	for i in $(seq -w 1 999); do cp -a "$K/h0000" "$K/h0$i"; done
	echo "$STAMPK" >"$K/.stamp"
fi
KW=(--since 2026-11-02T00:00:00Z sql 'SELECT 1')
best3 wk ck $G --data "$K/*" "${KW[@]}"
echo "fanin.hosts1000_window_check_s $wk s"
if [ -n "${FANIN_BEFORE:-}" ]; then
	best3 wk ck "$FANIN_BEFORE" --format csv --data "$K/*" "${KW[@]}"
	echo "fanin.hosts1000_window_check_before_s $wk s"
fi
