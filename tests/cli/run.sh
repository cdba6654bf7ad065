#!/usr/bin/env bash
# run.sh - end-to-end tests of `gpurec` over recordings written by
# gpurec-synth through the store.  Every check compares exact values.
# Env: GPUREC, SYNTH (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
SYNTH=${SYNTH:-build/gpurec-synth}
T=$(mktemp -d /tmp/gpurec-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
# eq NAME GOT WANT
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
# q ARGS…: the first data row of csv output
q() { "$GPUREC" --format csv "$@" 2>"$T/stderr" | tr -d '\r' | sed -n 2p; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }

S=1795000000   # 2026-11-18T11:06:40Z
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
	"$(qa --data "$A" report recording | grep -v '^run,' | tr '\n' ' ')" \
	"segments,alpha,5,\"5 sealed, $(q --data "$A" sql 'SELECT sum(bytes) FROM segments') bytes\" span,alpha,99.999,2026-11-18T11:06:40.000000000Z .. 2026-11-18T11:08:19.999000000Z events,cuda_kernel,100000, "
eq "report recording --param gap_s=0: the 1 ms between each two segments" \
	"$(qa --data "$A" report recording --param gap_s=0 | grep -c '^gap,[^,]*,0.001,')" 4

# runs: each recorder run from the manifest's start and stop lines.  The
# synthetic writer ran once on $A.
eq "runs: one run, stopped, with its events" \
	"$(q --data "$A" sql "SELECT run, ended, events, gap_ns IS NULL, host FROM runs")" "1,stopped,100000,1,alpha"
# A run killed with -9, then one that stops, then one still running.
R="$T/runs"
"$SYNTH" --data "$R" --events 100000000 --rate 20000 --flush-every 200 --host beta >/dev/null 2>&1 &
rp=$!
sleep 0.8
kill -9 "$rp"; wait "$rp" 2>/dev/null
"$SYNTH" --data "$R" --events 300 --host beta >/dev/null 2>&1
"$SYNTH" --data "$R" --events 100000000 --rate 20000 --flush-every 200 --host beta >/dev/null 2>&1 &
rp=$!
for _ in $(seq 100); do [ "$(grep -c '^start ' "$R/MANIFEST")" = 3 ] && break; sleep 0.05; done
eq "runs: killed, stopped, running; pids; each gap from the run before" \
	"$(q --data "$R" sql "SELECT group_concat(run || ':' || ended || ':' || coalesce(events, '-') || ':' || (pid > 0) || ':' || coalesce(gap_ns > 0, '-') || ':' || host, ' ') FROM runs")" \
	"1:crashed:-:1:-:beta 2:stopped:300:1:1:beta 3:running:-:1:1:beta"
eq "report recording: an unrecorded time per restart or crash, with its cause" \
	"$(qa --data "$R" report recording | sed -n 's/^unrecorded,[^,]*,[^,]*,"\?\([a-z]*\):.*/\1/p' | tr '\n' ' ')" \
	"crash restart "
kill "$rp"; wait "$rp" 2>/dev/null

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
	"41000,41000,python3,$((S_NS + 996001000)),$((S_NS + 1997000000)),1001.0,(last seen),167.0,\"S 143.0 ms, D 24.0 ms\",84.0,0,0,0,0,0,synthetic,$stk"
eq "report launch-gaps --until: the pause ends with the window, its off-CPU time clipped" \
	"$(qa --data "$LG" --pid 41000 --until "$(rfc $((S + 1)) | sed 's/Z$/.5Z/')" report launch-gaps)" \
	"41000,41000,python3,$((S_NS + 996001000)),$((S_NS + 1500000000)),504.0,(last seen),83.0,\"S 71.0 ms, D 12.0 ms\",42.0,0,0,0,0,0,synthetic,$stk"
eq "--pid filters" "$(q --data "$A" --pid 41017 sql 'SELECT count(*), min(pid), max(pid) FROM cuda_kernel')" "25000,41017,41017"
eq "integer filters pushed down agree" \
	"$(q --data "$A" sql "SELECT count(*) FROM cuda_kernel WHERE grid_x >= 64 AND block_x < 256")" \
	"$(q --data "$A" sql "SELECT count(*) FROM (SELECT grid_x g, block_x b FROM cuda_kernel) WHERE +g >= 64 AND +b < 256")"

# A comparison on an integer column is evaluated by the scan alone (SQLite
# does not check it again), whatever the operand: each must equal SQLite's
# own evaluation of the same comparison (CAST(col AS INTEGER): the column's
# affinity, not pushed down), NULLs (waker_pid) included, through the plain
# scan and the grouped one (by an integer, a text and the host column).
OM="$T/om"
synth --data "$OM" --events 20000 --table cuda_kernel --table offcpu --host gamma --rotate-every 7000 --start "$S_NS"
om_bad=0 om_n=0
# Each operand value is one the column holds (ts: 30 ms into its 67).
for cv in "offcpu waker_pid 41017" "offcpu pid 41017" "cuda_kernel ts $((S_NS + 30000000))" "cuda_kernel grid_x 8"; do
	read -r tab col v <<<"$cv"
	text=kernel; [ "$tab" = offcpu ] && text=state
	for op in "=" "!=" "<" "<=" ">" ">="; do
		for sel in "count(*), sum(dur), min(tid)" "pid, count(*), sum(dur)" "$text, count(*), sum(dur), max(comm)" "host, count(*), min(ts)"; do
			grp=""; [ "${sel%%,*}" != "count(*)" ] && grp=" GROUP BY ${sel%%,*}"
			got="" want=""
			for x in "$v" "$v.0" "$v.5" "-$v.5" "'$v'" "' $v.5'" "'x$v'" "x'00'" "NULL" "-1" "9223372036854775807" "1e19" "-1e19" "(SELECT $v)"; do
				[ -n "$got" ] && got+=" UNION ALL " && want+=" UNION ALL "
				got+="SELECT * FROM (SELECT $om_n, $sel FROM $tab WHERE $col $op $x$grp)"
				want+="SELECT * FROM (SELECT $om_n, $sel FROM $tab WHERE CAST($col AS INTEGER) $op $x$grp)"
				om_n=$((om_n + 1))
			done
			got=$("$GPUREC" --data "$OM" --format csv sql "$got" 2>&1)
			want=$("$GPUREC" --data "$OM" --format csv sql "$want" 2>&1)
			[ "$got" == "$want" ] || { om_bad=$((om_bad + 1)); echo "  $tab: $col $op ($sel): [$got] want [$want]"; }
		done
	done
done
eq "comparisons the scan alone evaluates equal SQLite's ($om_n queries)" "$om_bad" 0
eq "a bound operand (a join's): the same rows" \
	"$(q --data "$OM" sql "SELECT count(*), sum(o.dur) FROM (SELECT 41017 AS p UNION ALL SELECT '41034' UNION ALL SELECT 41051.5) v JOIN offcpu o ON o.pid = v.p")" \
	"$(q --data "$OM" sql "SELECT count(*), sum(o.dur) FROM (SELECT 41017 AS p UNION ALL SELECT '41034' UNION ALL SELECT 41051.5) v JOIN offcpu o ON CAST(o.pid AS INTEGER) = v.p")"

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
# Rows that fit the budget are grouped in one pass over the blocks; past
# it, a count pass and batch passes read them again.
blocks() { GPUREC_DEBUG_STATS=1 "$GPUREC" --data "$A" sql "$1" 2>&1 >/dev/null | sed -n 's/.*blocks_read=//p'; }
eq "grouped scan: one pass within the budget, more past it" \
	"$(blocks 'SELECT kernel, count(*), sum(dur) FROM cuda_kernel GROUP BY kernel') $(GPUREC_GROUP_BUDGET=100 blocks 'SELECT kernel, count(*), sum(dur) FROM cuda_kernel GROUP BY kernel' | awk -v n="$(blocks 'SELECT sum(dur) FROM cuda_kernel')" '{ print ($1 >= 3 * n) }')" \
	"$(blocks 'SELECT sum(dur) FROM cuda_kernel') 1"

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
user_error "bad --since" "bad --since 'the day before'" --data "$A" --since 'the day before' sql "SELECT 1"
user_error "bad --pid" "bad --pid" --data "$A" --pid x sql "SELECT 1"
user_error "unknown option" "unknown option --frobnicate" --data "$A" --frobnicate sql "SELECT 1"
user_error "unknown command" "unknown command 'frob'" --data "$A" frob
user_error "missing data dir" "cannot read data directory $T/none" --data "$T/none" sql "SELECT 1"
mkdir "$T/empty"
user_error "empty data dir" "no recording in $T/empty" --data "$T/empty" sql "SELECT 1"
user_error "schema of unknown table" "no table 'nope'" schema nope
user_error "verify with no recording" "no recording in $T/empty" --data "$T/empty" verify
# A recorder stopped before its first event: start and stop lines, no
# segment; verify checks that chain and passes.
"$SYNTH" --data "$T/noevents" --events 0 >/dev/null 2>&1
"$GPUREC" --data "$T/noevents" verify >"$T/noevents.out" 2>&1
eq "verify: a recording of no event (start and stop lines only)" \
	"$?: $(tail -1 "$T/noevents.out")" \
	"0: verify: no segment recorded; the manifest is intact"
user_error "option without its value" "option --data needs a value" sql "SELECT 1" --data
[ ! -e "$T/x.db" ] && ok "ATTACH created no file" || bad "ATTACH" "file created"

# --- tables and schema ----------------------------------------------------
eq "tables lists every table" \
	"$("$GPUREC" --format csv tables | tr -d '\r' | tail -n +2 | cut -d, -f1 | sort | tr '\n' ' ')" \
	"block_io cuda_api cuda_graph cuda_graph_exec cuda_graph_kernel cuda_kernel cuda_mem cuda_memcpy cuda_memset cuda_sync drops file_io gpu gpu_event gpu_process nccl offcpu process runq runs segments sum_api sum_io sum_kernel sum_launch_slots sum_memcpy sum_nccl sum_offcpu sum_runq sum_sync "
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
eq "verify --format jsonl on an intact recording" "$("$GPUREC" --data "$V" --format jsonl verify)" \
	'{"ok":true,"dirs_checked":1,"segments_checked":5,"blocks_checked":100,"problems":[],"notes":[{"path":"'"$V"'/MANIFEST","text":"not sealed: anyone with write access could rewrite the chain"}],"manifest_lines":7,"sealed_lines":0}'
eq "verify --format json -v lists each segment" \
	"$("$GPUREC" --data "$V" --format json -v verify | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["ok"], d["segments_checked"], [(s["blocks"], s["sealed"], s["ok"]) for s in d["segments"]] == [(20, True, True)] * 5)')" \
	"True 5 True"
segs=("$V"/*.seg)
mid=${segs[2]}
# Flip one byte inside a block payload of the middle segment.
python3 "$(dirname "$0")/flip_block.py" "$mid" 3 ||
	{ bad "flip a block" "flip_block.py failed"; echo "$pass passed, $fail failed, $skipped skipped"; exit 1; }
"$GPUREC" --data "$V" verify >"$T/vout" 2>&1; rc=$?
eq "verify fails on a flipped payload byte" "$rc" 1
grep -q "FAIL $mid: block 4 of cuda_kernel fails its checksum" "$T/vout" && ok "verify names the block" ||
	bad "verify block message" "$(cat "$T/vout")"
grep -q "FAIL $mid: SHA-256 mismatch" "$T/vout" && ok "verify names the hash mismatch" ||
	bad "verify sha message" "$(cat "$T/vout")"
"$GPUREC" --data "$V" --format json verify >"$T/vjson" 2>"$T/verr"; rc=$?
eq "verify --format json exits 1 on a flipped byte, saying so on stderr" "$rc $(cat "$T/verr")" \
	"1 gpurec: verify: 2 problems found"
eq "verify --format json names the block and the hash mismatch" \
	"$(python3 - "$T/vjson" "$mid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mid = sys.argv[2]
p = d["problems"]
assert list(d) == ["ok", "dirs_checked", "segments_checked", "blocks_checked", "problems", "notes", "manifest_lines", "sealed_lines"], list(d)
assert all(x["path"] == mid for x in p), p
print(d["ok"], d["segments_checked"], d["blocks_checked"], len(p), p[0]["reason"], "|", p[1]["reason"])
PY
)" "False 5 100 2 block 4 of cuda_kernel fails its checksum | SHA-256 mismatch: manifest $(grep -o "seal ${mid##*/} sha256=[0-9a-f]*" "$V/MANIFEST" | sed 's/.*sha256=//' | cut -c1-16)…, file $(sha256sum "$mid" | cut -c1-16)…"
eq "the query still answers, skipping the bad block" \
	"$(q --data "$V" sql 'SELECT count(*) FROM cuda_kernel')" 99000
grep -q "warning: $mid: block 4 of cuda_kernel fails its checksum" "$T/stderr" && ok "query warns naming file and block" ||
	bad "query warning" "$(cat "$T/stderr")"
cp -a "$A"/. "$V"/
rm "$mid"
"$GPUREC" --data "$V" verify >"$T/vout" 2>&1; rc=$?
eq "verify fails on a removed middle segment" "$rc" 1
grep -q "FAIL $mid: missing" "$T/vout" && ok "verify names the missing segment" || bad "missing message" "$(cat "$T/vout")"
got=$("$GPUREC" --data "$V" --format jsonl verify 2>/dev/null); rc=$?
eq "verify --format jsonl on a removed segment: exact document, exit 1" "$rc $got" \
	"1 {\"ok\":false,\"dirs_checked\":1,\"segments_checked\":4,\"blocks_checked\":80,\"problems\":[{\"path\":\"$mid\",\"reason\":\"missing: sealed in the manifest, not deleted by retention, not on disk\"}],\"notes\":[{\"path\":\"$V/MANIFEST\",\"text\":\"not sealed: anyone with write access could rewrite the chain\"}],\"manifest_lines\":7,\"sealed_lines\":0}"
eq "status counts the missing segment" \
	"$("$GPUREC" --data "$V" --format json status | python3 -c '
import json, sys
d = json.load(sys.stdin)["dirs"][0]
print(d["segments"]["total"], d["segments"]["missing"], d["events"]["total"], [p["reason"][:8] for p in d["problems"]])')" \
	"4 1 80000 ['missing:']"
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
eq "status: damaged segments unreadable, named, the rest counted" \
	"$("$GPUREC" --data "$D" --format json status | python3 -c '
import json, sys
d = json.load(sys.stdin)["dirs"][0]
print(d["segments"], d["events"]["total"], " ".join(sorted(p["path"] for p in d["problems"])))')" \
	"{'total': 6, 'sealed': 5, 'open': 1, 'unreadable': 2, 'deleted': 0, 'missing': 0} 80000 $D/20261118T094640.000000000Z.seg ${segs[1]}"

# --- status -------------------------------------------------------------
# Every count status gives must be what SQL answers over the same files.
# status_vs_sql DIR…: "ok" or the first difference, then the totals.
status_vs_sql() {
	python3 - "$GPUREC" "$@" <<'PY'
import json, subprocess, sys
gpurec, dirs = sys.argv[1], sys.argv[2:]
def sql(d, q):
    out = subprocess.run([gpurec, "--data", d, "--format", "json", "sql", q],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)
args = [gpurec] + [a for d in dirs for a in ("--data", d)] + ["--format", "json", "status"]
doc = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
tables = [r["name"] for r in sql(dirs[0], "SELECT name FROM pragma_table_list WHERE schema = 'main' AND name NOT IN ('segments', 'runs') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'sum_%' ORDER BY name")]
assert list(doc) == ["now_ns", "dirs", "total"], list(doc)
problems = []
for d, s in zip(dirs, doc["dirs"]):
    assert s["path"] == d
    assert list(s) == ["path", "hosts", "recorder", "segments", "span", "disk", "events", "drops", "problems"], list(s)
    seg = sql(d, "SELECT count(*) AS n, sum(sealed) AS sealed, sum(events) AS events, sum(bytes) AS bytes, min(start_ts) AS lo, max(end_ts) AS hi, group_concat(DISTINCT host) AS hosts FROM segments")[0]
    want = {"segments": [seg["n"], seg["sealed"], seg["n"] - seg["sealed"]],
            "events": seg["events"], "segment_bytes": seg["bytes"],
            "span": [seg["lo"], seg["hi"]], "hosts": seg["hosts"].split(",")}
    got = {"segments": [s["segments"]["total"], s["segments"]["sealed"], s["segments"]["open"]],
           "events": s["events"]["total"], "segment_bytes": s["disk"]["segment_bytes"],
           "span": [s["span"]["first_ns"], s["span"]["last_ns"]], "hosts": s["hosts"]}
    for t in sorted(set(tables) | set(s["events"]["tables"])):
        want[t] = sql(d, f"SELECT count(*) AS n FROM {t}")[0]["n"]
        got[t] = s["events"]["tables"][t]["events"]
    want["drops"] = {r["source"]: r["n"] for r in sql(d, "SELECT source, sum(count) AS n FROM drops GROUP BY source ORDER BY source")}
    got["drops"] = s["drops"]["sources"]
    for k in want:
        if want[k] != got[k]:
            problems.append(f"{d} {k}: status {got[k]} sql {want[k]}")
    if s["disk"]["dir_bytes"] < s["disk"]["segment_bytes"]:
        problems.append(f"{d} dir_bytes below segment_bytes")
t = doc["total"]
print(problems[0] if problems else "ok", t["dirs"], t["segments"], t["events"], t["blocks"], t["drops"], t["problems"])
PY
}
eq "status --format json equals SQL: one directory" "$(status_vs_sql "$A")" "ok 1 5 100000 100 0 0"
eq "status --format json equals SQL: two hosts" "$(status_vs_sql "$A" "$B")" "ok 2 6 160000 102 0 0"

# Every stored table, drops with their sources, three segments.
ST="$T/st"
synth --data "$ST" --events 6000 --interval 1000000 --start "$S_NS" --host gamma \
	--table cuda_kernel --table offcpu --table block_io --table drops --rotate-every 2000
eq "status equals SQL: four tables, drops" "$(status_vs_sql "$ST")" "ok 1 3 24000 12 15000 0"
eq "status: drops by source (source i%3, count 1+i%4)" \
	"$("$GPUREC" --data "$ST" --format jsonl status | python3 -c 'import json,sys; print(json.load(sys.stdin)["dirs"][0]["drops"])')" \
	"{'total': 15000, 'sources': {'cuda:depth': 5000, 'cuda:ringbuf': 5000, 'cuda:store': 5000}}"

# Retention: deleted segments are counted, not missing.
R="$T/ret"
synth --data "$R" --events 40000 --interval 1000000 --start "$S_NS" --rotate-every 4000 --max-disk 1M
eq "status equals SQL after retention" "$(status_vs_sql "$R" | cut -d' ' -f1)" ok
eq "status: segments deleted by retention as the manifest records" \
	"$("$GPUREC" --data "$R" --format json status | python3 -c 'import json,sys; s = json.load(sys.stdin)["dirs"][0]["segments"]; print(s["deleted"], s["missing"], s["total"])')" \
	"$(grep -c '^delete ' "$R/MANIFEST") 0 $(ls "$R" | grep -c '\.seg$')"
[ "$(grep -c '^delete ' "$R/MANIFEST")" -gt 0 ] && ok "retention deleted some segments" || bad "retention" "nothing deleted"

# The text form: exact lines where they do not depend on the machine.
"$GPUREC" --data "$ST" status >"$T/st.txt"
eq "status text: data, host, recorder, segments, span" "$(sed -n 1,5p "$T/st.txt")" \
"data       $ST
host       gamma
recorder   none: no status.json (no gpurecd has run here)
segments   3: 3 sealed, 0 open
span       2026-11-18T11:06:40.000Z .. 2026-11-18T11:06:57.999Z (18.0 s)"
eq "status text: events per table, as SQL counts them" \
	"$(grep -E '^  [a-z_:]+ ' "$T/st.txt" | awk '{ print $1, $2, $3 }' | sed 's/ *$//' | tr '\n' ' ')" \
	"table events blocks cuda_kernel 6000 3 cuda_api 6000 3 offcpu 6000 3 block_io 6000 3 drops 6000 3 cuda:depth 5000 cuda:ringbuf 5000 cuda:store 5000 "
eq "status text: drops" "$(grep '^drops' "$T/st.txt")" "drops      15000 events lost"
eq "status text: two directories end with a total" "$("$GPUREC" --data "$A" --data "$ST" status | tail -1 | cut -d, -f1-3)" \
	"total      2 directories: 8 segments, 124000 events, 15000 dropped"

# The recorder: status.json as gpurecd writes it, and who holds .lock.
RD="$T/rd"
cp -a "$ST" "$RD"
status_json() { # STATE PID UPDATED_AGO_S
	local now; now=$(date +%s%N)
	printf '{"state":"%s","pid":%s,"version":"0.1.0","started_ns":%s,"updated_ns":%s,"segment":"%s/x.seg","events":7,"blocks":1,"segments_sealed":3,"segments_deleted":0,"disk_bytes":1,"cuda":{"enabled":true,"records":1,"rows":1,"files":2,"probes":3,"named_launches":4,"unnamed_launches":0,"handle_names":0},"host":{"processes":true,"sched":false,"io":true}}\n' \
		"$1" "$2" $((now - 3600000000000)) $((now - $3 * 1000000000)) "$RD" >"$RD/status.json"
}
rec() { "$GPUREC" --data "$RD" --format json status | python3 -c '
import json, sys
r = json.load(sys.stdin)["dirs"][0]["recorder"]
print(r["state"], r["running"], r["pid"], r["families"] and ",".join(k for k, v in r["families"].items() if v))'; }
status_json recording 999999 1
eq "recorder: status.json says recording, nobody holds the lock: stale" "$(rec)" "stale False 999999 cuda,processes,io"
grep -q "it crashed or was killed, or this is a copy" <("$GPUREC" --data "$RD" status) && ok "stale explained in the text" ||
	bad "stale text" "$("$GPUREC" --data "$RD" status | sed -n 3,5p)"
# A shell that takes the lock and becomes sleep: killing it frees the lock.
(exec 9<"$RD/.lock" && flock 9 && exec sleep 60) & lockpid=$!
ino=$(stat -c %i "$RD/.lock")
for _ in $(seq 50); do grep -q ":$ino " /proc/locks && break; sleep 0.1; done
eq "recorder: the lock held, updated 1 s ago: recording" "$(rec)" "recording True 999999 cuda,processes,io"
status_json recording 999999 120
eq "recorder: the lock held, no update for 2 minutes: stalled" "$(rec)" "stalled True 999999 cuda,processes,io"
status_json stopped 999999 5
eq "recorder: the lock held, status.json of a stopped run: starting" "$(rec)" "starting True 999999 cuda,processes,io"
kill $lockpid; wait $lockpid 2>/dev/null
eq "recorder: stopped" "$(rec)" "stopped False 999999 cuda,processes,io"
# No lock seen (another mount namespace, say), but the pid is a live gpurecd.
cp "$(command -v sleep)" "$T/gpurecd"
"$T/gpurecd" 60 & fakepid=$!
status_json recording $fakepid 1
eq "recorder: pid is a live gpurecd: recording" "$(rec)" "recording True $fakepid cuda,processes,io"
kill $fakepid; wait $fakepid 2>/dev/null
eq "recorder: that pid gone: stale" "$(rec)" "stale False $fakepid cuda,processes,io"
eq "recorder: status_file is status.json, whole" \
	"$("$GPUREC" --data "$RD" --format json status | python3 -c '
import json, sys
r = json.load(sys.stdin)["dirs"][0]["recorder"]
print(r["status_file"] == json.load(open(sys.argv[1])), r["updated_age_s"] >= 1, r["segment"] == sys.argv[2] + "/x.seg", r["version"])' "$RD/status.json" "$RD")" \
	"True True True 0.1.0"
echo 'not json {' >"$RD/status.json"
eq "recorder: status.json that does not parse: unreadable" "$(rec)" "unreadable False None None"
rm "$RD/status.json"
eq "recorder: no status.json: none" "$(rec)" "none False None None"
eq "status --format jsonl is one line" "$("$GPUREC" --data "$RD" --format jsonl status | wc -l)" 1

user_error "status with no recording" "no recording in $T/empty" --data "$T/empty" status
user_error "status of a missing directory" "cannot read data directory $T/none" --data "$T/none" status
user_error "status takes no arguments" "status takes no arguments" --data "$A" status foo
user_error "status refuses a window" "do not apply" --data "$A" --since 1h status

# --- summaries: the same answers as the raw events ----------------------
# Five minutes of jittered launches from 4 processes with a copy after
# every 10th, flushed often (minute rows rewritten by later flushes) and
# sealed into 4 segments that rotate mid-minute.
U="$T/sum"
synth --data "$U" --events 150000 --rate 500 --memcpy-every 10 \
	--start "$S_NS" --flush-every 5000 --rotate-every 40000 --seed 7
eq "summary recording: launches and copies" \
	"$(q --data "$U" sql 'SELECT (SELECT count(*) FROM cuda_kernel), (SELECT count(*) FROM cuda_memcpy), (SELECT count(*) FROM segments)')" \
	"150000,15000,4"
same() { # same NAME ARGS…: the report from summaries equals --raw's
	local a b
	a=$("$GPUREC" --format csv "${@:2}" 2>&1)
	b=$("$GPUREC" --format csv "${@:2}" --raw 2>&1)
	if [ "$a" == "$b" ] && [ "$(echo "$a" | wc -l)" -gt 1 ]; then ok "$1"
	else bad "$1" "summaries [$a] raw [$b]"; fi
}
cut1=$(date -u -d "@$((S + 37))" +%Y-%m-%dT%H:%M:%S).25Z
cut2=$(date -u -d "@$((S + 201))" +%Y-%m-%dT%H:%M:%S).5Z
in1=$(date -u -d "@$((S + 130))" +%Y-%m-%dT%H:%M:%S).1Z
in2=$(date -u -d "@$((S + 131))" +%Y-%m-%dT%H:%M:%S).3Z
for r in top-kernels cuda-api-sum memcpy-sum; do
	same "(summary) $r equals --raw over the whole recording" --data "$U" report "$r"
	same "(summary) $r equals --raw over a window cutting two minutes" \
		--data "$U" --since "$cut1" --until "$cut2" report "$r"
	same "(summary) $r equals --raw inside one minute" \
		--data "$U" --since "$in1" --until "$in2" report "$r"
	same "(summary) $r equals --raw for one process in a window" \
		--data "$U" --pid 41017 --since "$cut1" --until "$cut2" report "$r"
done
eq "(summary) sum_api totals equal cuda_api's" \
	"$(q --data "$U" sql 'SELECT sum(calls), sum(dur_total), min(dur_min), max(dur_max), sum(errors) FROM sum_api')" \
	"$(q --data "$U" sql 'SELECT count(*), sum(dur), min(dur), max(dur), sum(ret != 0) FROM cuda_api')"
eq "(summary) per-minute rows equal raw events by minute" \
	"$(qa --data "$U" sql 'SELECT minute, pid, sum(copies), sum(bytes), max(dur_max) FROM sum_memcpy GROUP BY 1, 2 ORDER BY 1, 2' | md5sum)" \
	"$(qa --data "$U" sql 'SELECT ts - ts % 60000000000, pid, count(*), sum(bytes), max(dur) FROM cuda_memcpy GROUP BY 1, 2 ORDER BY 1, 2' | md5sum)"
eq "(summary) a ts range on sum_kernel equals the raw count" \
	"$(q --data "$U" sql "SELECT sum(launches), min(ts), max(ts_last) FROM sum_kernel WHERE ts >= $((S_NS + 61500000000)) AND ts < $((S_NS + 190000000000))")" \
	"$(q --data "$U" sql "SELECT count(*), min(ts), max(ts) FROM cuda_kernel WHERE ts >= $((S_NS + 61500000000)) AND ts < $((S_NS + 190000000000))")"
got=$(GPUREC_DEBUG_STATS=1 "$GPUREC" --data "$U" --format csv report top-kernels 2>&1 >/dev/null)
eq "(summary) the whole recording decodes no block" "${got##*blocks_read=}" 0
got=$(qa --data "$U" sql 'SELECT api, hist_quantile(dur, 50), median(dur), hist_quantile(dur, 99), percentile(dur, 99) FROM cuda_api GROUP BY api' |
	awk -F, '{ for (i = 2; i <= 4; i += 2) { e = ($i - $(i+1)) / $(i+1); if (e < 0) e = -e; if (e > 0.01) bad++ } n++ } END { print n, bad + 0 }')
eq "(summary) hist_quantile within 1 % of the exact median and p99" "$got" "4 0"
eq "(summary) hist_quantile of one repeated value is that value" \
	"$(q --data "$A" sql 'SELECT hist_quantile(dur, 50), hist_quantile(hist, 99) FROM (SELECT dur, NULL AS hist FROM cuda_kernel UNION ALL SELECT NULL, hist FROM sum_api)')" "1000,1000"
# A segment without summaries (made by another tool): raw events stand in.
N="$T/nosum"
cp -a "$U" "$N"
first=$(ls "$N"/*.seg | head -1)
chmod 640 "$first"
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("DROP TABLE summary"); db.commit()' "$first"
same "(summary) a segment with no summary table answers from its events" \
	--data "$N" --since "$cut1" report cuda-api-sum
eq "(summary) ... and sums stay exact" \
	"$(q --data "$N" sql 'SELECT sum(launches) FROM sum_kernel')" 150000
user_error "hist_quantile rejects p out of range" "SQL error: hist_quantile: p must be 0..100" \
	--data "$U" sql 'SELECT hist_quantile(dur, 101) FROM cuda_kernel'

# --- NCCL: a straggler across two hosts ---------------------------------
# One 8-rank job (bench/synth_nccl.h has the model), written as two hosts
# would record it: alpha has ranks 0-3, beta 4-7.  Rank 6 enters every
# collective exactly 290 ms after the first rank; no jitter, so every
# number below follows by arithmetic: per rank 1 CommInitRank, 1 Broadcast
# (seq 0), 20 iterations of 10 calls (6 collectives, seq 1..120, and a
# group of Send/Recv), 1 CommDestroy; an iteration takes 1000 ms plus
# 6 x 290 ms waiting for rank 6.
job() { # job DIR HOST LO-HI [options]
	local d=$1 h=$2 r=$3; shift 3
	synth --data "$d" --table nccl --host "$h" --start "$S_NS" --nccl-ranks 8 \
		--nccl-host-ranks "$r" --nccl-iters 20 "$@"
}
late=(--nccl-late-rank 6 --nccl-late-ms 290)
job "$T/na" alpha 0-3 "${late[@]}" --nccl-jitter-us 0
job "$T/nb" beta 4-7 "${late[@]}" --nccl-jitter-us 0
NN=(--data "$T/na" --data "$T/nb")
eq "(nccl) rows per host: 4 ranks x (3 + 20 x 10)" \
	"$(q "${NN[@]}" sql "SELECT group_concat(h, ' ') FROM (SELECT host || ':' || count(*) AS h FROM nccl GROUP BY host ORDER BY host)")" \
	"alpha:812 beta:812"
cid=$(q "${NN[@]}" sql "SELECT min(comm_id) FROM nccl")
eq "(nccl) both hosts' runs agree on the communicator and its collectives" \
	"$(q "${NN[@]}" sql "SELECT count(DISTINCT comm_id), count(DISTINCT seq), count(DISTINCT comm_id || ' ' || seq || ' ' || op || ' ' || bytes), count(*) FILTER (WHERE seq IS NOT NULL) FROM nccl")" \
	"1,121,121,968"
# Per rank 203 rows: 40 group calls have no communicator, 42 calls no
# bytes, all but 100 no redop, 41 a peer (the broadcast root, Send, Recv).
eq "(nccl) NULLs where a call has no such argument" \
	"$(q "${NN[@]}" sql "SELECT sum(comm_id IS NULL), sum(bytes IS NULL), sum(redop IS NULL), sum(peer IS NOT NULL), sum(seq IS NULL) FROM nccl")" \
	"320,336,824,328,656"

eq "(nccl) nccl-skew: beta rank 6 first, exactly 290 ms late, last every time" \
	"$(qa "${NN[@]}" report nccl-skew | tr '\n' ' ')" \
	"beta,6,48196,$cid,8/8,121,121,290.0,290.0,290.0,290.0 alpha,0,48100,$cid,8/8,121,0,0.0,0.0,0.0,0.0 alpha,1,48116,$cid,8/8,121,0,0.0,0.0,0.0,0.0 alpha,2,48132,$cid,8/8,121,0,0.0,0.0,0.0,0.0 alpha,3,48148,$cid,8/8,121,0,0.0,0.0,0.0,0.0 beta,4,48164,$cid,8/8,121,0,0.0,0.0,0.0,0.0 beta,5,48180,$cid,8/8,121,0,0.0,0.0,0.0,0.0 beta,7,48212,$cid,8/8,121,0,0.0,0.0,0.0,0.0 "
eq "(nccl) nccl-skew --param limit=1" "$(qa "${NN[@]}" report nccl-skew --param limit=1 | cut -d, -f1,2,8)" "beta,6,290.0"
eq "(nccl) nccl-arrivals: every collective spread 290 ms, beta rank 6 last by 290 ms" \
	"$(qa "${NN[@]}" report nccl-arrivals --param limit=1000 | cut -d, -f5,7- | sort | uniq -c | sed 's/^ *//')" \
	"121 8/8,290.0,beta,6,48196,290.0"
eq "(nccl) nccl-arrivals: seq 0 is the broadcast, first at init + 300 ms" \
	"$(qa "${NN[@]}" report nccl-arrivals --param limit=1 | cut -d, -f2-4)" "0,Broadcast,33554432"

# nccl-sum: calls and bytes per op and size; the 4-byte AllReduce's time
# is the 20 us transfer on every rank plus 290 ms on the seven that wait.
eq "(nccl) nccl-sum: calls and bytes per op and size bucket" \
	"$(qa "${NN[@]}" report nccl-sum | cut -d, -f1-4 | tr '\n' ' ')" \
	"AllGather,8-16 MiB,160,1342177280 AllReduce,4-8 B,160,640 AllReduce,4-8 MiB,160,754974720 AllReduce,16-32 MiB,320,8388608000 Broadcast,32-64 MiB,8,268435456 CommDestroy,,8, CommInitRank,,8, GroupEnd,,160, GroupStart,,160, Recv,2-4 MiB,160,335544320 ReduceScatter,8-16 MiB,160,1342177280 Send,2-4 MiB,160,335544320 "
eq "(nccl) nccl-sum: time of the 4-byte AllReduce" \
	"$(qa "${NN[@]}" report nccl-sum | grep '^AllReduce,4-8 B,' | cut -d, -f5,6)" \
	"$((20 * (7 * (290000000 + 20000) + 20000))),$((20 * (7 * (290000000 + 20000) + 20000) / 160))"
# Broadcast: 8 x 32 MiB over 7 x (290 ms + 691088 ns) + 691088 ns.
eq "(nccl) nccl-sum: broadcast bandwidths (nccl-tests' algbw = busbw)" \
	"$(qa "${NN[@]}" report nccl-sum | grep '^Broadcast,' | cut -d, -f5-)" \
	"$((7 * 290691088 + 691088)),$(((7 * 290691088 + 691088) / 8)),0.132,0.132"

# The iteration's median from its histogram: 2740 ms reads 2740.7 (the
# bucket's midpoint, within 1/256).
eq "(nccl) rank-pace: 6 collectives an iteration of 2740 ms; rank 6 waits least" \
	"$(qa "${NN[@]}" report rank-pace | tr '\n' ' ')" \
	"beta,6,48196,$cid,121,120,0,6,2740.7,21.89,0.6 alpha,0,48100,$cid,121,120,0,6,2740.7,21.89,63.9 alpha,1,48116,$cid,121,120,0,6,2740.7,21.89,63.9 alpha,2,48132,$cid,121,120,0,6,2740.7,21.89,63.9 alpha,3,48148,$cid,121,120,0,6,2740.7,21.89,63.9 beta,4,48164,$cid,121,120,0,6,2740.7,21.89,63.9 beta,5,48180,$cid,121,120,0,6,2740.7,21.89,63.9 beta,7,48212,$cid,121,120,0,6,2740.7,21.89,63.9 "
eq "(nccl) rank-pace --param per_iter=6 equals the detected period" \
	"$(qa "${NN[@]}" report rank-pace --param per_iter=6 | md5sum)" "$(qa "${NN[@]}" report rank-pace | md5sum)"
user_error "(nccl) rank-pace per_iter takes a whole number" "per_iter takes a whole number" \
	"${NN[@]}" report rank-pace --param per_iter=six

# A window that ends 100 ms after seq 60's first arrival: rank 6 (290 ms
# later) is not in it, so seq 60 is partial and left out of the lateness,
# and rank-pace shows rank 6 one collective behind.
t60=$(q "${NN[@]}" sql "SELECT min(ts) + 100000000 FROM nccl WHERE seq = 60")
until60="$(date -u -d "@${t60:0:10}" +%Y-%m-%dT%H:%M:%S).${t60:10:3}Z"
eq "(nccl) a window's edge: partial collectives left out, still exactly 290 ms" \
	"$(qa "${NN[@]}" --until "$until60" report nccl-skew | cut -d, -f1,2,5-8 | head -2 | tr '\n' ' ')" \
	"beta,6,8/8,60,60,290.0 alpha,0,8/8,60,0,0.0 "
eq "(nccl) a window's edge: rank-pace puts the rank behind first" \
	"$(qa "${NN[@]}" --until "$until60" report rank-pace | cut -d, -f1,2,5-7 | head -2 | tr '\n' ' ')" \
	"beta,6,60,59,1 alpha,0,61,60,0 "
eq "(nccl) one host's data alone: 4 of 8 ranks, no lateness" \
	"$(qa --data "$T/na" report nccl-skew | cut -d, -f1,2,5,8 | tr '\n' ' ')" \
	"alpha,0,4/8,0.0 alpha,1,4/8,0.0 alpha,2,4/8,0.0 alpha,3,4/8,0.0 "

# Late every 3rd collective (seq % 3 == 0): 41 of 121, so the mean is
# 290 x 41 / 121 ms; two late collectives an iteration make it 1580 ms.
job "$T/n3a" alpha 0-3 "${late[@]}" --nccl-jitter-us 0 --nccl-late-every 3
job "$T/n3b" beta 4-7 "${late[@]}" --nccl-jitter-us 0 --nccl-late-every 3
m=$(python3 -c 'print(round(290 * 41 / 121, 3))')
eq "(nccl) late every 3rd collective: times last, mean, p99, max, vs host" \
	"$(qa --data "$T/n3a" --data "$T/n3b" report nccl-skew --param limit=2 | cut -d, -f1,2,6- | tr '\n' ' ')" \
	"beta,6,121,41,$m,290.0,290.0,$m alpha,0,121,0,0.0,0.0,0.0,0.0 "
eq "(nccl) late every 3rd collective: 1580 ms an iteration (1580.7: its bucket)" \
	"$(qa --data "$T/n3a" --data "$T/n3b" report rank-pace | cut -d, -f8-10 | sort -u)" "6,1580.7,37.96"

# Jitter (200 us by default): the on-time ranks spread, rank 6 still
# exactly 290 ms after the first; nobody else ever 0.2 ms late or more.
job "$T/nja" alpha 0-3 "${late[@]}"
job "$T/njb" beta 4-7 "${late[@]}"
NJ=(--data "$T/nja" --data "$T/njb")
eq "(nccl) with jitter: rank 6 first, exactly 290 ms late" \
	"$(qa "${NJ[@]}" report nccl-skew --param limit=1 | cut -d, -f1,2,6-10)" "beta,6,121,121,290.0,290.0,290.0"
eq "(nccl) with jitter: the others within 0.2 ms, each sometimes late" \
	"$(qa "${NJ[@]}" report nccl-skew | tail -n +2 | awk -F, '$8 > 0 && $10 <= 0.2 { n++ } END { print n }')" 7
eq "(nccl) the same seed writes the same rows" \
	"$(job "$T/nja2" alpha 0-3 "${late[@]}"; qa --data "$T/nja2" sql 'SELECT * FROM nccl ORDER BY ts, rank, api' | md5sum)" \
	"$(qa --data "$T/nja" sql 'SELECT * FROM nccl ORDER BY ts, rank, api' | md5sum)"

# --nccl-async: the calls return after a 9 us enqueue; the arrivals, and
# so the straggler table, are the blocking run's.
job "$T/naa" alpha 0-3 "${late[@]}" --nccl-jitter-us 0 --nccl-async
job "$T/nab" beta 4-7 "${late[@]}" --nccl-jitter-us 0 --nccl-async
eq "(nccl) async: the same straggler table" \
	"$(qa --data "$T/naa" --data "$T/nab" report nccl-skew | md5sum)" "$(qa "${NN[@]}" report nccl-skew | md5sum)"
eq "(nccl) async: collectives last the enqueue" \
	"$(q --data "$T/naa" --data "$T/nab" sql "SELECT count(*), min(dur), max(dur) FROM nccl WHERE seq IS NOT NULL")" "968,9000,9000"

# A second job (another seed: another communicator) on a third host.
job "$T/ng" gamma 0-1 --nccl-ranks 2 --seed 2 --nccl-jitter-us 0
eq "(nccl) two communicators: each compared within itself" \
	"$(qa "${NN[@]}" --data "$T/ng" report nccl-skew | cut -d, -f1,2,5,8 | tr '\n' ' ')" \
	"beta,6,8/8,290.0 alpha,0,8/8,0.0 alpha,1,8/8,0.0 alpha,2,8/8,0.0 alpha,3,8/8,0.0 beta,4,8/8,0.0 beta,5,8/8,0.0 beta,7,8/8,0.0 gamma,0,2/2,0.0 gamma,1,2/2,0.0 "

# The air-gapped copy: a plain copy of the files verifies.
cp -a "$T/nb" "$T/nb-copy"
eq "(nccl) a copied data directory verifies" "$("$GPUREC" --data "$T/nb-copy" --format jsonl verify)" \
	'{"ok":true,"dirs_checked":1,"segments_checked":1,"blocks_checked":1,"problems":[],"notes":[{"path":"'"$T/nb-copy"'/MANIFEST","text":"not sealed: anyone with write access could rewrite the chain"}],"manifest_lines":3,"sealed_lines":0}'
synth_error() { # NAME MESSAGE ARGS…
	local name=$1 want=$2; shift 2
	"$SYNTH" "$@" >/dev/null 2>"$T/err"; local rc=$?
	eq "$name" "$rc $(cat "$T/err")" "1 gpurec-synth: $want"
}
synth_error "(nccl) synth: a late rank outside the job" "--nccl-late-rank 8 is not a rank of 0-7" \
	--data "$T/nx" --table nccl --nccl-late-rank 8 --nccl-late-ms 5
synth_error "(nccl) synth: a step too short" "--nccl-step-ms 5 is too short for the transfers and the jitter" \
	--data "$T/nx" --table nccl --nccl-step-ms 5
synth_error "(nccl) synth: host ranks outside the job" "--nccl-host-ranks must lie within 0-3" \
	--data "$T/nx" --table nccl --nccl-ranks 4 --nccl-host-ranks 2-4
synth_error "(nccl) synth: a late rank needs its lateness" "--nccl-late-rank and --nccl-late-ms go together" \
	--data "$T/nx" --table nccl --nccl-late-rank 1

# --- thousands of segments, no ATTACH limit -----------------------------
M="$T/many"
synth --data "$M" --events 2400 --interval 1000 --start "$S_NS" --rotate-every 2 --flush-every 2
eq "1200 segments written" "$(ls "$M" | grep -c '\.seg$')" 1200
eq "one query spans 1200 segments" "$(q --data "$M" sql 'SELECT count(*), count(DISTINCT ts) FROM cuda_kernel')" "2400,2400"

# --- export ---------------------------------------------------------------
# A jittered recording of every table gpurec-synth writes: block requests
# overlap (lanes), an eighth of them issued by no process, and file paths
# hold quotes, backslashes, control bytes, UTF-8 and ill-formed UTF-8.
E="$T/e" X="$T/x"
synth --data "$E" --events 3000 --start "$S_NS" --host alpha --table cuda_kernel \
	--table offcpu --table block_io --table file_io --table drops
mkdir "$X"
EVENT_TABLES="cuda_kernel cuda_memcpy cuda_memset cuda_mem cuda_sync cuda_graph cuda_api nccl offcpu runq block_io file_io process drops gpu gpu_process gpu_event"
eq "export: the event tables are the schema's" \
	"$("$GPUREC" --format csv tables | tr -d '\r' | tail -n +2 | cut -d, -f1 | grep -v '^segments$\|^runs$' | grep -v '^sum_\|^cuda_graph_[ek]' | tr '\n' ' ')" "$EVENT_TABLES "
sq() { q --data "$E" sql "$1"; }
eq "export: the recording has every kind of row" \
	"$(sq "SELECT (SELECT count(*) FROM block_io WHERE pid IS NULL), (SELECT count(DISTINCT path) FROM file_io), (SELECT count(*) FROM drops)")" "375,7,3000"
fact() { grep "^$1 " "$X/t.facts"; }
# The summary line, its size and seconds left out (tests/cli/export3p.sh
# has them exact).
summary() { sed -E 's/ \([0-9.]+ [kMGTP]?B\) in [0-9]+\.[0-9] s$/ (SIZE) in S s/' "$1"; }

"$GPUREC" --data "$E" export --format perfetto -o "$X/t.json" 2>"$T/err"
eq "perfetto: exit 0, the summary line on stderr" "$?:$(summary "$T/err")" \
	"0:exported 15,000 rows from 1 segment to $X/t.json (SIZE) in S s"
python3 tests/cli/check_trace.py "$X/t.json" "$S_NS" >"$X/t.facts"
eq "perfetto: strict UTF-8 JSON, displayTimeUnit first, no raw control byte" "$(fact format)" "format OK"
for t in cuda_kernel offcpu block_io file_io; do
	eq "perfetto: an X event per $t row, ts and dur exact to the ns" "$(fact "X $t")" \
		"X $t $(sq "SELECT count(*), sum(ts - $S_NS), sum(dur) FROM $t" | tr , ' ')"
done
eq "perfetto: cuda_api adds no call that cuda_kernel holds" "$(fact "X cuda_api")" ""
eq "perfetto: drops as global instants" "$(fact "i drops")" "i drops 3000"
eq "perfetto: no other event" "$(fact other)" "other 0"
procs=$(sq "SELECT count(DISTINCT pid) + (SELECT count(*) > 0 FROM block_io WHERE pid IS NULL) FROM (SELECT pid FROM cuda_kernel UNION ALL SELECT pid FROM offcpu UNION ALL SELECT pid FROM file_io UNION ALL SELECT pid FROM block_io WHERE pid IS NOT NULL)")
eq "perfetto: a process_name per process, and one for block devices" "$(fact "M process_name")" "M process_name $procs"
lanes=$(fact lanes | cut -d' ' -f2)
threads=$(sq "SELECT count(*) FROM (SELECT pid, tid FROM cuda_kernel UNION SELECT pid, tid FROM offcpu UNION SELECT pid, tid FROM file_io)")
eq "perfetto: a thread_name per thread and per lane" "$(fact "M thread_name")" "M thread_name $((threads + lanes))"
eq "perfetto: every track and process named once, no name without a track" \
	"$(fact unnamed), $(fact idle-names)" "unnamed 0, idle-names 0"
groups=$(sq "SELECT count(DISTINCT pid) + count(DISTINCT CASE WHEN pid IS NULL THEN dev END) FROM block_io")
eq "perfetto: block requests on as few lanes as were in flight, never overlapping" \
	"$(fact lanes), $(fact lane-overlaps), more lanes than groups: $((lanes > groups))" \
	"lanes $lanes $lanes, lane-overlaps 0, more lanes than groups: 1"

# Exact values: the first launch, the names of every kind, the paths.
"$GPUREC" --data "$E" --format json sql "SELECT DISTINCT path FROM file_io WHERE path IS NOT NULL" >"$X/paths.json"
python3 - "$X/t.json" "$X/paths.json" >"$X/t.values" <<'PY'
import collections, json, sys
t = json.load(open(sys.argv[1]), parse_float=str)
d = t["traceEvents"]
x = [e for e in d if e["ph"] == "X"]
k = min((e for e in x if e["cat"] == "cuda_kernel"), key=lambda e: int(e["ts"].replace(".", "")))
a = k["args"]
print("first:", t["otherData"]["start_ns"], k["ts"], k["dur"], k["name"] == a["kernel"], k["pid"], k["tid"], a["grid_x"], a["block_x"], a["shared_mem"], a["api"])
names = collections.defaultdict(set)
for e in x:
    names[e["cat"]].add(e["name"])
for c in ("offcpu", "block_io", "file_io"):
    print(c + ":", " ".join(sorted(names[c])))
print("kernel names:", all(e["name"] == (e["args"].get("kernel") or e["args"].get("kernel_mangled") or e["args"]["api"]) for e in x if e["cat"] == "cuda_kernel"))
m = [e for e in d if e["ph"] == "M"]
procs = {e["pid"]: e["args"]["name"] for e in m if e["name"] == "process_name"}
threads = [(e["pid"], e["tid"], e["args"]["name"]) for e in m if e["name"] == "thread_name"]
print("processes:", " ".join(sorted(set(procs.values()))))
print("threads:", " ".join(sorted({n for p, t, n in threads if t < 1 << 22})))
dev = [p for p, n in procs.items() if n == "block devices"]
print("block devices:", dev, " ".join(sorted({n.split(" (")[0] for p, t, n in threads if p in dev})))
print("process lanes:", " ".join(sorted({n.split(" (")[0] for p, t, n in threads if p not in dev and t >= 1 << 22})))
print("lane args:", all({"pid", "tid", "comm", "dev", "op", "bytes", "sector"} <= set(e["args"]) for e in x if e["cat"] == "block_io" and e["pid"] not in dev))
paths = {e["args"]["path"] for e in x if e["cat"] == "file_io" and "path" in e["args"]}
want = {r["path"] for r in json.load(open(sys.argv[2]))}
print("paths:", len(paths), paths == want)
PY
IFS=, read -r fts fdur fkernel fpid ftid fgrid fblock fsmem fapi <<<"$(sq "SELECT ts, dur, kernel = kernel, pid, tid, grid_x, block_x, shared_mem, api FROM cuda_kernel ORDER BY ts LIMIT 1")"
t0=$(sq "SELECT min(ts) FROM (SELECT ts FROM cuda_kernel UNION ALL SELECT ts FROM offcpu UNION ALL SELECT ts FROM block_io UNION ALL SELECT ts FROM file_io UNION ALL SELECT ts FROM drops)")
frel=$((fts - t0))
eq "perfetto: the first launch: µs after the first event with every ns, its name, dims and api" "$(sed -n 1p "$X/t.values")" \
	"first: $t0 $((frel / 1000)).$(printf %03d $((frel % 1000))) $((fdur / 1000)).$(printf %03d $((fdur % 1000))) True $fpid $ftid $fgrid $fblock $fsmem $fapi"
eq "perfetto: slices named by state, op and syscall" "$(sed -n 2,4p "$X/t.values" | tr '\n' '|')" \
	"offcpu: offcpu D offcpu S|block_io: block R block W|file_io: openat read write|"
eq "perfetto: launches named by their kernel" "$(sed -n 5p "$X/t.values")" "kernel names: True"
eq "perfetto: processes and threads named by comm; block devices a process" "$(sed -n 6,7p "$X/t.values" | tr '\n' '|')" \
	"processes: block devices pt_data_worker python3|threads: pt_data_worker python3|"
eq "perfetto: lanes of block devices by device, of processes as block I/O" "$(sed -n 8,9p "$X/t.values" | tr '\n' '|')" \
	"block devices: [4194304] 259:0|process lanes: block I/O|"
eq "perfetto: block requests of a process carry pid, tid and comm" "$(sed -n 10p "$X/t.values")" "lane args: True"
eq "perfetto: every path escaped and read back as gpurec sql's JSON has it" "$(sed -n 11p "$X/t.values")" "paths: 7 True"

# Table choice and the common options.
"$GPUREC" --data "$E" export --format perfetto -o "$X/api.json" cuda_api
eq "perfetto cuda_api alone: every call, as cuda_api" \
	"$(python3 tests/cli/check_trace.py "$X/api.json" "$S_NS" | grep '^X ')" \
	"X cuda_api $(sq "SELECT count(*), sum(ts - $S_NS), sum(dur) FROM cuda_api" | tr , ' ')"
"$GPUREC" --data "$A" --pid 41017 --since "$since" --until "$until" export --format perfetto -o "$X/pid.json"
python3 tests/cli/check_trace.py "$X/pid.json" "$S_NS" >"$X/pid.facts"
eq "perfetto --pid --since --until: that process's events of the window, nesting" \
	"$(grep -E '^(X|M|thread-overlaps) ' "$X/pid.facts" | tr '\n' '|')" \
	"X cuda_kernel $(q --data "$A" --pid 41017 --since "$since" --until "$until" sql "SELECT count(*), sum(ts - $S_NS), sum(dur) FROM cuda_kernel" | tr , ' ')|M process_name 1|M thread_name 1|thread-overlaps 0|"
"$GPUREC" --data "$E" --data "$B" export --format perfetto -o "$X/hosts.json" cuda_kernel
got=$(python3 - "$X/hosts.json" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))["traceEvents"]
seen = collections.Counter((e["args"]["host"], e["pid"] // 10000000, e["pid"] % 10000000 // 1000) for e in d if e["ph"] == "X")
names = sorted({e["args"]["name"] for e in d if e["name"] == "process_name"})
print(sorted(seen.items()), names)
PY
)
eq "perfetto over two hosts: pids apart, hosts named" "$got" \
	"[(('alpha', 0, 41), 3000), (('beta', 1, 41), 30000)] ['python3 (alpha)', 'python3 (beta)']"
"$GPUREC" --data "$E" export --format perfetto -o - drops | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["traceEvents"]))' >"$T/n"
eq "perfetto -o - writes to stdout" "$(cat "$T/n")" 3000

# sqlite: plain tables, what gpurec sql answers, read by the sqlite3 CLI.
"$GPUREC" --data "$E" export --format sqlite -o "$X/e.db" 2>"$T/err"
eq "sqlite: exit 0, the summary line on stderr" "$?:$(summary "$T/err")" \
	"0:exported 18,000 rows from 1 segment to $X/e.db (SIZE) in S s"
eq "sqlite: every event table and an index on ts of each, the provenance tables, nothing else" \
	"$(sqlite3 "$X/e.db" "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid); SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql LIKE '%(ts)'" | tr '\n' '|')" \
	"$EVENT_TABLES provenance provenance_segments|17|"
eq "sqlite: each table's rows, columns, types and values as gpurec sql has them" \
	"$(bash tests/cli/sqlite_diff.sh "$GPUREC" "$X/e.db" $EVENT_TABLES -- --data "$E")" ""
eq "sqlite: the paths' bytes exact" \
	"$(sqlite3 "$X/e.db" "SELECT group_concat(h, ' ') FROM (SELECT DISTINCT hex(path) AS h FROM file_io WHERE path IS NOT NULL ORDER BY 1)")" \
	"$(sq "SELECT group_concat(h, ' ') FROM (SELECT DISTINCT hex(path) AS h FROM file_io WHERE path IS NOT NULL ORDER BY 1)")"
eq "sqlite: the first block request, host and NULLs kept" \
	"$(sqlite3 -csv "$X/e.db" "SELECT * FROM block_io WHERE pid IS NULL ORDER BY ts LIMIT 1")" \
	"$(sq "SELECT * FROM block_io WHERE pid IS NULL ORDER BY ts LIMIT 1")"
md5=$(md5sum <"$X/e.db")
user_error "sqlite: an existing file is kept without --force" "$X/e.db exists (--force replaces it)" \
	--data "$E" export --format sqlite -o "$X/e.db"
eq "sqlite: the refused file is unchanged" "$(md5sum <"$X/e.db")" "$md5"
"$GPUREC" --data "$E" --until "$(rfc $((S + 1)))" export --format sqlite -o "$X/e.db" --force offcpu
eq "sqlite --force replaces it; tables named, --until applies" \
	"$(sqlite3 "$X/e.db" "SELECT group_concat(name) FROM sqlite_master WHERE type = 'table'; SELECT count(*) FROM offcpu")" \
	"offcpu,provenance,provenance_segments
$(q --data "$E" --until "$(rfc $((S + 1)))" sql "SELECT count(*) FROM offcpu")"

# csv and jsonl: one file per table, the bytes gpurec sql prints.
"$GPUREC" --data "$E" export --format csv -o "$X/csv" && "$GPUREC" --data "$E" export --format jsonl -o "$X/jsonl"
eq "csv, jsonl: -o DIR holds TABLE.csv, TABLE.jsonl for every event table" \
	"$(ls "$X/csv" | tr '\n' ' ')/$(ls "$X/jsonl" | tr '\n' ' ')" \
	"$(for t in $EVENT_TABLES; do echo "$t.csv"; done | sort | tr '\n' ' ')/$(for t in $EVENT_TABLES; do echo "$t.jsonl"; done | sort | tr '\n' ' ')"
differ=""
for t in $EVENT_TABLES; do
	"$GPUREC" --data "$E" --format csv sql "SELECT * FROM $t" | cmp -s - "$X/csv/$t.csv" || differ+="$t.csv "
	"$GPUREC" --data "$E" --format jsonl sql "SELECT * FROM $t" | cmp -s - "$X/jsonl/$t.jsonl" || differ+="$t.jsonl "
done
eq "csv, jsonl: each file is what gpurec sql prints, byte for byte" "$differ" ""
got=$(python3 - "$X" <<'PY'
import csv, json, sys
x = sys.argv[1]
rows = list(csv.DictReader(open(x + "/csv/file_io.csv", newline="", encoding="utf-8", errors="surrogateescape")))
lines = [json.loads(l) for l in open(x + "/jsonl/file_io.jsonl", encoding="utf-8")]
paths = sorted({r["path"].encode("utf-8", "surrogateescape") for r in rows if r["path"]})
print(len(rows), len(lines), len(paths), " ".join(p.hex().upper() for p in paths))
print(lines[0]["ts"], lines[0]["syscall"], repr(lines[1]["path"]), len(list(csv.reader(open(x + "/csv/drops.csv", newline="")))) - 1)
PY
)
eq "csv, jsonl: row counts and the exact bytes of every path" "$(sed -n 1p <<<"$got")" \
	"3000 3000 7 $(sq "SELECT group_concat(h, ' ') FROM (SELECT DISTINCT hex(path) AS h FROM file_io WHERE path IS NOT NULL ORDER BY 1)")"
eq "csv, jsonl: exact values" "$(sed -n 2p <<<"$got")" "$(sq "SELECT ts, syscall FROM file_io LIMIT 1" | tr , ' ') None 3000"
"$GPUREC" --data "$E" export --format csv -o "$X/k.csv" cuda_kernel && "$GPUREC" --data "$E" export --format jsonl -o - drops >"$X/d.jsonl"
"$GPUREC" --data "$E" export --format jsonl -o "$X/one/" drops
eq "csv, jsonl: -o FILE (or -) for one table, -o DIR/ for a directory" \
	"$(tr -d '\r' <"$X/k.csv" | wc -l) $(wc -l <"$X/d.jsonl") $(ls "$X/one")" "3001 3000 drops.jsonl"

# Errors: one line, exit 1, nothing left behind.
user_error "export: unknown format" "bad --format 'xml' for export: expected perfetto, csv, jsonl or sqlite" --data "$E" export --format xml -o "$X/y"
user_error "export: no format" "export needs --format perfetto, csv, jsonl or sqlite" --data "$E" export -o "$X/y"
user_error "export: no -o" "export needs -o FILE" --data "$E" export --format sqlite
user_error "export: unknown table" "no table 'nope' (gpurec tables lists them)" --data "$E" export --format csv -o "$X/y" nope
user_error "export: perfetto of segments" "segments is not an event table: perfetto exports events" --data "$E" export --format perfetto -o "$X/y" segments
user_error "export: unwritable path" "cannot write $T/none/t.json: No such file or directory" --data "$E" export --format perfetto -o "$T/none/t.json"
user_error "export: a path through a file" "cannot write $X/e.db/t.json: Not a directory" --data "$E" export --format perfetto -o "$X/e.db/t.json"
user_error "export: an existing file in -o DIR" "$X/csv/cuda_kernel.csv exists (--force replaces it)" --data "$E" export --format csv -o "$X/csv"
user_error "export: -o DIR that is a file" "$X/k.csv is not a directory: csv of several tables writes DIR/TABLE.csv" --data "$E" export --format csv -o "$X/k.csv" offcpu drops
user_error "export: -o a directory for one file" "$X/csv is a directory: -o names the file to write" --data "$E" export --format sqlite -o "$X/csv"
user_error "export: sqlite to stdout" "sqlite writes a file" --data "$E" export --format sqlite -o -
user_error "export: several tables to stdout" "-o - writes one table to stdout" --data "$E" export --format csv -o -
user_error "export: -o on another command" "-o applies to sql, report and export only" --data "$E" -o "$X/y" status
user_error "export: no recording" "no recording in $T/empty" --data "$T/empty" export --format sqlite -o "$X/y"
eq "export: no temporary file left behind" "$(ls -A "$X" "$X/csv" | grep -c '\.tmp-')" 0

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
