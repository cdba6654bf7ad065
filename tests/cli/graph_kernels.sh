#!/usr/bin/env bash
# graph_kernels.sh - graph-kernels and top-kernels --param graphs=1 from
# summaries equal their --raw answers, and the exact rows, over a recording
# written by gpurec-synth (root-free; tests/cuda/graph_kernels.sh checks the
# same views over calls gpurecd recorded from the mock libraries).
#
# 60 s of generated launches (4 processes, the synthetic kernel names) and,
# on the same host, exact rows (--rows) of two more processes: pid 50000
# captures graph_a, graph_b, graph_a into a graph on stream 7 (and
# graph_a once into stream 8 meanwhile, which the capture does not take),
# launches graph_a once directly, instantiates the graph and replays it 30
# times, 1 s apart from S+10 (one more launch fails); pid 50001 replays 7
# times an executable graph it instantiated before the recording.
# Env: GPUREC, SYNTH (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
SYNTH=${SYNTH:-build/gpurec-synth}
T=$(mktemp -d /tmp/gpurec-graphk.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
# eq NAME GOT WANT
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }

S=1795000000   # 2026-11-18T11:06:40Z
S_NS=${S}000000000
rfc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.${2:-0}Z; }
G=("$GPUREC" --data "$T/gen" --data "$T/rows" --format csv)
# rows ARGS…: csv rows, one per line joined by ' ', header dropped
rows() { "${G[@]}" "$@" 2>&1 | tr -d '\r' | tail -n +2 | tr '\n' ' '; }
# rowsc FIELDS ARGS…: rows, each cut to FIELDS (cut -f)
rowsc() { "${G[@]}" "${@:2}" 2>&1 | tr -d '\r' | tail -n +2 | cut -d, -f"$1" | tr '\n' ' '; }

synth --data "$T/gen" --host alpha --events 60000 --interval 1000000 \
	--start "$S_NS" --flush-every 5000 --rotate-every 20000
c0="pid=50000	tid=50000	ret=0"
c1="pid=50001	tid=50001	ret=0"
kl() { # kl TS STREAM NAME GRID BLOCK: a cudaLaunchKernel row of pid 50000
	printf 'cuda_kernel\tts=%s\t%s\tapi=cudaLaunchKernel\tkernel=%s(float*)\tkernel_mangled=_Z7%sPf\tgrid_x=%s\tgrid_y=1\tgrid_z=1\tblock_x=%s\tblock_y=1\tblock_z=1\tshared_mem=0\tstream=%s\n' \
		"$1" "$c0" "$3" "$3" "$4" "$5" "$2"
}
{
	b=$((S_NS + 1000000000))
	printf 'cuda_graph\tts=%s\t%s\tapi=cudaStreamBeginCapture\top=capture_begin\tstream=7\n' $b "$c0"
	kl $((b + 1000000)) 7 graph_a 4 128
	kl $((b + 1500000)) 8 graph_a 4 128
	kl $((b + 2000000)) 7 graph_b 8 256
	kl $((b + 3000000)) 7 graph_a 2 128
	printf 'cuda_graph\tts=%s\t%s\tapi=cudaStreamEndCapture\top=capture_end\tstream=7\tgraph=256\n' $((b + 4000000)) "$c0"
	printf 'cuda_graph\tts=%s\t%s\tapi=cudaGraphInstantiate\top=instantiate\tgraph=256\tgraph_exec=512\n' $((b + 5000000)) "$c0"
	kl $((S_NS + 2000000000)) 7 graph_a 4 128
	for n in $(seq 0 29); do
		printf 'cuda_graph\tts=%s\t%s\tapi=cudaGraphLaunch\top=launch\tstream=7\tgraph_exec=512\n' $((S_NS + (10 + n) * 1000000000)) "$c0"
	done
	printf 'cuda_graph\tts=%s\tpid=50000\ttid=50000\tret=700\tapi=cudaGraphLaunch\top=launch\tstream=7\tgraph_exec=512\n' $((S_NS + 45500000000))
	for n in $(seq 0 6); do
		printf 'cuda_graph\tts=%s\t%s\tapi=cudaGraphLaunch\top=launch\tstream=3\tgraph_exec=768\n' $((S_NS + (20 + n) * 1000000000 + 300000000)) "$c1"
	done
} >"$T/rows.txt"
synth --data "$T/rows" --host alpha --rows "$T/rows.txt"

eq "cuda_graph_kernel: the graph's kernels in capture order, stream 8's launch left out" \
	"$(rows sql 'SELECT pid, graph, graph_exec, seq, kernel, kernel_mangled, grid_x, block_x, shared_mem, stream, ts - capture_ts, instantiate_ts - capture_end_ts FROM cuda_graph_kernel ORDER BY pid, seq')" \
	"50000,256,512,1,graph_a(float*),_Z7graph_aPf,4,128,0,7,1000000,1000000 50000,256,512,2,graph_b(float*),_Z7graph_bPf,8,256,0,7,2000000,1000000 50000,256,512,3,graph_a(float*),_Z7graph_aPf,2,128,0,7,3000000,1000000 "
eq "cuda_graph_exec: 30 successful replays of the graph, 7 of one captured before the recording" \
	"$(rows sql "SELECT pid, graph, graph_exec, instantiate_ts IS NULL, launches, first_ts - $S_NS, last_ts - $S_NS FROM cuda_graph_exec ORDER BY pid")" \
	"50000,256,512,0,30,10000000000,39000000000 50001,,768,1,7,20300000000,26300000000 "
# graph_a: 4 recorded, 2 of them captured: 2 direct, 2 x 30 through graphs.
eq "graph-kernels: direct and replayed launches per kernel, then the graph captured before the recording" \
	"$(rows report graph-kernels)" \
	"62,2,60,30,1,graph_a(float*) 30,0,30,30,1,graph_b(float*) ,,,7,1,(captured before recording) "
eq "top-kernels (graphs=0) counts the 4 + 1 recorded launches, captured ones included" \
	"$(rowsc 1,3,4,6 --pid 50000 report top-kernels)" \
	"4,2,2x1x1/128x1x1,graph_a(float*) 1,1,8x1x1/256x1x1,graph_b(float*) "
eq "top-kernels --param graphs=1: the launches that ran, through graphs too" \
	"$(rowsc 1,3,4,6 --pid 50000 report top-kernels --param graphs=1)" \
	"62,2,2x1x1/128x1x1,graph_a(float*) 30,1,8x1x1/256x1x1,graph_b(float*) "
eq "top-kernels --param graphs=0 is top-kernels" \
	"$(rows report top-kernels --param graphs=0 | md5sum)" "$(rows report top-kernels | md5sum)"

# same NAME ARGS…: the answer from summaries equals --raw's, and has rows
same() {
	local a b
	a=$(rows "${@:2}")
	b=$(rows "${@:2}" --raw)
	if [ "$a" == "$b" ] && [ -n "$a" ]; then ok "$1"
	else bad "$1" "summaries [$a] raw [$b]"; fi
}
for r in "graph-kernels" "top-kernels --param graphs=1"; do
	# shellcheck disable=SC2086 # the report and its parameter
	{
		same "(summary) $r equals --raw over the whole recording" report $r
		same "(summary) $r equals --raw over a window cutting minutes, after the capture" \
			--since "$(rfc $((S + 7)) 25)" --until "$(rfc $((S + 43)) 5)" report $r
		same "(summary) $r equals --raw for one process in a window" \
			--pid 50000 --since "$(rfc $((S + 1)) 5)" --until "$(rfc $((S + 25)))" report $r
	}
done
eq "a window after the capture: its replays are of a graph captured before it" \
	"$(rows --since "$(rfc $((S + 7)) 25)" --until "$(rfc $((S + 43)) 5)" report graph-kernels)" \
	",,,37,2,(captured before recording) "

# The views are in the catalog (gpurec tables / schema), column for column
# as SQLite sees them.
for v in cuda_graph_kernel cuda_graph_exec; do
	eq "gpurec schema $v lists the view's columns in order" \
		"$("$GPUREC" --format csv schema $v | tr -d '\r' | tail -n +2 | cut -d, -f1 | tr '\n' ' ')" \
		"$("${G[@]}" --no-header sql "SELECT name FROM pragma_table_info('$v')" | tr -d '\r' | tr '\n' ' ')"
done
eq "gpurec tables lists both views" \
	"$("$GPUREC" --format csv tables | tr -d '\r' | grep -c '^cuda_graph_[ek]')" "2"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
