#!/usr/bin/env bash
# graph_kernels.sh - on a GPU machine (the device tool): PyTorch's
# torch.cuda.graph captured and replayed under gpurecd, and gpurec's
# graph-kernels checked against the kernels torch.profiler saw run.
#
# Run from the repository root: bash tests/gpu/graph_kernels.sh [BIN_DIR]
# [REPLAYS] [DIRECT] (BIN_DIR holds gpurecd and gpurec: make STATIC=1
# B=carry/static all).  tests/gpu/graph_capture.py warms a step up 3 times,
# captures it once, replays the graph REPLAYS times (default 200) and runs
# the step DIRECT times (default 50) outside it.  For every kernel of the
# captured graph, graph-kernels must say:
#   launches    = the runs torch.profiler counted (warm-up + direct +
#                 replays: the launches made during capture ran nothing)
#   via_graphs  = REPLAYS x its nodes in the graph (cuda_graph_kernel)
#   graph_launches = REPLAYS
# and cuda_graph_exec one executable graph with REPLAYS launches.  Kernels
# are matched by name with the blanks taken out (CUPTI's demangler and
# gpurec's space templates differently); where names do not match, the
# sorted lists of counts must still agree.  Prints ok/FAIL lines and the
# tally; files go to $OUT.
set -uo pipefail
BIN=${1:-carry/static}
REPLAYS=${2:-200}
DIRECT=${3:-50}
OUT=${OUT:-/tmp/gr-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-graph.XXXXXX)
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }

"$BIN/gpurecd" --data "$W/d" --flush-interval 200 --config /dev/null >"$OUT/graph-gpurecd.log" 2>&1 &
dpid=$!
for _ in $(seq 300); do grep -q "gpurecd: ready" "$OUT/graph-gpurecd.log" && break; sleep 0.1; done
python3 tests/gpu/graph_capture.py "$REPLAYS" "$DIRECT" >"$OUT/graph-capture.json" 2>"$OUT/graph-capture.err"
eq "graph_capture.py succeeds" "$?" 0
sleep 1
kill -TERM $dpid; wait $dpid
eq "gpurecd exits 0" "$?" 0

pid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' "$OUT/graph-capture.json")
G="$BIN/gpurec --data $W/d --pid $pid --format csv"
$G report graph-kernels >"$OUT/graph-kernels.csv"
$G sql "SELECT graph, graph_exec, seq, kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem FROM cuda_graph_kernel ORDER BY capture_ts, seq" >"$OUT/graph-nodes.csv"
$G sql "SELECT * FROM cuda_graph_exec" >"$OUT/graph-exec.csv"
$G sql "SELECT op, count(*) FROM cuda_graph GROUP BY op ORDER BY op" >"$OUT/graph-calls.csv"
cat "$OUT/graph-calls.csv" "$OUT/graph-nodes.csv" "$OUT/graph-exec.csv" "$OUT/graph-kernels.csv"

eq "one executable graph, replayed $REPLAYS times, its instantiation seen" \
	"$(tail -n +2 "$OUT/graph-exec.csv" | awk -F, '{ print ($5 != "") "," $6 }' | tr '\n' ' ')" "1,$REPLAYS "
nodes=$(($(wc -l <"$OUT/graph-nodes.csv") - 1))
if [ "$nodes" -gt 0 ]; then ok "the graph has $nodes kernels"; else bad "graph kernels" "none tied to the capture"; fi

python3 - "$OUT/graph-capture.json" "$OUT/graph-kernels.csv" "$OUT/graph-nodes.csv" "$REPLAYS" <<'PY' >"$OUT/graph-compare.txt"
import collections, csv, json, sys
prof = json.load(open(sys.argv[1]))["kernels"]
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["launches"]]
nodes = list(csv.DictReader(open(sys.argv[3])))
replays = int(sys.argv[4])
key = lambda n: "".join(n.split())
pk = {key(n): c for n, c in prof.items()}
per = {}
for n in nodes:
    per[n["kernel"]] = per.get(n["kernel"], 0) + 1
named = all(key(r["kernel"]) in pk for r in rows)
print("names", "match" if named else "differ")
for r in rows:
    k = r["kernel"]
    print("kernel", k, "gpurec", r["launches"], "profiler", pk.get(key(k)))
print("via", all(int(r["via_graphs"]) == replays * per.get(r["kernel"], 0)
                 for r in rows))
print("graph_launches", all(int(r["graph_launches"]) == replays for r in rows))
if named:
    print("counts", all(int(r["launches"]) == pk[key(r["kernel"])] for r in rows))
else:
    # Unmatched names: the graph kernels' counts must be among the
    # profiler's, as a multiset.
    got = collections.Counter(int(r["launches"]) for r in rows)
    print("counts", not got - collections.Counter(pk.values()))
PY
cat "$OUT/graph-compare.txt"
c() { awk -v k="$1" '$1 == k { print $2 }' "$OUT/graph-compare.txt"; }
eq "each graph kernel's via_graphs is $REPLAYS x its nodes" "$(c via)" True
eq "each graph kernel ran through $REPLAYS graph launches" "$(c graph_launches)" True
eq "each graph kernel's launches equal the runs torch.profiler saw ($(c names) names)" "$(c counts)" True
echo "$pass passed, $fail failed, 0 skipped"
chattr -R -i "$W" 2>/dev/null; rm -rf "$W"
[ "$fail" -eq 0 ]
