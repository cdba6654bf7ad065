#!/usr/bin/env bash
# run.sh - end-to-end tests of `gpurec` over recordings written by
# gpurec-synth through the store.  Every check compares exact values.
# Env: GPUREC, SYNTH (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
SYNTH=${SYNTH:-build/gpurec-synth}
T=$(mktemp -d /tmp/gpurec-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
# eq NAME GOT WANT
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
# q ARGS…: the first data row of csv output
q() { "$GPUREC" --format csv "$@" 2>"$T/stderr" | tr -d '\r' | sed -n 2p; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }

S=1795000000   # 2026-11-18T09:46:40Z
S_NS=${S}000000000
rfc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# A recording: 100,000 launches 1 ms apart from 4 processes, small blocks
# so pruning shows, sealed into 5 segments.
A="$T/a"
synth --data "$A" --events 100000 --interval 1000000 --start "$S_NS" \
	--block-rows 1000 --rotate-every 20000 --host alpha

eq "count of every event" "$(q --data "$A" sql 'SELECT count(*) FROM cuda_kernel')" 100000
eq "cuda_api includes launches" "$(q --data "$A" sql 'SELECT count(*) FROM cuda_api')" 100000
eq "segments listed" "$(q --data "$A" sql 'SELECT count(*), sum(events), sum(sealed) FROM segments')" "5,100000,5"

qa() { "$GPUREC" --format csv "$@" 2>"$T/stderr" | tr -d '\r' | tail -n +2; }
eq "report recording: segments, span, events, no gap over 60 s" \
	"$(qa --data "$A" report recording | tr '\n' ' ')" \
	"segments,alpha,\"5 sealed, $(q --data "$A" sql 'SELECT sum(bytes) FROM segments') bytes\",5 span,alpha,$S_NS .. $((S_NS + 99999000000)),99.999 events,cuda_kernel,,100000 "
eq "report recording --param gap_s=0: the 1 ms between each two segments" \
	"$(qa --data "$A" report recording --param gap_s=0 | grep -c '^gap,.*,0.001$')" 4

at=$((S_NS + 10000000000))
eq "report timeline: the 11 launches within 5 ms of a time, in order" \
	"$(qa --data "$A" report timeline --param at=$at --param delta_ms=5 | awk -F, '{ n++; t[$3]++; if (n == 1) f = $2; l = $2 } END { print n, f, l, t["cuda_kernel"] }')" \
	"11 -5000000 5000000 11"

# --- time windows -----------------------------------------------------
since=$(rfc $((S + 10))) until=$(rfc $((S + 20)))
eq "--since/--until window is exact" \
	"$(q --data "$A" --since "$since" --until "$until" sql 'SELECT count(*), min(ts), max(ts) FROM cuda_kernel')" \
	"10001,$((S_NS + 10000000000)),$((S_NS + 20000000000))"
got=$(GPUREC_DEBUG_STATS=1 "$GPUREC" --data "$A" --since "$since" --until "$until" \
	--format csv sql 'SELECT count(*) FROM cuda_kernel' 2>&1 >/dev/null)
blocks=${got##*blocks_read=}
if [ "$blocks" -le 12 ]; then ok "window reads only overlapping blocks ($blocks of 100)"
else bad "window pruning" "read $blocks blocks of 100"; fi
eq "WHERE ts range is exact" \
	"$(q --data "$A" sql "SELECT count(*) FROM cuda_kernel WHERE ts >= $((S_NS + 5000000000)) AND ts < $((S_NS + 7500000000))")" 2500
got=$(GPUREC_DEBUG_STATS=1 "$GPUREC" --data "$A" --format csv \
	sql "SELECT count(*) FROM cuda_kernel WHERE ts BETWEEN $((S_NS + 5000000000)) AND $((S_NS + 5999000000))" 2>&1 >/dev/null)
blocks=${got##*blocks_read=}
if [ "$blocks" -le 2 ]; then ok "WHERE ts prunes blocks ($blocks of 100)"
else bad "WHERE ts pruning" "read $blocks blocks"; fi
eq "window and WHERE combine" \
	"$(q --data "$A" --since "$since" sql "SELECT count(*) FROM cuda_kernel WHERE ts < $((S_NS + 11000000000))")" 1000
eq "window beyond the data is empty" \
	"$(q --data "$A" --since "$(rfc $((S + 500)))" sql 'SELECT count(*) FROM cuda_kernel')" 0
eq "window_since(), window_until(): the window in ns, NULL where open" \
	"$(q --data "$A" --since "$since" --until "$until" sql 'SELECT window_since(), window_until()')/$(q --data "$A" sql 'SELECT window_since() IS NULL, window_until() IS NULL')" \
	"$((S_NS + 10000000000)),$((S_NS + 20000000000))/1,1"
# Each process launches every 4 ms for 1 ms: pauses of 3.999 ms, across
# the segment boundary at 20 s; a process's last launch in the window has
# nothing after it (no exit, no other event) and ends no pause.
w=(--since "$(rfc $((S + 19)) | sed 's/Z$/.5Z/')" --until "$(rfc $((S + 20)) | sed 's/Z$/.5Z/')")
eq "report launch-gaps --param min_ms=3: 1001 launches of 4 processes, 997 pauses of 4.0 ms" \
	"$(qa --data "$A" "${w[@]}" report launch-gaps --param min_ms=3 --param limit=2000 | awk -F, '{ n++; p[$1]; g[$6]; if (substr($5, 8) - substr($4, 8) != 3999000 || $7 !~ /^cu/) bad++ } END { for (k in g) ms = ms " " k; print n, length(p) ms, bad + 0 }')" \
	"997 4 4.0 0"
eq "report launch-gaps --param min_ms=4: pauses of 3.999 ms are not listed" \
	"$(qa --data "$A" "${w[@]}" report launch-gaps --param min_ms=4 | wc -l)" 0
# 1000 launches of 4 processes in 1 s, then 1 s of their off-CPU
# intervals: after each process's last launch, a pause to the last thing
# seen of it, and what its launching thread did then.
LG="$T/lg"
synth --data "$LG" --events 1000 --interval 1000000 --start "$S_NS" \
	--table cuda_kernel --table offcpu
stk="python3;_PyEval_EvalFrameDefault;time_sleep;clock_nanosleep;entry_SYSCALL_64;__x64_sys_clock_nanosleep;hrtimer_nanosleep;do_nanosleep;schedule"
eq "report launch-gaps: after the last launch, to the last event seen; off-CPU by state, top stack" \
	"$(qa --data "$LG" --pid 41000 report launch-gaps)" \
	"41000,41000,python3,$((S_NS + 996001000)),$((S_NS + 1997000000)),1001.0,(last seen),167.0,\"S 143.0 ms, D 24.0 ms\",$stk,84.0,0,0,0,0,0,synthetic"
eq "report launch-gaps --until: the pause ends with the window, its off-CPU time clipped" \
	"$(qa --data "$LG" --pid 41000 --until "$(rfc $((S + 1)) | sed 's/Z$/.5Z/')" report launch-gaps)" \
	"41000,41000,python3,$((S_NS + 996001000)),$((S_NS + 1500000000)),504.0,(last seen),83.0,\"S 71.0 ms, D 12.0 ms\",$stk,42.0,0,0,0,0,0,synthetic"
eq "--pid filters" "$(q --data "$A" --pid 41017 sql 'SELECT count(*), min(pid), max(pid) FROM cuda_kernel')" "25000,41017,41017"
eq "integer filters pushed down agree" \
	"$(q --data "$A" sql "SELECT count(*) FROM cuda_kernel WHERE grid_x >= 64 AND block_x < 256")" \
	"$(q --data "$A" sql "SELECT count(*) FROM (SELECT grid_x g, block_x b FROM cuda_kernel) WHERE +g >= 64 AND +b < 256")"

# --- GROUP BY emitted grouped by the scan --------------------------------
# The scan groups rows itself (no SQLite sort); its answers must equal the
# sorted plan's (GROUP BY an expression, which it cannot consume), with a
# budget that fits everything, one that forces many batches, and one so
# small every group streams in a pass of its own.
G="$T/g"
synth --data "$G" --events 20000 --table cuda_kernel --table offcpu --host gamma --rotate-every 7000
for budget in "" 40000 100; do
	for col in kernel pid state waker_pid stack host comm; do
		tab=cuda_kernel; case $col in state|waker_pid|stack) tab=offcpu;; esac
		want=$("$GPUREC" --data "$G" --format csv sql "SELECT $col, count(*), sum(dur), min(ts), max(tid) FROM $tab GROUP BY +$col ORDER BY 1" | md5sum)
		got=$(GPUREC_GROUP_BUDGET=$budget "$GPUREC" --data "$G" --format csv sql "SELECT * FROM (SELECT $col, count(*), sum(dur), min(ts), max(tid) FROM $tab GROUP BY $col) ORDER BY 1" | md5sum)
		[ "$got" == "$want" ] || bad "grouped scan, budget ${budget:-default}, $col" "differs from the sorted plan"
	done
done
ok "grouped scan equals the sorted plan (7 columns x 3 budgets)"
# GROUP BY x ORDER BY x [DESC]: SQLite relies on the scan's order.
for dir in "" DESC; do
	for col in kernel pid waker_pid; do
		tab=cuda_kernel; [ $col = waker_pid ] && tab=offcpu
		want=$("$GPUREC" --data "$G" --format csv sql "SELECT $col, count(*) FROM $tab GROUP BY +$col ORDER BY 1 $dir" | md5sum)
		for budget in "" 100; do
			got=$(GPUREC_GROUP_BUDGET=$budget "$GPUREC" --data "$G" --format csv sql "SELECT $col, count(*) FROM $tab GROUP BY $col ORDER BY $col $dir" | md5sum)
			[ "$got" == "$want" ] || bad "GROUP BY $col ORDER BY $col $dir (budget ${budget:-default})" "not in order"
		done
	done
done
ok "GROUP BY x ORDER BY x comes out sorted, ascending and descending"
eq "grouped scan with a WHERE and a window" \
	"$(GPUREC_GROUP_BUDGET=100 q --data "$A" --since "$since" --until "$until" sql "SELECT count(*), sum(n) FROM (SELECT kernel, count(*) AS n FROM cuda_kernel WHERE pid = 41000 GROUP BY kernel)" | cut -d, -f2)" 2501
plan=$("$GPUREC" --data "$A" --format csv sql "EXPLAIN QUERY PLAN SELECT kernel, count(*) FROM cuda_kernel GROUP BY kernel" | tr -d '\r')
case $plan in *"USE TEMP B-TREE"*) bad "GROUP BY kernel is consumed" "SQLite still sorts: $plan";;
	*) ok "GROUP BY kernel needs no SQLite sort";; esac

# --- aggregates ---------------------------------------------------------
eq "median and percentile" \
	"$(q --data "$A" sql "SELECT median(x), percentile(x, 90), percentile(x, 0), percentile(x, 100) FROM (SELECT (ts - $S_NS) / 1000000 AS x FROM cuda_kernel)")" \
	"49999.5,89999.1,0.0,99999.0"

# --- output formats -----------------------------------------------------
sql="SELECT pid, count(*) AS n, min(kernel) AS k FROM cuda_kernel GROUP BY pid ORDER BY pid"
"$GPUREC" --data "$A" --format json sql "$sql" >"$T/out.json"
"$GPUREC" --data "$A" --format jsonl sql "$sql" >"$T/out.jsonl"
"$GPUREC" --data "$A" --format csv sql "$sql" >"$T/out.csv"
"$GPUREC" --data "$A" --format table sql "$sql" >"$T/out.txt"
got=$(python3 - "$T" <<'PY'
import csv, json, sys
t = sys.argv[1]
j = json.load(open(t + "/out.json"))
l = [json.loads(x) for x in open(t + "/out.jsonl")]
c = list(csv.DictReader(open(t + "/out.csv", newline="")))
assert j == l, "json != jsonl"
assert [str(r["n"]) for r in j] == [r["n"] for r in c], "csv != json"
print(len(j), sum(r["n"] for r in j), j[1]["pid"])
PY
)
eq "json, jsonl and csv agree" "$got" "4 100000 41017"
eq "table output aligned" "$(sed -n 2p "$T/out.txt" | cut -c1-12)" "-----  -----"
eq "table has header, rule and 4 rows" "$(wc -l <"$T/out.txt")" 6

# --- options, stdin, help -----------------------------------------------
eq "options after the command" "$("$GPUREC" sql 'SELECT count(*) FROM drops' --data "$A" --format csv | tr -d '\r' | tail -1)" 0
eq "SQL from stdin" "$(echo 'SELECT count(*) FROM cuda_kernel;' | "$GPUREC" --data "$A" --format csv sql - | tr -d '\r' | tail -1)" 100000
"$GPUREC" sql --help >"$T/help" 2>&1; eq "--help exits 0" "$?" 0
grep -q -- "--since" "$T/help" && ok "--help lists options" || bad "--help" "no --since"

# user errors: exit 1, one line naming the problem
user_error() { # NAME PATTERN ARGS…
	local name=$1 pat=$2; shift 2
	"$GPUREC" "$@" >/dev/null 2>"$T/err"; local rc=$?
	if [ $rc -ne 1 ]; then bad "$name" "exit $rc, want 1 ($(head -c 200 "$T/err"))"; return; fi
	if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$name" "want one line: $(cat "$T/err")"; return; fi
	grep -q -- "$pat" "$T/err" && ok "$name" || bad "$name" "message [$(cat "$T/err")] lacks [$pat]"
}
user_error "bad SQL" "SQL error: near \"SELEC\": syntax error" --data "$A" sql "SELEC 1"
user_error "no such table" "no such table: nope" --data "$A" sql "SELECT * FROM nope"
user_error "INSERT refused" "read-only" --data "$A" sql "INSERT INTO cuda_kernel(pid) VALUES (1)"
user_error "DELETE refused" "read-only" --data "$A" sql "DELETE FROM cuda_kernel"
user_error "CREATE refused" "read-only" --data "$A" sql "CREATE TABLE x(a)"
user_error "DROP refused" "read-only" --data "$A" sql "DROP TABLE cuda_kernel"
user_error "ATTACH refused" "ATTACH and DETACH are not allowed" --data "$A" sql "ATTACH '$T/x.db' AS x"
user_error "load_extension refused" "load_extension is not allowed" --data "$A" sql "SELECT load_extension('/tmp/x.so')"
user_error "PRAGMA assignment refused" "PRAGMA assignments are not allowed" --data "$A" sql "PRAGMA writable_schema=1"
user_error "bad --format" "bad --format 'xml'" --data "$A" --format xml sql "SELECT 1"
user_error "bad --since" "bad --since 'yesterday'" --data "$A" --since yesterday sql "SELECT 1"
user_error "bad --pid" "bad --pid" --data "$A" --pid x sql "SELECT 1"
user_error "unknown option" "unknown option --frobnicate" --data "$A" --frobnicate sql "SELECT 1"
user_error "unknown command" "unknown command 'frob'" --data "$A" frob
user_error "missing data dir" "cannot read data directory $T/none" --data "$T/none" sql "SELECT 1"
mkdir "$T/empty"
user_error "empty data dir" "no recording in $T/empty" --data "$T/empty" sql "SELECT 1"
user_error "schema of unknown table" "no table 'nope'" schema nope
user_error "verify with no recording" "no recording in $T/empty" --data "$T/empty" verify
user_error "option without its value" "option --data needs a value" sql "SELECT 1" --data
[ ! -e "$T/x.db" ] && ok "ATTACH created no file" || bad "ATTACH" "file created"

# --- tables and schema ----------------------------------------------------
eq "tables lists product.md's tables" \
	"$("$GPUREC" --format csv tables | tr -d '\r' | tail -n +2 | cut -d, -f1 | sort | tr '\n' ' ')" \
	"block_io cuda_api cuda_graph cuda_kernel cuda_mem cuda_memcpy cuda_memset cuda_sync drops file_io nccl offcpu process runq segments "
eq "schema cuda_kernel columns in order" \
	"$("$GPUREC" --format csv schema cuda_kernel | tr -d '\r' | tail -n +2 | cut -d, -f1 | tr '\n' ' ')" \
	"ts host pid tid comm dur api kernel kernel_mangled grid_x grid_y grid_z block_x block_y block_z shared_mem stream ret "
eq "schema types" "$("$GPUREC" --format csv schema cuda_memcpy | tr -d '\r' | grep -E '^(kind|bytes),' | cut -d, -f1,2 | tr '\n' ' ')" "kind,TEXT bytes,INTEGER "
eq "virtual table columns match the schema" \
	"$(q --data "$A" sql "SELECT group_concat(name, ' ') FROM pragma_table_info('offcpu')")" \
	"ts host pid tid comm dur state waker_pid waker_tid stack"

if bash docs/gen-schema.sh "$GPUREC" | cmp -s - docs/schema.md; then ok "docs/schema.md is current"
else bad "docs/schema.md" "stale: run make docs"; fi

# --- sealed segments never change ---------------------------------------
(cd "$A" && sha256sum -- *.seg MANIFEST) >"$T/before"
ls -la "$A" >"$T/ls-before"
for sql in 'SELECT count(*) FROM cuda_kernel' 'SELECT kernel, count(*) FROM cuda_kernel GROUP BY 1' \
	'SELECT * FROM segments' 'SELECT count(*) FROM cuda_api'; do
	"$GPUREC" --data "$A" sql "$sql" >/dev/null 2>&1
done
"$GPUREC" --data "$A" verify >/dev/null 2>&1
(cd "$A" && sha256sum -- *.seg MANIFEST) >"$T/after"
cmp -s "$T/before" "$T/after" && ok "sealed segments byte-identical after queries" ||
	bad "sealed segments changed" "$(diff "$T/before" "$T/after")"
eq "queries leave no -wal/-shm/-journal files" "$(ls "$A" | grep -c -- '-\(wal\|shm\|journal\)$')" 0
eq "sealed segments are read-only files" "$(stat -c %a "$A"/*.seg | sort -u | tr '\n' ' ')" "440 "

# --- two hosts ----------------------------------------------------------
B="$T/b"
synth --data "$B" --events 30000 --interval 1000000 --start "$S_NS" --host beta --table offcpu --table cuda_kernel
eq "two --data dirs merge with host" \
	"$(q --data "$A" --data "$B" sql "SELECT group_concat(h, ' ') FROM (SELECT host || ':' || count(*) AS h FROM cuda_kernel GROUP BY host ORDER BY host)")" \
	"alpha:100000 beta:30000"
eq "--host selects one" "$(q --data "$A" --data "$B" --host beta sql 'SELECT count(*) FROM cuda_kernel')" 30000
eq "WHERE host selects one" "$(q --data "$A" --data "$B" sql "SELECT count(*) FROM offcpu WHERE host = 'beta'")" 30000
eq "offcpu NULLs kept" "$(q --data "$B" sql "SELECT count(*) FROM offcpu WHERE waker_pid IS NULL")" 6000

# Regressions found in review: group ids per segment, stable rowids for
# OR plans, text that outlives a filter, --host with host = '…'.
eq "GROUP BY host over two directories" \
	"$(q --data "$A" --data "$B" sql "SELECT group_concat(h, ' ') FROM (SELECT host || ':' || count(*) AS h FROM cuda_kernel GROUP BY host)")" \
	"alpha:100000 beta:30000"
eq "OR of two ts ranges keeps every row" \
	"$(q --data "$A" sql "SELECT count(*) FROM cuda_kernel WHERE ts < $((S_NS + 5000000000)) OR ts > $((S_NS + 95000000000))")" 9999
eq "OR of ts and pid keeps every row" \
	"$(q --data "$A" sql "SELECT count(*) FROM cuda_kernel WHERE ts < $((S_NS + 5000000000)) OR pid = 41000")" 28750
eq "max(text) over an IN list (one scan per value)" \
	"$(q --data "$A" sql "SELECT max(kernel) = (SELECT max(kernel) FROM cuda_kernel WHERE +pid IN (41000, 41051)) FROM cuda_kernel WHERE pid IN (41000, 41051)")" 1
eq "--host and host = '…' both apply" \
	"$(q --data "$A" --data "$B" --host alpha sql "SELECT count(*) FROM cuda_kernel WHERE host = 'beta'")" 0
eq "host = '…' COLLATE NOCASE is SQLite's" \
	"$(q --data "$A" --data "$B" sql "SELECT count(*) FROM cuda_kernel WHERE host = 'BETA' COLLATE NOCASE")" 30000

# --- verify -------------------------------------------------------------
V="$T/v"
cp -a "$A" "$V"
"$GPUREC" --data "$V" verify >"$T/vout" 2>&1; eq "verify passes on an intact recording" "$?" 0
segs=("$V"/*.seg)
mid=${segs[2]}
# Flip one byte inside a block payload of the middle segment.
python3 - "$mid" <<'PY'
import os, sqlite3, sys, shutil
p = sys.argv[1]
db = sqlite3.connect("file:" + p + "?immutable=1", uri=True)
blob = db.execute("SELECT payload FROM blocks ORDER BY id LIMIT 1 OFFSET 3").fetchone()[0]
db.close()
data = bytearray(open(p, "rb").read())
off = data.find(blob[:200])
assert off > 0, "payload not found"
os.chmod(p, 0o640)
data[off + 100] ^= 0x01
open(p, "wb").write(data)
PY
"$GPUREC" --data "$V" verify >"$T/vout" 2>&1; rc=$?
eq "verify fails on a flipped payload byte" "$rc" 1
grep -q "FAIL $mid: block 4 of cuda_kernel fails its checksum" "$T/vout" && ok "verify names the block" ||
	bad "verify block message" "$(cat "$T/vout")"
grep -q "FAIL $mid: SHA-256 mismatch" "$T/vout" && ok "verify names the hash mismatch" ||
	bad "verify sha message" "$(cat "$T/vout")"
eq "the query still answers, skipping the bad block" \
	"$(q --data "$V" sql 'SELECT count(*) FROM cuda_kernel')" 99000
grep -q "warning: $mid: block 4 of cuda_kernel fails its checksum" "$T/stderr" && ok "query warns naming file and block" ||
	bad "query warning" "$(cat "$T/stderr")"
cp -a "$A"/. "$V"/
rm "$mid"
"$GPUREC" --data "$V" verify >"$T/vout" 2>&1; rc=$?
eq "verify fails on a removed middle segment" "$rc" 1
grep -q "FAIL $mid: missing" "$T/vout" && ok "verify names the missing segment" || bad "missing message" "$(cat "$T/vout")"
cp -a "$A"/. "$V"/
tmp="$T/swap"; mv "${segs[1]}" "$tmp"; mv "${segs[3]}" "${segs[1]}"; mv "$tmp" "${segs[3]}"
"$GPUREC" --data "$V" verify >"$T/vout" 2>&1; rc=$?
eq "verify fails on swapped segments" "$rc" 1
grep -q "FAIL ${segs[1]}: SHA-256 mismatch" "$T/vout" && grep -q "FAIL ${segs[3]}: hash chain broken" "$T/vout" &&
	ok "verify names both swapped segments" || bad "swap message" "$(cat "$T/vout")"

# --- damaged segments: warn, answer from the rest ------------------------
D="$T/d"
cp -a "$A" "$D"
segs=("$D"/*.seg)
chmod 640 "${segs[1]}"; truncate -s 8192 "${segs[1]}"
printf 'this is not a database at all, just text padding to look big enough..' >"$D/20261118T094640.000000000Z.seg"
got=$(q --data "$D" sql 'SELECT count(*) FROM cuda_kernel')
eq "truncated and garbage segments skipped, rest answered" "$got" 80000
grep -q "warning: .*${segs[1]}" "$T/stderr" && grep -q "warning: .*20261118T094640.000000000Z.seg" "$T/stderr" &&
	ok "warnings name each damaged file" || bad "damage warnings" "$(cat "$T/stderr")"
eq "one warning line per damaged file" "$(grep -c warning "$T/stderr")" 2

# --- thousands of segments, no ATTACH limit -----------------------------
M="$T/many"
synth --data "$M" --events 2400 --interval 1000 --start "$S_NS" --rotate-every 2 --flush-every 2
eq "1200 segments written" "$(ls "$M" | grep -c '\.seg$')" 1200
eq "one query spans 1200 segments" "$(q --data "$M" sql 'SELECT count(*), count(DISTINCT ts) FROM cuda_kernel')" "2400,2400"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
