#!/usr/bin/env bash
# shell.sh - `gpurec shell` over a recording written by gpurec-synth:
# statements and dot commands piped in (exact rows, exact error lines, the
# exit status), then a person at a terminal, played through tmux: typing
# with a mistake fixed by the arrows, history, Ctrl-C on a line and on a
# running query, Ctrl-D, the history file, and the terminal's settings
# after the shell ends (by Ctrl-D and by SIGTERM mid-edit).
# Env: GPUREC, SYNTH (binaries under test).
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=${SYNTH:-build/gpurec-synth}
T=$(mktemp -d /tmp/gpurec-shell.XXXXXX)
# One tmux server per terminal session (a new server on the socket of one
# being killed can find it still exiting).
TMUX_SOCK=
cleanup() {
	local s
	for s in "$T"/tmux.*; do
		[ -S "$s" ] && tmux -S "$s" kill-server 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
# eq NAME GOT WANT
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }

S_NS=1795000000000000000   # 2026-11-18T11:06:40Z
A="$T/a"
# 1,000 launches 1 ms apart from 4 processes (41000, 41017, 41034, 41051).
"$SYNTH" --data "$A" --events 1000 --interval 1000000 --start "$S_NS" \
	--host alpha >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }

# shell_in INPUT [OPTIONS...]: the shell with INPUT on stdin; its stdout (CRs
# dropped) in $out, stderr in $err, status in $rc.
shell_in() {
	local input=$1
	shift
	printf '%s' "$input" | "$GPUREC" --data "$A" shell "$@" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(tr -d '\r' <"$T/out")
	err=$(cat "$T/err")
}

# --- piped: statements and dot commands ---------------------------------
shell_in $'.mode csv\nSELECT pid, count(*), min(ts) FROM cuda_kernel GROUP BY pid ORDER BY pid;\n'
eq ".mode csv, then a SELECT: its exact rows, status 0" "$out|$err|$rc" \
"pid,count(*),min(ts)
41000,250,$S_NS
41017,250,$((S_NS + 1000000))
41034,250,$((S_NS + 2000000))
41051,250,$((S_NS + 3000000))||0"

shell_in $'SELECT count(*)\n  FROM cuda_kernel\n WHERE pid = 41017;\n'
eq "a statement over three lines runs once it ends with ;" "$out|$rc" \
	$'count(*)\n250|0'

shell_in $'SELECT 1; SELECT 2;\nSELECT \'a;b\',\n 3;\n' --format csv
eq "two statements on a line; a ; inside quotes does not end one" "$out" \
	$'1\n1\n2\n2\n\'a;b\',3\na;b,3'

shell_in $'SELECT bogus FROM cuda_kernel;\nSELECT count(*) FROM cuda_kernel;\n'
eq "a bad statement: one error line; the next one still runs; status 1" \
	"$out|$err|$rc" \
	$'count(*)\n1000|gpurec: SQL error: no such column: bogus|1'

shell_in $'CREATE TABLE x(a);\nSELECT 5;\n'
eq "a write is refused as in gpurec sql, and the shell goes on" \
	"$out|$err|$rc" \
	$'5\n5|gpurec: refused: the recording is read-only: only SELECT (and WITH, EXPLAIN, reading PRAGMAs) may run|1'

shell_in $'SELECT 6;\nSELECT count(*) FROM cuda_kernel'
eq "at the end of input, a last statement without its ; runs" "$out|$rc" \
	$'6\n6\ncount(*)\n1000|0'

shell_in $'.tables\n'
eq ".tables: the tables, as gpurec tables lists them" "$out|$err|$rc" \
	"$("$GPUREC" --format csv tables | tr -d '\r')||0"
eq ".tables includes cuda_kernel" "$(grep -c '^cuda_kernel,' <<<"$out")" 1

shell_in $'.schema cuda_memset\n'
eq ".schema TABLE: its columns, types and meaning" \
	"$(cut -d, -f1,2 <<<"$out" | tr '\n' ' ')|$rc" \
	"column,type ts,INTEGER host,TEXT pid,INTEGER tid,INTEGER comm,TEXT dur,INTEGER api,TEXT bytes,INTEGER async,INTEGER stream,INTEGER ret,INTEGER |0"
shell_in $'.schema nosuch\n.schema\n'
eq ".schema of no table: one line; .schema alone: every table's columns" \
	"$err|$rc|$(head -1 <<<"$out")|$(grep -c '^segments,' <<<"$out")" \
	"gpurec: no table 'nosuch' (.tables lists them)|1|table,column,type,description|$("$GPUREC" schema segments --format csv | tail -n +2 | wc -l)"

shell_in $'.mode\n.mode json\nSELECT pid FROM cuda_kernel ORDER BY ts LIMIT 2;\n.mode line\nSELECT 7 AS seven;\n.mode\n' --format csv
eq ".mode shows and sets the output mode (json, line)" "$out|$rc" \
	"current output mode: csv
[{\"pid\":41000},
{\"pid\":41017}]
seven = 7
current output mode: line|0"
shell_in $'.mode xml\nSELECT 8;\n'
eq ".mode with an unknown mode: one line naming it and the modes" \
	"$err|$rc|$out" \
	"gpurec: bad mode 'xml': expected table, csv, json, jsonl, line or tsv|1|8
8"

# Rows print as in gpurec sql: times as ISO 8601 in line mode unless
# --time-format says, ns in tsv; -o is for sql and report, not the shell.
shell_in $'.mode line\nSELECT min(ts) AS ts, 1500000 AS dur_x FROM cuda_kernel;\n.mode tsv\nSELECT min(ts) AS ts FROM cuda_kernel;\n'
eq ".mode line shows times and durations; .mode tsv keeps ns" "$out|$rc" \
	"   ts = 2026-11-18T11:06:40.000000000Z
dur_x = 1.5 ms
ts
$S_NS|0"
shell_in $'.mode line\nSELECT min(ts) AS ts FROM cuda_kernel;\n' --time-format ns
eq "--time-format applies in the shell" "$out|$rc" "ts = $S_NS|0"
shell_in $'SELECT 1;\n' -o "$T/x.csv"
eq "-o does not apply to the shell" "$err|$rc" \
	"gpurec: -o applies to sql, report and export only|1"

shell_in $'.reports\n'
eq ".reports: the canned reports, as gpurec report list" "$out|$rc" \
	"$("$GPUREC" --format csv report list | tr -d '\r')|0"
eq ".reports names top-kernels" "$(grep -c '^top-kernels,' <<<"$out")" 1

shell_in $'.report recording\n'
eq ".report recording: the recording's events" \
	"$(grep -E '^(span|events),' <<<"$out")|$rc" \
	"span,alpha,0.999,2026-11-18T11:06:40.000000000Z .. 2026-11-18T11:06:40.999000000Z
events,cuda_kernel,1000,|0"
shell_in ".report timeline at=$((S_NS + 500000000)) delta_ms=2
"
eq ".report NAME KEY=VALUE: parameters bound (the 5 launches within 2 ms)" \
	"$(tail -n +2 <<<"$out" | cut -d, -f2 | tr '\n' ' ')|$rc" \
	"-2000000 -1000000 0 1000000 2000000 |0"
shell_in $'.report nosuch\n.report timeline bogus=1\n.report\n'
eq ".report: no such report, a parameter it lacks, no name: a line each" \
	"$err|$rc" \
	"gpurec: no report 'nosuch' (.reports lists them)
gpurec: report timeline takes no parameter 'bogus' (gpurec report list shows its parameters)
gpurec: usage: .report NAME [KEY=VALUE...]|1"

shell_in $'.frobnicate\nSELECT 9;\n'
eq "an unknown dot command: one line naming it; the shell goes on" \
	"$err|$out|$rc" \
	"gpurec: unknown command '.frobnicate' (.help lists them)|9
9|1"

shell_in $'.help\n'
eq ".help lists every dot command" \
	"$(cut -d' ' -f1 <<<"$out" | grep '^\.' | tr '\n' ' ')|$rc" \
	".tables .schema .mode .reports .report .help .quit |0"

shell_in $'SELECT 10;\n.quit\nSELECT 11;\n'
eq ".quit: nothing after it runs" "$out|$rc" $'10\n10|0'
shell_in $'SELECT 12;\n.exit\nSELECT 13;\n'
eq ".exit, the same" "$out|$rc" $'12\n12|0'

shell_in $'SELECT count(*) FROM cuda_kernel;\n' --pid 41034 --format csv
eq "--pid applies inside the shell as in gpurec sql" "$out" $'count(*)\n250'

shell_in $'SELECT 1;\n' extra
eq "shell takes no arguments: one line, status 1" "$err|$rc" \
	"gpurec: shell takes no arguments (it reads SQL from its input)|1"
shell_in '' --param x=1
eq "--param does not apply to shell" "$err|$rc" \
	"gpurec: --param and --raw apply to report only (in the shell: .report NAME KEY=VALUE)|1"
mkdir "$T/none"
printf 'SELECT 1;\n' | "$GPUREC" --data "$T/none" shell >/dev/null 2>"$T/err"
eq "no recording: one line, status 1" "$?|$(cat "$T/err")" \
	"1|gpurec: no recording in $T/none (no segment files)"

# --timeout applies to each statement, not the whole session, and not to
# the time spent waiting for input (here 3.5 s, past 1 s and the
# backstop's 2 s grace).
forever="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;"
(echo "$forever"; echo "SELECT 14;"; sleep 3.5; echo "SELECT 15;") |
	"$GPUREC" --data "$A" --timeout 1s shell >"$T/out" 2>"$T/err"
rc=$?
eq "--timeout ends one statement; the next runs; an idle shell is not ended" \
	"$(tr -d '\r' <"$T/out" | tr '\n' ' ')|$(cat "$T/err")|$rc" \
	"14 14 15 15 |gpurec: query timed out after 1s (--timeout)|1"

# --- at a terminal, through tmux ------------------------------------------
if ! command -v tmux >/dev/null; then
	if [ "${CI:-}" = true ]; then bad "tmux" "not installed (packaging/deps.sh)"
	else
		echo "skip the terminal checks: tmux is not installed"
		skipped=1
	fi
	echo "$pass passed, $fail failed, $skipped skipped"
	[ "$fail" -eq 0 ]
	exit
fi

tm() { tmux -S "$TMUX_SOCK" "$@"; }
# The screen, trailing blanks and blank lines dropped.
screen() {
	tm capture-pane -p -t sh 2>/dev/null | sed 's/ *$//' |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}
# The last line of the screen: the prompt and what is typed on it.
last() { screen | tail -1; }
# wait_last LINE / wait_line LINE: until the last line / some line of the
# screen is LINE exactly (10 s).  Returns 1 if it never comes.
wait_last() {
	for _ in $(seq 100); do
		[ "$(last)" == "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_line() {
	for _ in $(seq 100); do
		screen | grep -Fx -- "$1" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# typein TEXT: literal keys.  tmux takes an argument's trailing ';' as
# the end of its own command, '\;' as a ';'.
typein() {
	local t=$1
	[[ $t == *';' ]] && t="${t%;}\\;"
	tm send-keys -t sh -l -- "$t"
}
keys() { tm send-keys -t sh "$@"; }
P="gpurec>"

# The shell runs in a script that records the terminal's settings before
# and after, and the shell's status.
cat >"$T/term.sh" <<EOF
stty -g >"$T/stty.before"
sh -c 'echo \$\$ >"$T/pid"; exec env \$HIST_ENV "$GPUREC" --data "$A" --format csv shell'
echo "rc=\$?"
stty -g >"$T/stty.after"
sleep 600
EOF
# start_term [ENV]: the shell at a terminal, with ENV (NAME=VALUE, or
# -u NAME, as env(1) takes them; default XDG_STATE_HOME=$T/state).
start_term() {
	rm -f "$T/stty.before" "$T/stty.after" "$T/pid"
	[ -n "$TMUX_SOCK" ] && tm kill-server 2>/dev/null
	TMUX_SOCK=$T/tmux.$((${TMUX_SOCK##*.} + 1))
	tm new-session -d -s sh -x 100 -y 30 "HIST_ENV='${1:-XDG_STATE_HOME=$T/state}' bash $T/term.sh"
	wait_last "$P" || bad "the shell shows its prompt" "screen: [$(screen)]"
}

start_term
eq "a banner, then the prompt" "$(screen)" \
	"gpurec $("$GPUREC" --version | cut -d' ' -f2) shell: SQL over the recording. .help lists the dot commands; Ctrl-D leaves.
$P"

typein 'SELECT count(*) FXOM cuda_kernel;'
wait_last "$P SELECT count(*) FXOM cuda_kernel;"
keys Left Left Left Left Left Left Left Left Left Left Left Left Left Left Left
keys BSpace
typein R
wait_last "$P SELECT count(*) FROM cuda_kernel;"
eq "a mistake fixed with left arrow, backspace and insert" "$(last)" \
	"$P SELECT count(*) FROM cuda_kernel;"
keys Enter
wait_last "$P"
eq "Enter runs it: its row, then a new prompt" "$(screen | tail -4)" \
	"$P SELECT count(*) FROM cuda_kernel;
count(*)
1000
$P"

keys Up
wait_last "$P SELECT count(*) FROM cuda_kernel;"
eq "up arrow recalls the statement" "$(last)" \
	"$P SELECT count(*) FROM cuda_kernel;"
keys C-c
wait_last "$P"
eq "Ctrl-C drops the line: ^C, then an empty prompt" "$(screen | tail -2)" \
	"$P SELECT count(*) FROM cuda_kernel;^C
$P"
typein 'SELECT 16;'
keys Enter
wait_line 16
wait_last "$P"
eq "what is typed after Ctrl-C starts a new line" "$(screen | tail -4)" \
	"$P SELECT 16;
16
16
$P"

typein 'SELECT 17'
keys Enter
wait_last "   ...>"
eq "a statement without its ; continues on a '   ...>' prompt" "$(last)" "   ...>"
keys C-c
wait_last "$P"
typein 'SELECT 18;'
keys Enter
wait_line 18
wait_last "$P"
eq "Ctrl-C drops the pending statement too" "$(screen | tail -4)" \
	"$P SELECT 18;
18
18
$P"

typein 'junk junk'
keys C-w
wait_last "$P junk"
eq "Ctrl-W deletes the word before the cursor" "$(last)" "$P junk"
keys C-u
typein 'SELECT 1900;'
keys C-a Right Right Right Right Right Right Right C-k
typein '19;'
keys Home DC End
wait_last "$P ELECT 19;"
eq "Ctrl-U, Ctrl-A, right arrow, Ctrl-K, Home, Delete, End" "$(last)" \
	"$P ELECT 19;"
keys C-a
typein S
keys C-e
typein ' AS n'
keys Left Left Left Left Left BSpace
wait_last "$P SELECT 19 AS n"
eq "Ctrl-E; backspace mid-line takes the ;" "$(last)" "$P SELECT 19 AS n"
keys End
typein ';'
keys Enter
wait_line 19
wait_last "$P"
eq "the edited statement runs" "$(screen | tail -3 | head -2)" $'n\n19'

# Characters of several bytes and two columns: the cursor moves by
# character, so backspace takes one whole.
typein "SELECT 'héllo wörld 日本';"
keys Left Left Left BSpace
wait_last "$P SELECT 'héllo wörld 本';"
eq "left arrow and backspace over UTF-8 (two-column 日 deleted whole)" \
	"$(last)" "$P SELECT 'héllo wörld 本';"
keys Enter
wait_line 'héllo wörld 本'
wait_last "$P"
eq "the UTF-8 statement runs intact" "$(screen | tail -2 | head -1)" \
	'héllo wörld 本'

# Ctrl-C while a statement runs interrupts it, not the shell.  The key
# goes once the shell has given the terminal back (canonical mode again):
# the statement is running, and Ctrl-C is SIGINT, not a key.
typein "$forever"
keys Enter
tty=$(tm display -p -t sh '#{pane_tty}')
for _ in $(seq 100); do
	stty -F "$tty" -a | grep ' icanon' >/dev/null && break
	sleep 0.1
done
sleep 0.2
keys C-c
wait_line 'gpurec: SQL error: interrupted'
wait_last "$P"
eq "Ctrl-C during a query: it ends with one line, the prompt comes back" \
	"$(screen | tail -3)" \
	"^C
gpurec: SQL error: interrupted
$P"
typein '.mode line'
keys Enter
wait_last "$P"
typein 'SELECT 20 AS twenty;'
keys Enter
wait_line 'twenty = 20'
wait_last "$P"
eq "the shell goes on after the interrupt; dot commands at the prompt" \
	"$(screen | tail -2 | head -1)" "twenty = 20"

# Long lines scroll sideways: the cursor stays on the row.
# The prompt takes 8 of the 100 columns and the last stays empty: 91 for
# the text.
long="SELECT '$(printf 'x%.0s' $(seq 150))' AS w;"
typein "$long"
wait_last "$P ${long: -91}"
l=$(last)
eq "a line wider than the terminal shows its end, in 99 of 100 columns" \
	"${#l}|${l: -9}" "99|xx' AS w;"
keys C-a
wait_last "$P ${long:0:91}"
eq "Home scrolls back to its start" "$(last)" "$P ${long:0:91}"
keys C-c
wait_last "$P"

keys C-d
wait_last "rc=0"
eq "Ctrl-D on an empty line leaves, status 0" "$(last)" "rc=0"
sleep 0.3
eq "the terminal's settings are as before" \
	"$(cat "$T/stty.after" 2>&1)" "$(cat "$T/stty.before")"
H=$T/state/gpurec/history
eq "history in \$XDG_STATE_HOME/gpurec/history, mode 0600" \
	"$(stat -c %a "$H" 2>&1)" 600
eq "history: one line per statement and dot command, in order" \
	"$(cat "$H")" \
	"SELECT count(*) FROM cuda_kernel;
SELECT 16;
SELECT 18;
SELECT 19 AS n;
SELECT 'héllo wörld 本';
$forever
.mode line
SELECT 20 AS twenty;"

# The history comes back in the next shell; killed mid-edit, the shell
# gives the terminal back.
start_term
keys Up
wait_last "$P SELECT 20 AS twenty;"
eq "the next shell starts with the history" "$(last)" "$P SELECT 20 AS twenty;"
keys Up Up
wait_last "$P $forever"
eq "up arrow walks back through it" "$(last)" "$P $forever"
keys Down Down Down
wait_last "$P"
eq "down arrow past the newest returns to the line being typed" "$(last)" "$P"
typein 'SELECT 21'
wait_last "$P SELECT 21"
kill -TERM "$(cat "$T/pid")"
wait_last "rc=143"
eq "SIGTERM mid-edit: the shell ends by the signal" "$(last)" "rc=143"
sleep 0.3
eq "SIGTERM mid-edit: the terminal's settings are as before" \
	"$(cat "$T/stty.after" 2>&1)" "$(cat "$T/stty.before")"

# Without XDG_STATE_HOME: ~/.gpurec_history.
mkdir "$T/home"
start_term "-u XDG_STATE_HOME HOME=$T/home"
typein 'SELECT 22;'
keys Enter
wait_line 22
keys C-d
wait_last "rc=0"
eq "without XDG_STATE_HOME: the history in ~/.gpurec_history, mode 0600" \
	"$(stat -c %a "$T/home/.gpurec_history" 2>&1)|$(cat "$T/home/.gpurec_history")" \
	"600|SELECT 22;"

# A terminal that cannot edit (TERM=dumb): the prompt, lines as typed.
start_term "TERM=dumb XDG_STATE_HOME=$T/state"
typein 'SELECT 23;'
keys Enter
wait_line 23
wait_last "$P"
eq "TERM=dumb: a prompt, no editing; the statement runs" "$(screen | tail -4)" \
	"$P SELECT 23;
23
23
$P"
keys C-d
wait_last "rc=0"
eq "TERM=dumb: Ctrl-D leaves" "$(last)" "rc=0"

# No history where neither XDG_STATE_HOME nor HOME says where.
printf 'SELECT 1;\n' | env -u HOME -u XDG_STATE_HOME "$GPUREC" --data "$A" shell \
	>/dev/null 2>"$T/err"
eq "piped, without HOME: no history, no warning" "$?|$(cat "$T/err")" "0|"

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
