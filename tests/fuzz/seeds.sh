#!/usr/bin/env bash
# seeds.sh - makes the fuzzers' seed corpora from real segments, written
# by gpurec-synth through the store writer, so nothing binary is committed.
# Usage: seeds.sh SYNTH OUTDIR; fills OUTDIR/segment (whole segment files)
# and OUTDIR/block (each block payload of those segments, one a file).
set -euo pipefail
SYNTH=$1 OUT=$2
T=$(mktemp -d /tmp/gpurec-seeds.XXXXXX)
trap 'rm -rf "$T"' EXIT
rm -rf "$OUT/segment" "$OUT/block"
mkdir -p "$OUT/segment" "$OUT/block"
# Small segments that still hold every encoding: blocks of a few rows
# (CONST and PLAIN columns), of 64 (DELTA, zstd), nulls (block_io's
# unowned requests), odd strings (file_io), and the summary rows.
n=0
for spec in "5 4" "40 64" "300 64" "200 16"; do
	set -- $spec
	n=$((n + 1))
	"$SYNTH" --data "$T/d$n" --events "$1" --block-rows "$2" --seed "$n" \
		--table cuda_kernel --table offcpu --table block_io \
		--table file_io --table drops --memcpy-every 7 >/dev/null 2>"$T/log" ||
		{ cat "$T/log" >&2; exit 1; }
	for f in "$T/d$n"/*.seg; do
		cp "$f" "$OUT/segment/seg$n-$(basename "$f")"
	done
done
"$SYNTH" --data "$T/n" --table nccl --nccl-ranks 2 --nccl-iters 3 \
	--block-rows 32 >/dev/null 2>"$T/log" || { cat "$T/log" >&2; exit 1; }
for f in "$T/n"/*.seg; do cp "$f" "$OUT/segment/nccl-$(basename "$f")"; done
chmod 0644 "$OUT"/segment/*
# Regressions, crafted: a block of 2^21 CONST rows in 10 bytes (readers
# once sized their arrays by it: gigabytes; GR_BLOCK_MAX_ROWS now).
printf '\x01\x80\x80\x80\x01\x01\x02\x00\x00\x00' >"$OUT/block/huge-nrows"
# A fuzzer's find: a ts within a minute of INT64_MIN overflowed the
# summary's minute arithmetic (store/summary.c gr_sum__add).
python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("".join(sys.argv[1:])))' \
	014006098104240608080006080800060808000981011808411428b52ffd6001\
	01d5000080080028002500000000000000000000280854020027dbb68d01ffff\
	ffffffffffffffffffffffffffffffffffffffffffff28b52ffd20817d000030\
	02024a0203000200c349424a4e0b28b52ffd20415d0000280102040608010059\
	725a >"$OUT/block/minute-overflow"
# And: durations summing past INT64_MAX (store/summary.c add_row).
python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("".join(sys.argv[1:])))' \
	014d09020000aed5cb3002000005020000ba810502000005020000acffffffff \
	ffffffff00020000e202020000c6040200000e02000001 \
	>"$OUT/block/sum-overflow"
python3 - "$OUT" <<'PY'
import glob, os, sqlite3, sys
out = sys.argv[1]
n = 0
for f in sorted(glob.glob(os.path.join(out, "segment", "*.seg"))):
    db = sqlite3.connect("file:%s?immutable=1" % f, uri=True)
    for tbl, payload in db.execute("SELECT tbl, payload FROM blocks"):
        n += 1
        with open(os.path.join(out, "block", "%s-%04d" % (tbl, n)), "wb") as o:
            o.write(payload)
    db.close()
# A fuzzer's find: an empty payload reaches the decoder as a NULL pointer
# (gr_block__parse did NULL + 0).  One seed segment with such a block.
src = sorted(glob.glob(os.path.join(out, "segment", "seg3-*")))[0]
dst = os.path.join(out, "segment", "empty-payload.seg")
with open(src, "rb") as i, open(dst, "wb") as o:
    o.write(i.read())
db = sqlite3.connect(dst)
db.execute("PRAGMA journal_mode=DELETE")
db.execute("UPDATE blocks SET payload = X'' WHERE id = (SELECT min(id) FROM blocks)")
db.commit()
db.close()
print("seeds: %d segments, %d blocks" % (
    len(glob.glob(os.path.join(out, "segment", "*"))), n))
PY
