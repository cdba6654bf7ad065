#!/usr/bin/env bash
# validate.sh - on a GPU machine (the device tool), compare what a
# statically linked gpurecd records of a PyTorch workload with what
# PyTorch's profiler (CUPTI) saw in the same window.  Also times the
# training loop with gpurecd on and off, interleaved.
#
# Run from the repository root: bash tests/gpu/validate.sh [BIN_DIR]
# (BIN_DIR holds gpurecd and gpurec: `make STATIC=1 B=carry/static`).
set -uo pipefail
BIN=${1:-carry/static}
OUT=${OUT:-/tmp/gr-out}
mkdir -p "$OUT"
D=$(mktemp -d /tmp/gr-gpu.XXXXXX)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$BIN/gpurecd" --data "$D" --flush-interval 200 --config /dev/null >"$OUT/gpurecd.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do grep -q "gpurecd: ready" "$OUT/gpurecd.log" && break; sleep 0.1; done
python3 tests/gpu/workload.py 20 >"$OUT/workload.json" 2>"$OUT/workload.err"
sleep 1
kill -TERM $dpid; wait $dpid
echo "gpurecd exit: $?"
grep -E "attached|sealed|drop" "$OUT/gpurecd.log" | head -20
cat "$OUT/workload.json"
read -r pid t0 t1 < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["pid"], j["t0"], j["t1"])' "$OUT/workload.json")
G="$BIN/gpurec --data $D --format table"
W="pid = $pid AND ts BETWEEN $t0 AND $t1"
$G sql "SELECT api, count(*) AS calls, sum(kernel IS NOT NULL) AS named FROM cuda_kernel WHERE $W GROUP BY api ORDER BY 2 DESC"
$G sql "SELECT count(*) AS launches, round(100.0 * sum(kernel IS NOT NULL) / count(*), 2) AS named_pct FROM cuda_kernel WHERE $W"
$G sql "SELECT kind, async, count(*) AS n, sum(bytes) AS bytes FROM cuda_memcpy WHERE $W GROUP BY 1, 2"
$G sql "SELECT api, op, count(*) FROM cuda_graph WHERE $W GROUP BY 1, 2"
$G sql "SELECT substr(kernel, 1, 70) AS kernel, count(*) FROM cuda_kernel WHERE $W GROUP BY kernel ORDER BY 2 DESC LIMIT 8"
$G sql "SELECT source, sum(count) FROM drops GROUP BY 1"
$G sql "SELECT api, count(*) FROM cuda_api WHERE $W GROUP BY 1 ORDER BY 2 DESC LIMIT 25"
cp "$D"/*.seg "$OUT/" 2>/dev/null | true

# Overhead: step time with gpurecd on and off, interleaved.
if [ "${GR_OVERHEAD:-1}" = 1 ]; then
	for round in 1 2 3; do
		for mode in off on; do
			if [ $mode = on ]; then
				rm -rf "$D.o"; "$BIN/gpurecd" --data "$D.o" --config /dev/null >/dev/null 2>&1 &
				op=$!; sleep 1
			fi
			python3 tests/gpu/overhead.py "$mode" 2>/dev/null
			[ $mode = on ] && { kill -TERM $op; wait $op; }
		done
	done
fi
