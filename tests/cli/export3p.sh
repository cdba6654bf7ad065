#!/usr/bin/env bash
# export3p.sh - `gpurec export` as third-party tools read it: the Perfetto
# JSON's fields, ns-exact relative times and nesting (check_trace.py, and
# an independent replay of the nesting rule over the recording's rows);
# Chrome DevTools' trace models loading it; the sqlite export's provenance
# against the MANIFEST and sha256sum; the summary line, exact, and the
# progress line on a tty only; and docs/export.md's offline DuckDB queries
# run by DuckDB from npm, each answer compared with gpurec sql's.
#
# The npm packages (tests/cli/npm/package-lock.json, pinned) are installed
# into NPM_DIR (default build/npm, git-ignored) when that copy is missing or
# stale.  Without node and npm, or when npm cannot install, those checks
# are skipped, and under CI=true they fail instead.
# Env: GPUREC, SYNTH (binaries under test), NPM_DIR.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
NPM_DIR=$(realpath -m "${NPM_DIR:-build/npm}")
SRC=$(pwd)
T=$(mktemp -d /tmp/gpurec-export3p.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
# eq NAME GOT WANT
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
# csv ARGS…: gpurec's csv rows, header included, without CR
csv() { "$GPUREC" --format csv "$@" | tr -d '\r'; }
# q SQL: the rows of a query over $E, without the header
q() { csv --data "$E" sql "$1" | tail -n +2; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
rfc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# si BYTES: as the summary line writes a size (decimal units, df -H)
si() {
	python3 -c 'import sys
v = int(sys.argv[1]); d = float(v); u = -1
while v >= 1000 and d >= 999.95 and u < 4:
    d /= 1000; u += 1
print("%d B" % v if v < 1000 else ("%.1f %s" if d < 9.95 else "%.0f %s") % (d, ["kB", "MB", "GB", "TB", "PB"][u]))' "$1"
}
# commas N: 1,234,567
commas() { python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$1"; }
# summary FILE: the line with its seconds left out (they vary)
summary() { sed -E 's/ in [0-9]+\.[0-9] s$/ in S s/' "$1"; }

S=1795000000   # 2026-11-18T11:06:40Z
S_NS=${S}000000000

# A recording of every kind of slice gpurec-synth writes, sealed into 3
# segments: its off-CPU intervals overlap its file calls on one thread as
# a real recording's may (an `offcpu D` ending after its pwrite64).
E="$T/e"
synth --data "$E" --events 3000 --start "$S_NS" --host alpha --rotate-every 1000 \
	--table cuda_kernel --table offcpu --table block_io --table file_io --table drops
eq "the recording: 3 sealed segments" "$(q "SELECT count(*), sum(sealed) FROM segments")" "3,3"

# --- perfetto -------------------------------------------------------------
"$GPUREC" --data "$E" export --format perfetto -o "$T/t.json" 2>"$T/err"
eq "perfetto: exit 0, the summary line: rows, segments, file, its size" "$?:$(summary "$T/err")" \
	"0:exported 15,000 rows from 3 segments to $T/t.json ($(si "$(stat -c %s "$T/t.json")")) in S s"
python3 "$SRC/tests/cli/check_trace.py" "$T/t.json" "$S_NS" >"$T/t.facts"
fact() { grep "^$1 " "$T/t.facts"; }
eq "perfetto: strict JSON, otherData's start_ns and start agree, no ts before it" "$(fact format)" "format OK"
eq "perfetto: every event has ph, cat, name, ts (pid, tid, dur where DevTools reads them)" \
	"$(fact missing-fields)" "missing-fields 0"
first=$(q "SELECT min(ts) FROM (SELECT ts FROM cuda_kernel UNION ALL SELECT ts FROM offcpu UNION ALL SELECT ts FROM block_io UNION ALL SELECT ts FROM file_io UNION ALL SELECT ts FROM drops)")
eq "perfetto: times count from the first event, given in otherData as ns and ISO 8601" \
	"$(python3 -c 'import json, sys; o = json.load(open(sys.argv[1]))["otherData"]; print(o["start_ns"], o["start"], o["generator"])' "$T/t.json")" \
	"$first $(date -u -d "@${first:0:10}" +%Y-%m-%dT%H:%M:%S).${first:10}Z gpurec $("$GPUREC" --version | cut -d' ' -f2)"
for t in cuda_kernel offcpu block_io file_io; do
	eq "perfetto: an X event per $t row, start_ns + ts and (recorded) dur exact to the ns" "$(fact "X $t")" \
		"X $t $(q "SELECT count(*), sum(ts - $S_NS), sum(dur) FROM $t" | tr , ' ')"
done
eq "perfetto: no ts or dur that a double does not hold to the ns" "$(fact float-loss)" "float-loss 0"
eq "perfetto: the slices of every thread nest, in exact ns and as doubles" \
	"$(fact thread-overlaps), $(fact float-overlaps), $(fact lane-overlaps)" \
	"thread-overlaps 0, float-overlaps 0, lane-overlaps 0"

# The nesting rule replayed over the recording's rows, independently: on
# each thread, in time order and the longest first, a slice that would end
# after the open slice it starts in ends with it.  Every slice of the trace
# must be where the rule puts it, cut exactly as far as it says.
csv --data "$E" sql "SELECT 'cuda_kernel', pid, tid, ts, dur FROM cuda_kernel UNION ALL SELECT 'offcpu', pid, tid, ts, dur FROM offcpu UNION ALL SELECT 'file_io', pid, tid, ts, dur FROM file_io" >"$T/slices.csv"
got=$(python3 - "$T/t.json" "$T/slices.csv" <<'PY'
import collections, csv, decimal, json, sys
t = json.load(open(sys.argv[1]), parse_float=decimal.Decimal)
start = int(t["otherData"]["start_ns"])
rows = collections.defaultdict(list)
for cat, pid, tid, ts, dur in list(csv.reader(open(sys.argv[2])))[1:]:
    rows[(int(pid), int(tid))].append((int(ts), int(dur or 0), cat))
want, cuts, kinds = collections.Counter(), 0, collections.Counter()
for key, evs in rows.items():
    stack = []  # (end, cat)
    for ts, dur, cat in sorted(evs, key=lambda e: (e[0], -e[1])):
        while stack and stack[-1][0] <= ts:
            stack.pop()
        cut = dur
        if stack and ts + dur > stack[-1][0]:
            cut = stack[-1][0] - ts
            cuts += 1
            kinds["%s in %s" % (cat, stack[-1][1])] += 1
        stack.append((ts + cut, cat))
        want[(key, cat, ts, cut, dur if cut != dur else None)] += 1
have = collections.Counter()
for e in t["traceEvents"]:
    if e["ph"] == "X" and e["cat"] in ("cuda_kernel", "offcpu", "file_io"):
        have[((e["pid"], e["tid"]), e["cat"], start + int(e["ts"] * 1000),
              int(e["dur"] * 1000), e["args"].get("recorded_dur"))] += 1
print("slices where the rule puts them:", have == want, sum(have.values()))
print("cut:", cuts, " ".join("%s=%d" % k for k in sorted(kinds.items())))
PY
)
eq "perfetto: each thread slice at its row's ts, cut to nest exactly where the rule cuts it" \
	"$(sed -n 1p <<<"$got")" "slices where the rule puts them: True 9000"
eq "perfetto: the recording has slices to cut (off-CPU in file calls), as many as check_trace counts" \
	"$(sed -n 2p <<<"$got" | cut -d' ' -f1-2)" "cut: $(fact cut | cut -d' ' -f2)"

# --- the npm readers ------------------------------------------------------
# npm_ready: 0 when NPM_DIR holds the pinned packages (installing them if
# needed); else a skip, or a failure under CI=true.
npm_ready() {
	local why=""
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		why="node and npm are not installed (packaging/deps.sh installs them)"
	elif ! cmp -s "$SRC/tests/cli/npm/package-lock.json" "$NPM_DIR/package-lock.json" ||
	     [ ! -d "$NPM_DIR/node_modules/@duckdb/node-api" ]; then
		mkdir -p "$NPM_DIR" &&
		cp "$SRC/tests/cli/npm/package.json" "$SRC/tests/cli/npm/package-lock.json" "$NPM_DIR/" &&
		(cd "$NPM_DIR" && npm ci --no-audit --no-fund) >"$T/npm.log" 2>&1 ||
			why="npm ci in $NPM_DIR failed: $(tail -n 2 "$T/npm.log" | tr '\n' ' ')"
	fi
	[ -z "$why" ] && return 0
	if [ "${CI:-}" = true ]; then
		bad "the npm readers (DuckDB, DevTools)" "$why"
	else
		echo "skip the npm readers (DuckDB, DevTools): $why"
		skipped=$((skipped + 1))
	fi
	return 1
}
node3p() { GR_NPM="$NPM_DIR" node "$SRC/tests/cli/export3p.mjs" "$@" 2>"$T/node.err"; }

if npm_ready; then
	# Chrome DevTools' trace model (devtools-timeline-model) and the
	# Performance panel's engine (@paulirish/trace_engine).
	procs=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["traceEvents"]; print(len({e["pid"] for e in d if e["ph"] == "X"}), len({(e["pid"], e["tid"]) for e in d if e["ph"] == "X"}), len(d), sum(e["ph"] == "X" for e in d))' "$T/t.json")
	read -r nproc nthread nevent nslice <<<"$procs"
	eq "DevTools' trace model (devtools-timeline-model) loads it: processes, threads, events" \
		"$(node3p timeline "$T/t.json" | grep -v '^warning: Failed to find browser main thread' | tr '\n' '|')" \
		"named processes $nproc|named threads $nthread|events $nevent|slices $nslice|"
	firstx=$(python3 -c 'import json, sys, decimal; d = json.load(open(sys.argv[1]), parse_float=decimal.Decimal)["traceEvents"]; print(min(e["ts"] for e in d if e["ph"] == "X"))' "$T/t.json")
	eq "the DevTools Performance panel's engine (@paulirish/trace_engine) loads it, no warning, first slice to the ns" \
		"$(node3p engine "$T/t.json" | tr '\n' '|')" \
		"processes $nproc|threads $nthread|entries $nslice|first $firstx|warnings 0|"

	# docs/export.md's offline DuckDB queries over csv and jsonl exports,
	# with DuckDB's extension autoloading and autoinstalling off.
	mkdir "$T/d"
	"$GPUREC" --data "$E" export --format csv -o "$T/d/out/" 2>/dev/null &&
		"$GPUREC" --data "$E" export --format jsonl -o "$T/d/out/" 2>/dev/null
	sed -n '/^<!-- duckdb-offline/,/^```$/p' "$SRC/docs/export.md" | sed -n '/^```sql$/,/^```$/p' |
		grep -v '^```' >"$T/duckdb.sql"
	: >"$T/gpurec.out"
	while IFS= read -r sql; do
		echo "== $sql" >>"$T/gpurec.out"
		csv --data "$E" sql "$(sed -E "s/read_(csv|json)\('out\/([a-z_]+)\.(csv|jsonl)'\)/\2/g" <<<"$sql")" >>"$T/gpurec.out"
	done <"$T/duckdb.sql"
	(cd "$T/d" && node3p duckdb "$T/duckdb.sql") >"$T/duckdb.out"
	eq "DuckDB (npm @duckdb/node-api), offline: docs/export.md's 5 queries run" \
		"$(grep -c '^== ' "$T/duckdb.out") $(grep -c '^SELECT .* FROM read_\(csv\|json\)(' "$T/duckdb.sql")" "5 5"
	eq "DuckDB offline: each answer is gpurec sql's, row for row ($(wc -l <"$T/gpurec.out") lines)" \
		"$(diff "$T/gpurec.out" "$T/duckdb.out" && cat "$T/node.err")" ""
fi

# --- provenance -------------------------------------------------------------
# A window that meets the last two segments (each spans from the start to
# its last drops row, 1 s apart), a filter, and a path a shell must quote.
since=$(rfc $((S + 1000))) until=$(rfc $((S + 2500)))
before=$(date +%s%N)
"$GPUREC" --data "$E" --since "$since" --until "$until" --host alpha \
	export --format sqlite -o "$T/p q.db" 2>"$T/err"
rc=$?
after=$(date +%s%N)
tables=$("$GPUREC" --format csv tables | tr -d '\r' | tail -n +2 | cut -d, -f1 | grep -v '^segments$\|^runs$\|^sum_\|^cuda_graph_[ek]')
sum_rows="SELECT 0$(for t in $tables; do printf ' + (SELECT count(*) FROM %s)' "$t"; done)"
eq "sqlite: exit 0, the summary line" "$rc:$(summary "$T/err")" \
	"0:exported $(commas "$(csv --data "$E" --since "$since" --until "$until" --host alpha sql "$sum_rows" | tail -n +2)") rows from 2 segments to $T/p q.db ($(si "$(stat -c %s "$T/p q.db")")) in S s"
prov() { sqlite3 "$T/p q.db" "SELECT value FROM provenance WHERE key = '$1'"; }
eq "provenance: the version and schema gpurec --version names" \
	"gpurec $(prov gpurec_version) (schema $(prov schema_version))" "$("$GPUREC" --version)"
eq "provenance: the command line, quoted for a shell" "$(prov command)" \
	"$GPUREC --data $E --since $since --until $until --host alpha export --format sqlite -o '$T/p q.db'"
eq "provenance: the window as ns and ISO 8601" \
	"$(prov since_ns) $(prov since) $(prov until_ns) $(prov until)" \
	"$((S + 1000))000000000 ${since%Z}.000000000Z $((S + 2500))000000000 ${until%Z}.000000000Z"
eq "provenance: the filters, the tables, the hosts" "[$(prov pid)] $(prov host) $(prov hosts) | $(prov tables)" \
	"[] alpha alpha | $(echo $tables)"
"$GPUREC" --data "$E" --pid 41000 export --format sqlite -o "$T/pid.db" offcpu 2>/dev/null
eq "provenance: --pid, and the tables named" \
	"$(sqlite3 "$T/pid.db" "SELECT group_concat(value, ' ') FROM provenance WHERE key IN ('pid', 'host', 'tables')")" "41000 offcpu"
at=$(prov exported_at_ns)
eq "provenance: the time of export, as ns and ISO 8601" \
	"$((at >= before && at <= after)) $(prov exported_at)" \
	"1 $(date -u -d "@${at:0:10}" +%Y-%m-%dT%H:%M:%S).${at:10}Z"
# The segments the window meets, from the MANIFEST's seal lines, with the
# SHA-256 sha256sum computes.
want=$(python3 - "$E" $((S + 1000))000000000 $((S + 2500))000000000 <<'PY'
import hashlib, sys
d, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for line in open(d + "/MANIFEST"):
    f = line.split()
    if f[0] != "seal":
        continue
    kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
    if int(kv["end"]) >= lo and int(kv["start"]) <= hi:
        path = d + "/" + f[1]
        print("|".join([kv["host"], path, "1", kv["sha256"], kv["start"], kv["end"], kv["events"], kv["bytes"]]))
        print("sha256sum", hashlib.sha256(open(path, "rb").read()).hexdigest() == kv["sha256"])
PY
)
eq "provenance_segments: each segment the window reads, with the MANIFEST's SHA-256 (sha256sum's)" \
	"$(sqlite3 "$T/p q.db" "SELECT host, path, sealed, sha256, start_ts, end_ts, events, bytes FROM provenance_segments ORDER BY path" | sed 's/$/\nsha256sum True/')" "$want"
eq "provenance: segments is their count" "$(prov segments)" 2
"$GPUREC" --data "$E" verify -v >"$T/verify" 2>&1
eq "gpurec verify -v: those files intact against those hashes" \
	"$(sqlite3 "$T/p q.db" "SELECT path FROM provenance_segments" | while read -r p; do grep -c "^ok   $p (.*sealed)$" "$T/verify"; done | tr '\n' ' ')" "1 1 "

# A segment still being written: listed, not sealed, no hash.
K="$T/k"
"$SYNTH" --data "$K" --events 100000000 --rate 20000 --flush-every 200 --host beta >/dev/null 2>&1 &
kp=$!
for _ in $(seq 200); do
	[ "$("$GPUREC" --data "$K" --format csv sql "SELECT count(*) FROM cuda_kernel" 2>/dev/null | tr -d '\r' | sed -n 2p)" -gt 0 ] 2>/dev/null && break
	sleep 0.05
done
kill -9 "$kp"; wait "$kp" 2>/dev/null
"$GPUREC" --data "$K" export --format sqlite -o "$T/k.db" 2>/dev/null
eq "provenance_segments: an open segment, sealed 0, no SHA-256 yet" \
	"$(sqlite3 "$T/k.db" "SELECT count(*), sum(sealed), count(sha256), sum(path LIKE '$K/%.seg') FROM provenance_segments")" "1|0|0|1"

"$GPUREC" --data "$E" --host nosuch export --format sqlite -o "$T/none.db" 2>"$T/err"
eq "provenance of a filter that reads no segment: no window to name, 0 segments, no host" \
	"$(summary "$T/err") $(sqlite3 "$T/none.db" "SELECT group_concat(key || '=' || ifnull(value, 'NULL'), ' ') FROM (SELECT * FROM provenance WHERE key IN ('since_ns', 'until', 'host', 'hosts', 'segments') ORDER BY rowid); SELECT count(*) FROM provenance_segments" | tr '\n' ' ')" \
	"exported 0 rows from 0 segments to $T/none.db ($(si "$(stat -c %s "$T/none.db")")) in S s since_ns=NULL until=NULL host=nosuch segments=0 hosts=NULL 0 "

# --- the summary line, other formats ----------------------------------------
"$GPUREC" --data "$E" export --format csv -o "$T/c/" offcpu drops 2>"$T/err"
eq "csv to a directory: the rows of both tables, the bytes of both files" "$(summary "$T/err")" \
	"exported 6,000 rows from 3 segments to $T/c/ ($(si $(($(stat -c %s "$T/c/offcpu.csv") + $(stat -c %s "$T/c/drops.csv"))))) in S s"
"$GPUREC" --data "$E" export --format jsonl -o - drops >/dev/null 2>"$T/err"
eq "jsonl to stdout: no size" "$(summary "$T/err")" "exported 3,000 rows from 3 segments to stdout in S s"
"$GPUREC" --data "$E" --since "$(rfc $((S + 100000)))" export --format perfetto -o "$T/none.json" 2>"$T/err"
eq "an empty window: 0 rows from 0 segments" "$(summary "$T/err")" \
	"exported 0 rows from 0 segments to $T/none.json ($(si "$(stat -c %s "$T/none.json")")) in S s"
eq "an empty window: a trace DevTools can open, no event" "$(python3 "$SRC/tests/cli/check_trace.py" "$T/none.json" | sed -n 1p)" "format OK"

# --- the progress line: on a terminal only ----------------------------------
# script(1) gives the export a pty for stderr.  Each table done redraws the
# line at once; rows counted between are drawn at most 5 times a second.
# The % is of the rows of every table, counted first.
script -qec "$GPUREC --data $E export --format sqlite -o $T/tty.db" /dev/null >"$T/tty.out" </dev/null
want="" rows=0 k=0 n=$(wc -w <<<"$tables") total=$(q "$sum_rows")
for t in $tables; do
	rows=$((rows + $(q "SELECT count(*) FROM $t"))) k=$((k + 1))
	want+="exporting: $(commas $rows) rows, $k of $n tables done, $((rows * 100 / total))%|"
done
got=$(python3 - "$T/tty.out" <<'PY'
import re, sys
out = open(sys.argv[1], "rb").read().decode()
lines = out.split("\r")
seen = {}
for l in lines:
    m = re.match(r"exporting: [0-9,]+ rows, ([0-9]+) of [0-9]+ tables done, [0-9]+%\x1b\[K$", l)
    if m and m.group(1) not in seen and m.group(1) != "0":
        seen[m.group(1)] = l[:-3]
print("|".join(seen.values()) + "|")
print(all(l == "" or l.startswith("exporting: ") or l.startswith("\x1b[K") or l == "\n" for l in lines[:-1]))
print(repr(re.sub(r"in [0-9]+\.[0-9] s", "in S s", out[out.rindex("\r\x1b[K"):])))
PY
)
eq "tty: the progress line as each table is done: rows, tables, %" "$(sed -n 1p <<<"$got")" "$want"
eq "tty: nothing else drawn" "$(sed -n 2p <<<"$got")" "True"
eq "tty: the line cleared, then the summary" "$(sed -n 3p <<<"$got")" \
	"$(python3 -c 'import sys; print(repr("\r\x1b[Kexported 18,000 rows from 3 segments to %s (%s) in S s\r\n" % tuple(sys.argv[1:])))' "$T/tty.db" "$(si "$(stat -c %s "$T/tty.db")")")"
"$GPUREC" --data "$E" export --format sqlite -o "$T/log.db" 2>&1 | cat >"$T/log.out"
eq "not a tty: no carriage return, no escape code, the summary alone" \
	"$(tr -d '\n' <"$T/log.out" | grep -c $'[\r\033]') $(wc -l <"$T/log.out")" "0 1"

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
