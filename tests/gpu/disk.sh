#!/usr/bin/env bash
# disk.sh - on a GPU machine (the device tool): what a real PyTorch
# recording costs on disk with today's writer, summaries included (issue
# 20, point 5: launches <= 4 B/event).  gpurecd records two training
# processes (an MLP, forward, backward and AdamW, each step synced) for
# SECONDS; then, from the segment files, bytes per event of each table's
# blocks, the summaries' estimated bytes by kind (their blobs plus 64 B a
# row, as bench/busyday.sh counts them) and the directory's bytes per
# event.
#
# Run from the repository root: bash tests/gpu/disk.sh [BIN_DIR] [SECONDS]
# (BIN_DIR holds gpurecd and gpurec: make PKG=1 B=carry/pkg carry/pkg/gpurecd
# carry/pkg/gpurec, glibc dynamic, so that NVML loads and the gpu tables
# are written as on a packaged install).
# Results go to stdout and $OUT/disk.json.
set -uo pipefail
BIN=${1:-carry/pkg}
SECS=${2:-60}
OUT=${OUT:-/tmp/gr-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-disk.XXXXXX)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

"$BIN/gpurecd" --data "$W/rec" --config /dev/null >"$OUT/gpurecd-disk.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do grep -q "gpurecd: ready" "$OUT/gpurecd-disk.log" && break; sleep 0.1; done

train() {
	PYTHONPATH="$(dirname "$0")" python3 - "$SECS" <<'PY'
import sys, time, torch
from mlp import make_step
secs = float(sys.argv[1])
train_step = make_step(torch.device("cuda"))
time.sleep(2.5)  # gpurecd's rescan attaches to this process first
steps, t0 = 0, time.time()
while time.time() - t0 < secs:
    train_step()
    if steps % 10 == 0:
        torch.cuda.synchronize()
    steps += 1
torch.cuda.synchronize()
print("steps", steps, flush=True)
PY
}
train >"$OUT/train1.txt" 2>&1 &
t1=$!
train >"$OUT/train2.txt" 2>&1 &
t2=$!
wait $t1 $t2
sleep 1
kill -TERM "$dpid"; wait "$dpid"; echo "gpurecd exit: $?"
cat "$OUT/train1.txt" "$OUT/train2.txt"
"$BIN/gpurec" --data "$W/rec" --format table sql "SELECT api, count(*) AS calls FROM cuda_api GROUP BY api ORDER BY 2 DESC LIMIT 8"
"$BIN/gpurec" --data "$W/rec" --format table sql "SELECT source, sum(count) FROM drops GROUP BY 1"

python3 - "$W/rec" <<'PY' | tee "$OUT/disk.json"
import glob, json, os, sqlite3, sys
d = sys.argv[1]
rows, byts, kinds, colb = {}, {}, {}, {}
def varint(b, i):
    r = s = 0
    while True:
        x = b[i]; i += 1; r |= (x & 0x7f) << s; s += 7
        if x < 0x80:
            return r, i
files = sorted(glob.glob(os.path.join(d, "*.seg")))
for f in files:
    db = sqlite3.connect("file:%s?mode=ro" % f, uri=True)
    for t, n, b in db.execute("SELECT tbl, sum(count), sum(length(payload)) FROM blocks GROUP BY tbl"):
        rows[t] = rows.get(t, 0) + n
        byts[t] = byts.get(t, 0) + b
    # cuda_kernel's stored bytes by column (the block header, codec.h:
    # u8 version, varint nrows, varint ncols, then per column u8 flags,
    # varint raw_len, varint stored_len [, varint value if CONST]).
    names = [r[0] for r in db.execute("SELECT name FROM columns WHERE tbl = 'cuda_kernel' ORDER BY idx")]
    for (p,) in db.execute("SELECT payload FROM blocks WHERE tbl = 'cuda_kernel'"):
        i = 1
        _, i = varint(p, i)
        nc, i = varint(p, i)
        for c in range(nc):
            fl = p[i]; i += 1
            _, i = varint(p, i)
            st, i = varint(p, i)
            if fl & 3 == 2:
                _, i = varint(p, i)
            colb[names[c]] = colb.get(names[c], 0) + st
    try:
        for k, n, b in db.execute("SELECT kind, count(*), coalesce(sum(length(hist)), 0) + coalesce(sum(length(dur_sq)), 0) + 64 * count(*) FROM summary GROUP BY kind"):
            kinds[k] = [kinds.get(k, [0, 0])[0] + n, kinds.get(k, [0, 0])[1] + b]
    except sqlite3.Error:
        pass
    db.close()
events = sum(rows.values())
size = sum(os.path.getsize(f) for f in files)
print(json.dumps({
    "segments": len(files), "events": events, "bytes": size,
    "b_per_event": round(size / max(events, 1), 3),
    "tables": {t: {"rows": rows[t], "b_per_event": round(byts[t] / rows[t], 3)} for t in sorted(rows)},
    "cuda_kernel_columns": {c: round(b / max(rows.get("cuda_kernel", 0), 1), 3) for c, b in sorted(colb.items(), key=lambda x: -x[1])},
    "summary_kinds": {str(k): {"rows": v[0], "bytes": v[1],
                               "b_per_event": round(v[1] / max(events, 1), 4)} for k, v in sorted(kinds.items())},
}, indent=1))
PY
chattr -R -i "$W" 2>/dev/null
# KEEP=1: the recording comes back too (under $OUT/rec), to study offline.
[ -n "${KEEP:-}" ] && cp -r "$W/rec" "$OUT/rec"
rm -rf "$W"
