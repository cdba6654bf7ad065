#!/usr/bin/env bash
# graph_kernels.sh - what ran inside CUDA graphs: the cuda_graph_kernel and
# cuda_graph_exec views, the graph-kernels report and top-kernels
# --param graphs=1, over a recording of known captures and replays (root,
# eBPF).
#
# tests/cuda/graph_kernels.c runs against the mock libcuda and libcudart
# (tests/cuda/mock: capture needs a GPU with the real runtime) twice:
# "before" captures and instantiates a graph before gpurecd starts and
# replays it 4 times after; "replay" (with the mock reusing freed graph
# handles, as the real allocator may) captures three graphs, one with a
# launch into another stream during the capture, instantiates one of them
# twice, replays each a known number of times, and re-captures into a
# freed graph handle instantiated into a freed executable graph handle;
# "again" makes before's calls while recorded, its executable graph the
# same handle as before's (two processes, one handle value).  Every row
# must come back exactly.
# shellcheck disable=SC2034 # SUITE is lib.sh's
set -uo pipefail
SUITE=graph_kernels
. "$(dirname "$0")/lib.sh"

M=build/cuda-tests/mock
GK=build/cuda-tests/graph_kernels
[ -x $GK ] || { bad "graph_kernels" "not built: run make bpf-test"; finish; exit 1; }

$GK before "$T/go" >"$T/before.out" 2>&1 & pb=$!
wait_until 20 grep -q ready "$T/before.out" || bad "(before) ready" "not after $WAITED"
start_gpurecd --cuda-lib $M/libcuda.so.1 --cuda-lib $M/libcudart.so.13
# Its graph launches are hooked once gpurecd has found the process (its
# first scan of /proc).
old_seen() { grep -q "pid $pb predates gpurecd" "$T/gpurecd.log"; }
wait_until 20 old_seen || bad "(before) gpurecd found the process" "not after $WAITED: $(cat "$T/gpurecd.log")"
touch "$T/go"; wait $pb
eq "(before) its calls succeed" "$?" 0
GR_MOCK_GRAPH_REUSE=1 $GK replay >"$T/replay.out" 2>&1 & pr=$!; wait $pr
eq "(replay) its calls succeed" "$?" 0
# The same calls as "before", recorded whole: the mock's handles count up
# from the same base in every process, so its executable graph has the
# same handle as before's, as two processes' may on a real host.
$GK before "$T/go" >"$T/again.out" 2>&1 & pa=$!; wait $pa
eq "(again) its calls succeed" "$?" 0
sleep 0.3
stop_gpurecd

rep() { "$GPUREC" --data "$D" --format csv "$@" | tr -d '\r' | tail -n +2 | tr '\n' ' '; }
# repc FIELDS ARGS…: rep, each row cut to FIELDS (cut -f; the kernel's
# name, which may hold a comma, last).
repc() { "$GPUREC" --data "$D" --format csv "${@:2}" | tr -d '\r' | tail -n +2 | cut -d, -f"$1" | tr '\n' ' '; }
# eqd NAME GOT WANT SQL: eq, and when it fails, the rows SQL selects.
eqd() {
	eq "$1" "$2" "$3"
	[ "$2" == "$3" ] ||
		"$GPUREC" --data "$D" --format table sql "$4" 2>&1 | head -60 | sed 's/^/    | /'
}
GR="SELECT ts, pid, api, op, graph, graph_exec, stream, ret FROM cuda_graph ORDER BY ts"
KR="SELECT ts, pid, api, kernel, grid_x, grid_y, block_x, shared_mem, stream, ret FROM cuda_kernel ORDER BY ts"

# ---- the calls as recorded ---------------------------------------------------
eqd "(replay) 8 kernel launches: 2 direct, 4 during the capture of G (1 on S2), 1 into G2's, 1 into G3's" \
	"$(q "SELECT count(*), sum(stream = 97), sum(stream = 98) FROM cuda_kernel WHERE pid = $pr")" \
	"8,7,1 " "$KR"
eqd "(replay) graph calls: 3 captures, 3 instantiations, 12 + 1 failed launches" \
	"$(q "SELECT op, count(*), sum(ret != 0) FROM cuda_graph WHERE pid = $pr GROUP BY op ORDER BY op")" \
	"capture_begin,3,0 capture_end,3,0 destroy,2,0 instantiate,3,0 launch,13,1 " "$GR"
eqd "(before) only its 4 graph launches were recorded" \
	"$(q "SELECT op, count(*) FROM cuda_graph WHERE pid = $pb GROUP BY op")/$(q "SELECT count(*) FROM cuda_kernel WHERE pid = $pb")" \
	"launch,4 /0 " "$GR"

# Handles as the program saw them: G and E1 come back for G3 and E3.
read -r G G2 G3 <<<"$(q "SELECT graph FROM cuda_graph WHERE pid = $pr AND op = 'capture_end' ORDER BY ts" | tr -d ',')"
read -r E1 E2 E3 <<<"$(q "SELECT graph_exec FROM cuda_graph WHERE pid = $pr AND op = 'instantiate' ORDER BY ts" | tr -d ',')"
eq "(again) its executable graph's handle is before's" \
	"$(q "SELECT count(DISTINCT graph_exec), count(DISTINCT pid) FROM cuda_graph WHERE pid IN ($pb, $pa) AND op = 'launch'")" "1,2 "
eq "(replay) the mock reused the freed handles: G3 = G, E3 = E1, all else distinct" \
	"$([ "$G3" = "$G" ] && [ "$E3" = "$E1" ] && [ "$G2" != "$G" ] && [ "$E2" != "$E1" ] && echo 1)" "1"

# ---- cuda_graph_kernel ---------------------------------------------------------
GK="SELECT graph, graph_exec, seq, kernel, kernel_mangled, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem, stream FROM cuda_graph_kernel WHERE pid = $pr ORDER BY capture_ts, instantiate_ts, seq"
eqd "(replay) each graph's kernels in capture order, once per executable graph; G2 never instantiated; G3 = G's handle tied to E3 only" \
	"$(q "$GK")" \
	"$G,$E1,1,step(float*),_Z4stepPf,4,1,1,64,1,1,0,97 $G,$E1,2,\"reduce(float*, int)\",_Z6reducePfi,8,2,1,128,1,1,256,97 $G,$E1,3,step(float*),_Z4stepPf,16,1,1,32,1,1,0,97 $G,$E2,1,step(float*),_Z4stepPf,4,1,1,64,1,1,0,97 $G,$E2,2,\"reduce(float*, int)\",_Z6reducePfi,8,2,1,128,1,1,256,97 $G,$E2,3,step(float*),_Z4stepPf,16,1,1,32,1,1,0,97 $G2,,1,scale(float*),_Z5scalePf,1,1,1,1,1,1,0,97 $G,$E1,1,\"reduce(float*, int)\",_Z6reducePfi,8,2,1,128,1,1,256,97 " \
	"$GR"
eq "(replay) each row's ts is a captured launch's, inside its capture, and instantiate_ts that of its instantiation" \
	"$(q "SELECT count(*), sum(g.ts = k.ts AND g.ts > g.capture_ts AND g.ts < g.capture_end_ts), sum(g.instantiate_ts IN (SELECT ts FROM cuda_graph c WHERE c.pid = $pr AND c.op = 'instantiate' AND c.graph_exec = g.graph_exec)) FROM cuda_graph_kernel g JOIN cuda_kernel k ON k.pid = g.pid AND k.ts = g.ts WHERE g.pid = $pr")" \
	"8,8,7 "
eq "(before) nothing captured while recording" \
	"$(q "SELECT count(*) FROM cuda_graph_kernel WHERE pid = $pb")" "0 "

eq "(again) its one kernel, tied to its instantiation" \
	"$(q "SELECT seq, kernel, grid_x, block_x, instantiate_ts IS NOT NULL FROM cuda_graph_kernel WHERE pid = $pa")" \
	"1,step(float*),4,64,1 "

# ---- cuda_graph_exec -----------------------------------------------------------
eqd "(replay) one row per life of an executable graph: E1 7 launches, E2 3, E3 (E1's handle again) 2; the failed launch nowhere" \
	"$(q "SELECT graph, graph_exec, launches, instantiate_ts < first_ts, first_ts <= last_ts FROM cuda_graph_exec WHERE pid = $pr ORDER BY instantiate_ts")" \
	"$G,$E1,7,1,1 $G,$E2,3,1,1 $G,$E1,2,1,1 " "$GR"
eq "(replay) E1's first life ends before E3's begins" \
	"$(q "SELECT (SELECT last_ts FROM cuda_graph_exec WHERE pid = $pr ORDER BY instantiate_ts LIMIT 1) < (SELECT max(instantiate_ts) FROM cuda_graph_exec WHERE pid = $pr)")" "1 "
eqd "(before) its executable graph: 4 launches, instantiation and graph unknown" \
	"$(q "SELECT graph IS NULL, instantiate_ts IS NULL, launches FROM cuda_graph_exec WHERE pid = $pb")" \
	"1,1,4 " "$GR"
eqd "(again) the same handle, its own life: 4 launches after its instantiation" \
	"$(q "SELECT graph IS NULL, instantiate_ts < first_ts, launches FROM cuda_graph_exec WHERE pid = $pa")" \
	"0,1,4 " "$GR"

# ---- graph-kernels ---------------------------------------------------------------
# launches, direct, via_graphs, graph_launches, graphs, kernel
want_pr='22,2,20,10,1,step(float*) 12,0,12,12,2,"reduce(float*, int)" 1,1,0,0,1,scale(float*) '
eq "(replay) graph-kernels: step 2 direct + 10 graph launches x 2; reduce 12 through 3 lives of 2 graphs; scale only its S2 launch" \
	"$(rep --pid $pr report graph-kernels)" "$want_pr"
eq "(replay) graph-kernels --raw: the same" "$(rep --pid $pr report graph-kernels --raw)" "$want_pr"
eq "(before) graph-kernels: a row for the graph captured before recording, with its launches" \
	"$(rep --pid $pb report graph-kernels)" ",,,4,1,(captured before recording) "
eq "(again) graph-kernels: step, 4 runs through its graph's launches" \
	"$(rep --pid $pa report graph-kernels)" "4,0,4,4,1,step(float*) "
eq "graph-kernels over all three: kernels first, then the unknown graph" \
	"$(rep report graph-kernels)" '26,2,24,14,2,step(float*) 12,0,12,12,2,"reduce(float*, int)" 1,1,0,0,1,scale(float*) ,,,4,1,(captured before recording) '
eq "graph-kernels --raw over all three: the same" \
	"$(rep report graph-kernels --raw)" "$(rep report graph-kernels)"
# A window starting after G's capture: its instantiations and launches are
# seen, its kernels not.
cut=$(q "SELECT ts + 1 FROM cuda_graph WHERE pid = $pr AND op = 'capture_end' ORDER BY ts LIMIT 1" | tr -d ' ')
since=$(date -u -d "@${cut:0:10}" +%Y-%m-%dT%H:%M:%S).${cut:10}Z
eq "(replay) --since after G's capture: E1's and E2's launches are of a graph whose capture is unseen; G3's kernel is" \
	"$(rep --pid $pr --since "$since" report graph-kernels)" \
	'2,0,2,2,1,"reduce(float*, int)" 0,0,0,0,1,scale(float*) ,,,10,2,(capture not recorded) '

# ---- top-kernels ----------------------------------------------------------------
eq "(replay) top-kernels counts recorded launches, captured ones included" \
	"$(repc 1,3,6- --pid $pr report top-kernels)" \
	'4,2,step(float*) 2,1,"reduce(float*, int)" 2,1,scale(float*) '
eq "(replay) top-kernels --param graphs=1: the launches that ran, through graphs too" \
	"$(repc 1-4,6- --pid $pr report top-kernels --param graphs=1)" \
	'22,62.9,2,16x1x1/32x1x1,step(float*) 12,34.3,1,8x2x1/128x1x1,"reduce(float*, int)" 1,2.9,1,1x1x1/1x1x1,scale(float*) '
eq "(replay) top-kernels --param graphs=1 --raw: the same" \
	"$(rep --pid $pr report top-kernels --param graphs=1 --raw)" \
	"$(rep --pid $pr report top-kernels --param graphs=1)"
eq "(replay) top-kernels --param graphs=0 is top-kernels" \
	"$(rep --pid $pr report top-kernels --param graphs=0)" "$(rep --pid $pr report top-kernels)"

eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "
finish
