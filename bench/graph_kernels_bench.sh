#!/usr/bin/env bash
# graph_kernels_bench.sh [BUILD] - what the CUDA graph views cost over a
# busy recording: HOURS (default 1) of 30,000 launches/s from gpurec-synth,
# plus the graph calls of 8 processes that each capture 40 graphs of 50
# kernels at the start (as vLLM captures one graph per batch size) and
# replay them 20 times a second each until the end.
#
# The launches are BUILD/bench-graphs/launches (gpurec-synth); the graph
# processes' calls and their captured launches, BUILD/bench-graphs/graphs
# (gpurec-synth --rows, same host), both made once and reused while the
# stamp matches.  Prints, best of 3 wall seconds each:
#   graphs.top_kernels_s           top-kernels as shipped (graphs=0)
#   graphs.top_kernels_nograph_s   the same report without the graph arms
#                                  (the SQL it replaced), for comparison
#   graphs.top_kernels_graphs_s    top-kernels --param graphs=1
#   graphs.graph_kernels_s         graph-kernels (summaries)
#   graphs.graph_kernels_10m_s     graph-kernels over the first 10 minutes
#   graphs.graph_kernels_10m_raw_s ... and --raw
#   graphs.graph_kernel_rows       rows of cuda_graph_kernel (8 x 40 x 50)
#   graphs.graph_kernels_equal     1 if both forms agree over those 10 min
set -euo pipefail
B=${1:-build}
H=${HOURS:-1}
D=$B/bench-graphs
N=$((H * 3600 * 30000))
STAMP="v2 hours=$H"
S=1793491200000000000 # 2026-11-01T00:00:00Z
if [ "$(cat "$D/.stamp" 2>/dev/null)" != "$STAMP" ]; then
	chattr -R -i "$D" 2>/dev/null || true
	rm -rf "$D"
	mkdir -p "$D"
	echo "# generating $D (once): $STAMP" >&2
	t0=$(date +%s)
	"$B/gpurec-synth" --data "$D/launches" --host bench --events "$N" \
		--rate 30000 --flush-every 300000 --start "$S" >/dev/null
	# Process p (pid 50000 + p, stream 4096 + p), graph g: capture_begin,
	# 50 launches 1 µs apart, capture_end, instantiate; then a launch of
	# graph n % 40 every 50 ms.  Handles: graph 0x7000000 + p * 0x10000 +
	# g, its executable graph that + 0x8000.
	python3 - "$S" "$H" >"$D/rows.txt" <<'PY'
import sys
S, H = int(sys.argv[1]), int(sys.argv[2])
rows = []
for p in range(8):
    pid, st = 50000 + p, 4096 + p
    c = "pid=%d\ttid=%d\tret=0" % (pid, pid)
    for g in range(40):
        t = S + p * 1000000 + g * 100000
        gr = 0x7000000 + p * 0x10000 + g
        rows.append((t, "cuda_graph\tts=%d\t%s\tapi=cudaStreamBeginCapture"
                     "\top=capture_begin\tstream=%d" % (t, c, st)))
        for i in range(50):
            k = t + 1000 + i * 1000
            name = "graph_kernel_%d" % i
            rows.append((k, "cuda_kernel\tts=%d\t%s\tapi=cudaLaunchKernel"
                         "\tkernel=%s(float*)\tkernel_mangled=_Z%d%sPf"
                         "\tgrid_x=%d\tgrid_y=1\tgrid_z=1\tblock_x=128"
                         "\tblock_y=1\tblock_z=1\tshared_mem=0\tstream=%d"
                         % (k, c, name, len(name), name, 1 + i, st)))
        rows.append((t + 60000, "cuda_graph\tts=%d\t%s\tapi=cudaStreamEndCapture"
                     "\top=capture_end\tstream=%d\tgraph=%d"
                     % (t + 60000, c, st, gr)))
        rows.append((t + 70000, "cuda_graph\tts=%d\t%s\tapi=cudaGraphInstantiate"
                     "\top=instantiate\tgraph=%d\tgraph_exec=%d"
                     % (t + 70000, c, gr, gr + 0x8000)))
    for n in range(H * 3600 * 20 - 20):
        t = S + 1000000000 + n * 50000000 + p * 1000
        rows.append((t, "cuda_graph\tts=%d\t%s\tapi=cudaGraphLaunch"
                     "\top=launch\tstream=%d\tgraph_exec=%d"
                     % (t, c, st, 0x7000000 + p * 0x10000 + n % 40 + 0x8000)))
rows.sort()
sys.stdout.write("".join(r[1] + "\n" for r in rows))
PY
	"$B/gpurec-synth" --data "$D/graphs" --host bench --rows "$D/rows.txt" >/dev/null
	rm "$D/rows.txt"
	echo "# generated in $(($(date +%s) - t0)) s, $(du -sh "$D" | cut -f1)" >&2
	echo "$STAMP" >"$D/.stamp"
fi
G="$B/gpurec --data $D/launches --data $D/graphs --format csv"

best() { # best of 3 wall times of "$@", seconds
	local b=""
	for _ in 1 2 3; do
		local t0 t1
		t0=$(date +%s%N)
		"$@" >/dev/null
		t1=$(date +%s%N)
		local s=$((t1 - t0))
		if [ -z "$b" ] || [ "$s" -lt "$b" ]; then b=$s; fi
	done
	awk -v n="$b" 'BEGIN { printf "%.3f", n / 1e9 }'
}

# top-kernels without its graph arms: the summary half as it was before
# them (its share then came from a second scan of sum_kernel).
NOGRAPH="SELECT sum(launches) AS launches, round(100.0 * sum(launches) / (SELECT sum(launches) FROM sum_kernel), 1) AS pct, count(DISTINCT grid_x || 'x' || grid_y || 'x' || grid_z || '/' || block_x || 'x' || block_y || 'x' || block_z) AS shapes, min(grid_x || 'x' || grid_y || 'x' || grid_z || '/' || block_x || 'x' || block_y || 'x' || block_z) AS shape, CASE WHEN max(ts_last) > min(ts) THEN round((sum(launches) - 1) * 1e9 / (max(ts_last) - min(ts)), 1) END AS launches_per_s, coalesce(kernel, '(unnamed)') AS kernel FROM sum_kernel GROUP BY kernel ORDER BY launches DESC, kernel LIMIT 25"
same=$([ "$($G sql "$NOGRAPH" | md5sum)" == "$($G report top-kernels | md5sum)" ] && echo 1 || echo 0)
echo "graphs.top_kernels_s $(best $G report top-kernels) s"
echo "graphs.top_kernels_nograph_s $(best $G sql "$NOGRAPH") s"
echo "graphs.top_kernels_same_output $same"
echo "graphs.top_kernels_graphs_s $(best $G report top-kernels --param graphs=1) s"
echo "graphs.graph_kernels_s $(best $G report graph-kernels) s"
# --raw over ten minutes from the start (the captures and 12,000 graph
# launches), as reports_bench.sh times its raw forms.
W="--since 2026-11-01T00:00:00Z --until 2026-11-01T00:10:00Z"
echo "graphs.graph_kernels_10m_s $(best $G $W report graph-kernels) s"
echo "graphs.graph_kernels_10m_raw_s $(best $G $W report graph-kernels --raw) s"
echo "graphs.graph_kernel_rows $($G sql 'SELECT count(*) FROM cuda_graph_kernel' | tail -1)"
echo "graphs.graph_kernels_equal $([ "$($G $W report graph-kernels | md5sum)" == "$($G $W report graph-kernels --raw | md5sum)" ] && echo 1 || echo 0)"
