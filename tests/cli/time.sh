#!/usr/bin/env bash
# time.sh - times and tables for a person (issue 19, points 1, 2 and the
# output half of 4): ISO times and durations with units, --time-format in
# every format, iso()/ts()/dur() in SQL, journalctl's --since forms,
# --no-header, tsv, -o FILE, and on a real terminal (tmux) tables cut to
# its width and paged through less.  Every check compares exact text.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
# "…" is one column to tmux, less and wc -L
export LC_ALL=C.UTF-8
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-time.XXXXXX)
TMUX_SOCK="gpurec-time-$$"
cleanup() { tmux -L "$TMUX_SOCK" kill-server 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
g() { "$GPUREC" --data "$A" "$@" 2>"$T/err"; }
# user_error NAME WANT ARGS…: exit 1, and stderr exactly one line WANT
user_error() {
	local name=$1 want=$2; shift 2
	"$GPUREC" "$@" >"$T/out" 2>"$T/err"; local rc=$?
	eq "$name" "$rc $(wc -l <"$T/err") $(cat "$T/err")" "1 1 gpurec: $want"
}

# 1000 launches a second apart from 2026-11-18T11:06:40Z.
S=1795000000
A="$T/a"
synth --data "$A" --events 1000 --interval 1000000000 --start "${S}000000000" --host alpha

# --- times and durations in table output --------------------------------
eq "table: ts as ISO 8601 UTC with ns, durations with units" \
	"$(g --format table sql 'SELECT ts, 1250000 AS dur, 812 AS gap_ns, 3400000000 AS wait_ns FROM cuda_kernel ORDER BY ts LIMIT 2')" \
	"ts                                  dur  gap_ns  wait_ns
------------------------------  -------  ------  -------
2026-11-18T11:06:40.000000000Z  1.25 ms  812 ns    3.4 s
2026-11-18T11:06:41.000000000Z  1.25 ms  812 ns    3.4 s"
eq "table --local: local time with its offset (TZ=Asia/Kolkata)" \
	"$(TZ=Asia/Kolkata g --format table --local sql 'SELECT max(ts) AS last_ts FROM cuda_kernel')" \
	"last_ts
-----------------------------------
2026-11-18T16:53:19.000000000+05:30"
eq "table: the schema's other times (minute, ts_last) and dur_*" \
	"$(g --format table sql 'SELECT minute, max(ts_last) AS ts_last, max(dur_max) AS dur_max FROM sum_api WHERE minute IS NOT NULL GROUP BY minute ORDER BY minute LIMIT 2')" \
	"minute                          ts_last                         dur_max
------------------------------  ------------------------------  -------
2026-11-18T11:06:00.000000000Z  2026-11-18T11:06:59.000000000Z     1 µs
2026-11-18T11:07:00.000000000Z  2026-11-18T11:07:59.000000000Z     1 µs"
eq "table: a column not named as a time stays a number" \
	"$(g --format table sql 'SELECT max(ts) AS t FROM cuda_kernel')" \
	"                  t
-------------------
1795000999000000000"

# --- --time-format in every format --------------------------------------
# tf FORMAT TIMEFORMAT: one time and one duration, csv's CR dropped
tf() {
	TZ=Asia/Kolkata "$GPUREC" --data "$A" --format "$1" ${2:+--time-format "$2"} \
		sql 'SELECT min(ts) AS ts, 1250000 AS dur FROM cuda_kernel' 2>&1 | tr -d '\r'
}
ISO=2026-11-18T11:06:40.000000000Z LOC=2026-11-18T16:36:40.000000000+05:30
NS=1795000000000000000 SEC=1795000000.000000000
for f in csv tsv json jsonl; do
	case $f in
	csv) sep=,; hdr="ts,dur
" ;;
	tsv) sep=$'\t'; hdr="ts	dur
" ;;
	esac
	for t in "" iso local ns s; do
		case $t in
		""|ns) tv=$NS dv=1250000 q= ;;
		iso) tv=$ISO dv="1.25 ms" q='"' ;;
		local) tv=$LOC dv="1.25 ms" q='"' ;;
		s) tv=$SEC dv=0.001250000 q= ;;
		esac
		case $f in
		csv|tsv) want="$hdr$tv$sep$dv" ;;
		json) want="[{\"ts\":$q$tv$q,\"dur\":$q$dv$q}]" ;;
		jsonl) want="{\"ts\":$q$tv$q,\"dur\":$q$dv$q}" ;;
		esac
		eq "--format $f --time-format ${t:-(default: ns)}" "$(tf $f "$t")" "$want"
	done
done
for t in "" iso local ns s; do
	case $t in
	""|iso) tv=$ISO dv="1.25 ms" ;;
	local) tv=$LOC dv="1.25 ms" ;;
	ns) tv=$NS dv=1250000 ;;
	s) tv=$SEC dv=0.001250000 ;;
	esac
	eq "--format line --time-format ${t:-(default: iso)}" "$(tf line "$t")" \
		" ts = $tv
dur = $dv"
done
eq "--format table --time-format (default: iso)" "$(tf table)" \
	"ts                                  dur
------------------------------  -------
2026-11-18T11:06:40.000000000Z  1.25 ms"
eq "--format table --time-format iso" "$(tf table iso)" "$(tf table)"
eq "--format table --time-format local" "$(tf table local)" \
	"ts                                       dur
-----------------------------------  -------
2026-11-18T16:36:40.000000000+05:30  1.25 ms"
eq "--format table --time-format ns" "$(tf table ns)" \
	"                 ts      dur
-------------------  -------
1795000000000000000  1250000"
eq "--format table --time-format s" "$(tf table s)" \
	"                  ts          dur
--------------------  -----------
1795000000.000000000  0.001250000"
eq "report output follows the same rule (timeline: ts, offset_ns, dur)" \
	"$(g --format table report timeline --param at=$((S + 1))000000000 --param delta_ms=1000 | cut -c1-52 | sed 's/ *$//')" \
	"ts                              offset_ns  table
------------------------------  ---------  ---------
2026-11-18T11:06:40.000000000Z       -1 s  cuda_kern
2026-11-18T11:06:41.000000000Z       0 ns  cuda_kern
2026-11-18T11:06:42.000000000Z        1 s  cuda_kern"
eq "report timeline --format csv keeps ns" \
	"$(g --format csv report timeline --param at=$((S + 1))000000000 --param delta_ms=1000 | tr -d '\r' | cut -d, -f1,2,7)" \
	"ts,offset_ns,dur
${S}000000000,-1000000000,1000
$((S + 1))000000000,0,1000
$((S + 2))000000000,1000000000,1000"
user_error "bad --time-format" "bad --time-format 'utc': expected iso, local, ns or s" \
	--data "$A" --time-format utc sql 'SELECT 1'
user_error "--local with another --time-format" "--local is --time-format local: not with --time-format ns" \
	--data "$A" --local --time-format ns sql 'SELECT 1'
user_error "--time-format on status" "--time-format applies to sql, report, tables, schema and shell only" \
	--data "$A" --time-format iso status

# --- iso(), ts(), dur() in SQL ------------------------------------------
eq "iso(), dur(), ts() on every connection" \
	"$(g --format csv sql "SELECT iso(min(ts)) AS a, dur(max(ts) - min(ts)) AS b, ts('2026-11-18T11:06:40Z') AS c, ts('@1795000000.5') AS d, dur(1250000.4) AS e, iso('x') AS f FROM cuda_kernel" | tr -d '\r')" \
	"a,b,c,d,e,f
2026-11-18T11:06:40.000000000Z,16m 39s,1795000000000000000,1795000000500000000,1.25 ms,"
eq "ts() in a WHERE clause" \
	"$(g --format csv sql "SELECT count(*) FROM cuda_kernel WHERE ts >= ts('2026-11-18T11:15:00Z')" | tr -d '\r' | tail -1)" 500
eq "ts() of local time (TZ=Asia/Kolkata)" \
	"$(TZ=Asia/Kolkata g --format csv sql "SELECT ts('2026-11-18 16:45') - ts('2026-11-18T11:15:00Z')" | tr -d '\r' | tail -1)" 0
now=$(date +%s)
got=$(g --format csv sql "SELECT ts('-2h') / 1000000000" | tr -d '\r' | tail -1)
d=$((got - (now - 7200)))
if [ "$d" -ge 0 ] && [ "$d" -le 5 ]; then ok "ts('-2h') is two hours before now"
else bad "ts('-2h')" "$got vs $((now - 7200))"; fi
user_error "ts() of no time: one line" \
	"SQL error: ts('soon'): not a time (expected RFC 3339, a local date and time, @epoch, today, or a span ago like 2h)" \
	--data "$A" --format csv sql "SELECT ts('soon')"

# --- every --since form ---------------------------------------------------
# n ARGS…: count of launches in the window
n() { "$GPUREC" --data "${DATA:-$A}" --format csv "$@" sql 'SELECT count(*) FROM cuda_kernel' 2>"$T/err" | tr -d '\r' | tail -1; }
eq "--since RFC 3339 Z" "$(n --since 2026-11-18T11:15:00Z)" 500
eq "--since RFC 3339 with offset" "$(n --since 2026-11-18T16:45:00+05:30)" 500
eq "--since RFC 3339 without seconds" "$(n --since 2026-11-18T11:15Z)" 500
eq "--since local \"2026-11-18 16:45\" (TZ=Asia/Kolkata)" "$(TZ=Asia/Kolkata n --since '2026-11-18 16:45')" 500
eq "--since local \"2026-11-18 16:45:30\"" "$(TZ=Asia/Kolkata n --since '2026-11-18 16:45:30')" 470
eq "--since local, another TZ (Europe/Berlin, +01:00)" "$(TZ=Europe/Berlin n --since '2026-11-18 12:15')" 500
eq "--until a date alone: its local midnight (before the recording)" "$(TZ=Asia/Kolkata n --until 2026-11-18)" 0
eq "--since a date alone: its local midnight" "$(TZ=Asia/Kolkata n --since 2026-11-18)" 1000
eq "--since @epoch" "$(n --since @1795000100)" 900
eq "--since @epoch.fraction" "$(n --since @1795000100.5)" 899
eq "--until RFC 3339" "$(n --until 2026-11-18T11:06:49Z)" 10

# Relative forms need a recording near now: 24 launches 10 min apart,
# the first 3 h 55 min before now.
now=$(date +%s)
R="$T/recent"
synth --data "$R" --events 24 --interval 600000000000 --start "$(( (now - 14100) ))000000000" --host alpha
# want_since EPOCH: launches at or after EPOCH, from their known times
want_since() { local k c=0; for k in $(seq 0 23); do [ $((now - 14100 + 600 * k)) -ge "$1" ] && c=$((c + 1)); done; echo $c; }
eq "--since -2h" "$(DATA=$R n --since -2h)" 12
eq "--since 2h (ago)" "$(DATA=$R n --since 2h)" 12
eq "--since '2h ago'" "$(DATA=$R n --since '2h ago')" 12
eq "--since 1h30m" "$(DATA=$R n --since 1h30m)" 9
eq "--since '1h 30min'" "$(DATA=$R n --since '1h 30min')" 9
eq "--since now" "$(DATA=$R n --since now)" 0
eq "--until now" "$(DATA=$R n --until now)" 24
eq "--until +1h" "$(DATA=$R n --until +1h)" 24
eq "--since today (local midnight)" "$(DATA=$R n --since today)" "$(want_since "$(date -d 'today 00:00' +%s)")"
eq "--since yesterday" "$(DATA=$R n --since yesterday)" "$(want_since "$(date -d 'yesterday 00:00' +%s)")"
eq "--since tomorrow" "$(DATA=$R n --since tomorrow)" 0
user_error "--since after --until: one line, exit 1" \
	"--since 2026-11-18T11:15:00Z (2026-11-18T11:15:00.000000000Z) is after --until 2026-11-18T11:10:00Z (2026-11-18T11:10:00.000000000Z)" \
	--data "$A" --since 2026-11-18T11:15:00Z --until 2026-11-18T11:10:00Z sql 'SELECT 1'
user_error "--since today after --until yesterday" \
	"--since today ($("$GPUREC" --data "$A" --format csv sql "SELECT iso(ts('today'))" | tr -d '\r' | tail -1)) is after --until yesterday ($("$GPUREC" --data "$A" --format csv sql "SELECT iso(ts('yesterday'))" | tr -d '\r' | tail -1))" \
	--data "$A" --since today --until yesterday sql 'SELECT 1'
user_error "bad --since" \
	"bad --since 'soon': expected a time like 2h, -1h30m, today, yesterday, \"2026-11-25 10:00\" (local), 2026-11-25T10:00:00Z or @1795611544" \
	--data "$A" --since soon sql 'SELECT 1'

# --- --no-header, tsv -----------------------------------------------------
Q='SELECT pid, count(*) AS n FROM cuda_kernel GROUP BY pid ORDER BY pid LIMIT 2'
eq "--no-header: table" "$(g --format table --no-header sql "$Q")" "$(g --format table sql "$Q" | tail -n +3)"
eq "--no-header: csv" "$(g --format csv --no-header sql "$Q")" "$(g --format csv sql "$Q" | tail -n +2)"
eq "--no-header: tsv" "$(g --format tsv --no-header sql "$Q")" "$(g --format tsv sql "$Q" | tail -n +2)"
user_error "--no-header with json" "--no-header applies to table, csv and tsv, not json" \
	--data "$A" --format json --no-header sql 'SELECT 1'
eq "tsv: tabs, newlines, CRs and backslashes escaped; NULL empty" \
	"$(g --format tsv sql "SELECT 'a' || char(9) || 'b' AS x, 'l1' || char(10) || 'l2' || char(13) AS y, 'c:\\d' AS z, NULL AS w")" \
	$'x\ty\tz\tw\na\\tb\tl1\\nl2\\r\tc:\\\\d\t'
eq "tsv: rows of a report" "$(g --format tsv report top-kernels --param limit=1 | head -1)" \
	"launches	pct	shapes	shape	launches_per_s	kernel"

# --- -o FILE ----------------------------------------------------------------
mkdir "$T/o"
g -o "$T/o/r.csv" sql "$Q"; rc=$?
eq "sql -o FILE: exit 0, csv (no terminal), the rows of stdout" "$rc $(cat "$T/o/r.csv")" "0 $(g --format csv sql "$Q")"
g -o "$T/o/k.tsv" --format tsv report top-kernels --param limit=2; rc=$?
eq "report -o FILE --format tsv" "$rc $(cat "$T/o/k.tsv")" "0 $(g --format tsv report top-kernels --param limit=2)"
user_error "-o refuses to overwrite" "$T/o/r.csv exists (--force replaces it)" \
	--data "$A" -o "$T/o/r.csv" sql 'SELECT 1 AS other'
eq "-o refused: the file is untouched" "$(cat "$T/o/r.csv")" "$(g --format csv sql "$Q")"
g -o "$T/o/r.csv" --force sql 'SELECT 1 AS other'; rc=$?
eq "-o --force replaces it" "$rc $(tr -d '\r' <"$T/o/r.csv")" "0 other
1"
# A query that fails on its 501st row: nothing is placed, the old file stays.
FAILQ="SELECT ts, CASE WHEN ts >= ts('2026-11-18T11:15:00Z') THEN ts('bad') END AS x FROM cuda_kernel"
"$GPUREC" --data "$A" -o "$T/o/r.csv" --force sql "$FAILQ" >/dev/null 2>"$T/err"; rc=$?
eq "-o: a query failing mid-way exits 1 and keeps the old file" "$rc $(tr -d '\r' <"$T/o/r.csv")" "1 other
1"
"$GPUREC" --data "$A" -o "$T/o/new.csv" sql "$FAILQ" >/dev/null 2>"$T/err"; rc=$?
eq "-o: ... and writes no new file, no temporary left" "$rc $(ls -A "$T/o" | tr '\n' ' ')" "1 k.tsv r.csv "
user_error "-o on a directory with --force" "$T/o is not a regular file: --force replaces only those" \
	--data "$A" -o "$T/o" --force sql 'SELECT 1'
user_error "-o on status" "-o applies to sql, report and export only" --data "$A" -o "$T/o/s" status

# --- no escape codes off a terminal -----------------------------------------
g --format table sql "SELECT char(27) || '[31mred' AS v, ts FROM cuda_kernel LIMIT 1" >"$T/esc"
eq "piped table: no ESC byte, even from data" "$(grep -c $'\e' "$T/esc") $(sed -n 3p "$T/esc" | cut -c1-11)" '0 \x1b[31mred'

# --- on a terminal: tmux, 80x24 -----------------------------------------------
if ! command -v tmux >/dev/null; then
	bad "tmux" "not installed (apt install tmux): the terminal checks need it"
	finish; exit
fi
# term NAME CMD: runs CMD in a fresh 80x24 tmux window; its screen (joined
# lines with -J) lands in $T/NAME.screen once CMD ends.
term() {
	local name=$1 cmd=$2
	tmux -u -L "$TMUX_SOCK" new-session -d -s "$name" -x 80 -y 24 \
		"env -u COLUMNS -u PAGER -u LESS -u GPUREC_PAGER LC_ALL=C.UTF-8 $cmd; echo __END__ \$?; sleep 60"
	for _ in $(seq 300); do
		tmux -L "$TMUX_SOCK" capture-pane -p -t "$name" >"$T/$name.screen"
		grep -q '^__END__' "$T/$name.screen" && break
		sleep 0.1
	done
	tmux -L "$TMUX_SOCK" capture-pane -p ${3:+-J} -t "$name" >"$T/$name.screen"
	tmux -L "$TMUX_SOCK" kill-session -t "$name"
}
# fitw N: stdin's lines as N columns show them: a longer one cut to N - 1
# code points and "…"
fitw() { python3 -c '
import sys
n = int(sys.argv[1])
for l in sys.stdin.read().splitlines():
    print(l if len(l) <= n else l[:n - 1] + "\u2026")' "$1"; }
# The table as a pipe gets it, whole, and what 80 columns make of it.
g --format table report top-kernels --param limit=10 >"$T/full"
fitw 80 <"$T/full" >"$T/fit80"
if [ "$(awk 'length($0) > 80' "$T/full" | wc -l)" -ge 3 ]; then ok "top-kernels has lines over 80 columns to cut"
else bad "top-kernels over 80 columns" "$(awk '{ print length($0) }' "$T/full" | tr '\n' ' ')"; fi
term fit "$GPUREC --data $A --no-pager report top-kernels --param limit=10"
eq "tty, --no-pager: the table, each line cut to 80 columns ending in …" \
	"$(grep -v '^__END__' "$T/fit.screen" | sed '/^$/d')" "$(cat "$T/fit80")"
eq "tty: exit 0" "$(grep '^__END__' "$T/fit.screen")" "__END__ 0"
longest=$(grep -v '^__END__' "$T/fit.screen" | wc -L)
eq "tty: the longest line is 80 columns" "$longest" 80
term cols "COLUMNS=60 $GPUREC --data $A --no-pager report top-kernels --param limit=10"
eq "tty: \$COLUMNS=60 wins over the terminal's width" \
	"$(grep -v '^__END__' "$T/cols.screen" | sed '/^$/d')" \
	"$(fitw 60 <"$T/full")"
# (3 rows: each line wraps over 3 of the 24)
term wide "$GPUREC --data $A --no-pager --wide report top-kernels --param limit=3" join
eq "tty, --wide: nothing cut" "$(grep -v '^__END__' "$T/wide.screen" | sed '/^$/d')" \
	"$(g --format table report top-kernels --param limit=3)"

# With the pager: less (LESS=FRSX) shows the first screen and waits.
g --format table report top-kernels --param limit=60 | fitw 80 >"$T/fit80long"
tmux -u -L "$TMUX_SOCK" new-session -d -s pg -x 80 -y 24 \
	"env -u COLUMNS -u PAGER -u LESS -u GPUREC_PAGER LC_ALL=C.UTF-8 $GPUREC --data $A report top-kernels --param limit=60; echo __END__ \$?; sleep 60"
for _ in $(seq 100); do
	tmux -L "$TMUX_SOCK" capture-pane -p -t pg >"$T/pg.screen"
	grep -q '^:' "$T/pg.screen" && break
	sleep 0.1
done
eq "pager: the first screen, header first, 23 lines of table and less's prompt" \
	"$(head -23 "$T/pg.screen")$(sed -n 24p "$T/pg.screen")" "$(head -23 "$T/fit80long"):"
if grep -q '^__END__' "$T/pg.screen"; then bad "pager waits" "the command ended under it"
else ok "pager: waits for a key while the table is longer than the screen"; fi
tmux -L "$TMUX_SOCK" send-keys -t pg q
for _ in $(seq 100); do
	tmux -L "$TMUX_SOCK" capture-pane -p -t pg >"$T/pg.screen"
	grep -q '^__END__' "$T/pg.screen" && break
	sleep 0.1
done
eq "pager: q quits it, and gpurec" "$(grep '^__END__' "$T/pg.screen")" "__END__ 0"
tmux -L "$TMUX_SOCK" kill-session -t pg
term short "$GPUREC --data $A report top-kernels --param limit=3"
eq "pager: a table that fits one screen prints and returns (less -F)" \
	"$(grep -v '^__END__' "$T/short.screen" | sed '/^$/d')$(grep '^__END__' "$T/short.screen")" \
	"$(head -5 "$T/fit80")__END__ 0"
term cat "GPUREC_PAGER=cat $GPUREC --data $A report top-kernels --param limit=60"
eq "GPUREC_PAGER=cat: no pager, the end of the table on screen" \
	"$(grep -B1 '^__END__' "$T/cat.screen" | head -1)" "$(tail -1 "$T/fit80long")"

finish
