#!/usr/bin/env bash
# naming.sh - why are launches of a PyTorch process that predates gpurecd
# unnamed?  Runs tests/gpu/handles.py, then records a warm workload.py
# process with gpurecd --verbose (which logs why stubs go unnamed) and
# prints the unnamed launches by API.  Usage: bash tests/gpu/naming.sh BIN_DIR
set -uo pipefail
BIN=${1:-carry/static}
OUT=${OUT:-/tmp/gr-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-name.XXXXXX)
python3 - <<'PY'
import glob, struct, os
for p in glob.glob("/opt/torch/.venv/lib/python3*/site-packages/torch/lib/libtorch_cuda*.so") + \
         glob.glob("/opt/torch/.venv/lib/python3*/site-packages/torch/lib/libc10_cuda.so"):
    with open(p, "rb") as f:
        h = f.read(64)
        shoff, = struct.unpack_from("<Q", h, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", h, 0x3a)
        f.seek(shoff); sh = f.read(shentsize * shnum)
        def sec(i): return struct.unpack_from("<IIQQQQIIQQ", sh, i * shentsize)
        s = sec(shstrndx); f.seek(s[4]); strs = f.read(s[5])
        out = []
        for i in range(shnum):
            n, t, fl, addr, off, size = sec(i)[:6]
            nm = strs[n:strs.index(b"\0", n)].decode()
            if nm in (".symtab", ".dynsym", ".strtab", ".dynstr", ".text", ".nv_fatbin"):
                out.append("%s=%d" % (nm, size))
        print(p, os.path.getsize(p), " ".join(out))
PY
python3 tests/gpu/handles.py 2>&1 | tee "$OUT/handles.jsonl"
GR_READY="$W/ready" GR_GO="$W/go" GR_HOLD="$W/hold" python3 tests/gpu/workload.py 5 >"$OUT/naming-workload.json" 2>"$OUT/naming-workload.err" &
wpid=$!
for _ in $(seq 600); do [ -e "$W/ready" ] && break; sleep 0.1; done
"$BIN/gpurecd" --data "$W/d" --flush-interval 200 --config /dev/null --verbose >"$OUT/naming-gpurecd.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do grep -q "gpurecd: ready" "$OUT/naming-gpurecd.log" && break; sleep 0.1; done
touch "$W/go"
for _ in $(seq 600); do grep -q "cannot name" "$OUT/naming-gpurecd.log" && break; sleep 0.1; done
sleep 5
python3 tests/gpu/dumpmem.py $wpid $(grep -o "stub 0x[0-9a-f]*" "$OUT/naming-gpurecd.log" | sort -u | head -4 | cut -c6-) >"$OUT/dumpmem.txt" 2>&1
touch "$W/hold"; wait $wpid
sleep 1; kill -TERM $dpid; wait $dpid
grep -E "cannot name|registrations|predates" "$OUT/naming-gpurecd.log"
G="$BIN/gpurec --data $W/d --format table"
$G sql "SELECT api, count(*) AS calls, sum(kernel IS NOT NULL) AS named FROM cuda_kernel GROUP BY api"
$G sql "SELECT api, substr(kernel, 1, 70) AS kernel, count(*) FROM cuda_kernel GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 40"
grep -o '/[^ ]*\.so[^ ]*' /proc/$$/maps >/dev/null 2>&1 || true
