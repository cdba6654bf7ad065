#!/usr/bin/env bash
# graphs_gaps.sh - the graphs and launch-gaps reports over a recording of
# known calls (root, eBPF).
#
# tests/cuda/graphs_gaps.c runs against the mock libcuda and libcudart
# (tests/cuda/mock, as in driver.sh: no GPU or nvcc needed) twice while
# gpurecd records with --file-io-min-us 0: "graphs" (a re-capture storm of
# 15 graphs on one stream, one graph launched 5 times on another, one
# failing instantiation) and "gaps" (launches with three pauses of known
# length, file calls and sleeps in them, and a second thread whose calls
# must not count).  Every count must come back exactly; lengths within
# tolerance of the sleeps.
# shellcheck disable=SC2034 # SUITE is lib.sh's
set -uo pipefail
SUITE=graphs_gaps
. "$(dirname "$0")/lib.sh"

M=build/cuda-tests/mock
GG=build/cuda-tests/graphs_gaps
[ -x $GG ] || { bad "graphs_gaps" "not built: run make bpf-test"; finish; exit 1; }
head -c 262144 /dev/urandom >"$T/in.bin"

start_gpurecd --file-io-min-us 0 --cuda-lib $M/libcuda.so.1 --cuda-lib $M/libcudart.so.13
# Its calls take milliseconds: keep them inside one minute.
while [ "$(date +%-S)" -ge 58 ]; do sleep 0.5; done
$GG graphs >"$T/graphs.out" 2>&1 & pg=$!; wait $pg
eq "(graphs) its calls return what the mock returns" "$?" 0
$GG gaps "$T/in.bin" "$T/out.bin" >"$T/gaps.out" 2>&1 & pl=$!; wait $pl
eq "(gaps) its calls succeed" "$?" 0
sleep 0.3
stop_gpurecd

rep() { "$GPUREC" --data "$D" --format csv "$@" | tr -d '\r' | tail -n +2; }
# eqd NAME GOT WANT SQL: eq, and when it fails, the rows SQL selects.
eqd() {
	eq "$1" "$2" "$3"
	[ "$2" == "$3" ] ||
		"$GPUREC" --data "$D" --format table sql "$4" 2>&1 | head -60 | sed 's/^/    | /'
}

# ---- graphs ----------------------------------------------------------------
GR="SELECT ts, tid, api, op, graph, graph_exec, stream, ret FROM cuda_graph WHERE pid = $pg ORDER BY ts"
eqd "(graphs) the calls as recorded: ops, streams, failures" \
	"$(q "SELECT op, stream, ret, count(*), count(graph), count(graph_exec) FROM cuda_graph WHERE pid = $pg GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")" \
	"capture_begin,81,0,15,0,0 capture_begin,82,0,1,0,0 capture_end,81,0,15,15,0 capture_end,82,0,1,1,0 destroy,,0,32,16,16 instantiate,,0,16,16,16 instantiate,,1,1,1,0 launch,81,0,15,0,15 launch,82,0,5,0,5 " "$GR"
# Every column but the times (minute M, first_ts <= last_ts) and host.
eqd "(graphs) one process row, then one storm: 15 instantiations of stream 0x51's captures" \
	"$(rep --pid $pg report graphs | awk -F, -v OFS=, '{ $4 = $4 == "" ? "" : "M"; $13 = $13 <= $14; NF = 13; print }' | tr '\n' ' ')" \
	"process,$pg,graphs_gaps,,,16,17,20,32,16,16,1,1 storm,$pg,graphs_gaps,M,0x51,15,15,15,,15,15,,1 " "$GR"
eq "(graphs) the storm's minute holds its calls" \
	"$(rep --pid $pg report graphs | awk -F, '$1 == "storm" { print ($4 % 60000000000 == 0 && $13 >= $4 && $14 < $4 + 60000000000) }')" "1"
eq "(graphs) the process row spans its calls" \
	"$(rep --pid $pg report graphs | awk -F, '$1 == "process" { print $13 "," $14 }')" \
	"$(q "SELECT min(ts), max(ts) FROM cuda_graph WHERE pid = $pg" | tr -d ' ')"
eq "(graphs) --param storm=15: still a storm; storm=16: none" \
	"$(rep --pid $pg report graphs --param storm=15 | cut -d, -f1 | tr '\n' ' ')/$(rep --pid $pg report graphs --param storm=16 | cut -d, -f1 | tr '\n' ' ')" \
	"process storm /process "
eq "(graphs) --param storm=1: stream 0x52's one instantiation, and the failed one (no capture, no stream)" \
	"$(rep --pid $pg report graphs --param storm=1 | awk -F, '$1 == "storm" { print $5 "," $6 "," $7 "," $8 "," $10 "," $11 }' | tr '\n' ' ')" \
	",0,1,0,0,0 0x51,15,15,15,15,15 0x52,1,1,5,1,1 "

# ---- launch-gaps -------------------------------------------------------------
lt=$(awk '$1 == "launcher" { print $2 }' "$T/gaps.out")
ht=$(awk '$1 == "helper" { print $2 }' "$T/gaps.out")
eq "(gaps) the launcher is the main thread" "$lt" "$pl"
LG="SELECT 'launch' AS t, ts, tid, api, dur, NULL AS state, NULL AS bytes FROM cuda_kernel WHERE pid = $pl UNION ALL SELECT 'graph', ts, tid, api, dur, op, NULL FROM cuda_graph WHERE pid = $pl UNION ALL SELECT 'offcpu', ts, tid, comm, dur, state, NULL FROM offcpu WHERE pid = $pl UNION ALL SELECT 'file', ts, tid, syscall, dur, path, bytes FROM file_io WHERE pid = $pl ORDER BY ts"
eqd "(gaps) 8 kernel launches and a graph launch recorded" \
	"$(q "SELECT (SELECT count(*) FROM cuda_kernel WHERE pid = $pl), (SELECT count(*) FROM cuda_graph WHERE pid = $pl AND op = 'launch')")" \
	"8,1 " "$LG"
G=$(rep --pid $pl report launch-gaps)
# pid, tid, comm, ended_by, then the counts: file calls, reads, read bytes,
# writes, write bytes; the longest pause first.
eqd "(gaps) three pauses, longest first: who, what ended each, its file calls and bytes" \
	"$(echo "$G" | awk -F, '{ print $1 "," $2 "," $3 "," $7 "," $11 "," $12 "," $13 "," $14 "," $15 }' | tr '\n' ' ')" \
	"$pl,$lt,gg-launch,cudaGraphLaunch,5,4,262144,0,0 $pl,$lt,gg-launch,cuLaunchKernel,2,0,0,1,4096 $pl,$lt,gg-launch,(exit),0,0,0,0,0 " "$LG"
# gap_ms: the sleep, plus the calls around it and the wake-up (under
# 100 ms, on a loaded machine too).
eq "(gaps) lengths: 300, 200 and 150 ms sleeps, each within +100 ms" \
	"$(echo "$G" | awk -F, '{ s = NR == 1 ? 300 : NR == 2 ? 200 : 150; print ($6 >= s && $6 < s + 100) "," ($6 * 1e6 <= $5 - $4 + 1e5 && $6 * 1e6 >= $5 - $4 - 1e5) }' | tr '\n' ' ')" \
	"1,1 1,1 1,1 "
K="WITH k AS (SELECT ts, ts + dur AS e, row_number() OVER (ORDER BY ts) AS n FROM cuda_kernel WHERE pid = $pl)"
eq "(gaps) each pause starts at a launch's return, ends at the next launch (graph or kernel) or the exit" \
	"$(echo "$G" | awk -F, '{ print $4 "," $5 }' | tr '\n' ' ')" \
	"$(q "$K SELECT (SELECT e FROM k WHERE n = 5), (SELECT ts FROM cuda_graph WHERE pid = $pl AND op = 'launch') UNION ALL SELECT (SELECT e FROM k WHERE n = 7), (SELECT ts FROM k WHERE n = 8) UNION ALL SELECT (SELECT e FROM k WHERE n = 8), (SELECT max(exit_ts) FROM process WHERE pid = $pl)")"
eq "(gaps) off-CPU in each: all of it asleep (S), the sleep's length, a nanosleep stack as the top one" \
	"$(echo "$G" | awk -F, '{ s = NR == 1 ? 300 : NR == 2 ? 200 : 150; print ($9 ~ /^S [0-9.]+ ms$/) "," ($8 >= s && $8 < s + 100 && $8 <= $6) "," ($NF ~ /;do_nanosleep;/) "," ($10 >= s && $10 <= $8) }' | tr '\n' ' ')" \
	"1,1,1,1 1,1,1,1 1,1,1,1 "
eq "(gaps) --param min_ms=250: only the 300 ms pause" \
	"$(rep --pid $pl report launch-gaps --param min_ms=250 | cut -d, -f7 | tr '\n' ' ')" "cudaGraphLaunch "
eq "(gaps) --param limit=1: the longest" \
	"$(rep --pid $pl report launch-gaps --param limit=1 | cut -d, -f7 | tr '\n' ' ')" "cudaGraphLaunch "
# --until 120 ms after the last launch began: the process lived past the
# window, so the last pause ends with the window, exactly.
last=$(q "SELECT max(ts) FROM cuda_kernel WHERE pid = $pl" | tr -d ' ')
u=$((last + 120000000))
until=$(date -u -d "@${u:0:10}" +%Y-%m-%dT%H:%M:%S).${u:10}Z
eq "(gaps) --until before its exit: the last pause ends with the window" \
	"$(rep --pid $pl --until "$until" report launch-gaps | awk -F, '$7 ~ /^\(/ { print $5 "," $7 "," $11 }')" \
	"$u,(window end),0"
eq "(gaps) the helper thread's calls count nowhere" \
	"$(q "SELECT count(*), sum(bytes) FROM file_io WHERE tid = $ht AND syscall = 'read'")/$(echo "$G" | awk -F, '{ n += $12 } END { print n }')" \
	"2,8192 /4"

eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "
finish
