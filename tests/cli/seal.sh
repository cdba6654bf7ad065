#!/usr/bin/env bash
# seal.sh - `gpurec seal-setup`: the verification key it prints, the key
# file it installs (mode, owner, form), its refusals (an existing key, a
# planted symlink, bad values), and the one-line errors with exit 1.  The
# key's cryptography is tests/unit/test_fss.c's; this is the command.
# Root for the ownership cases (a directory another user owns); they are
# skipped when not root, except under CI=true, where that is a failure.
# Env: GPUREC (binary under test).
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
T=$(mktemp -d /tmp/gpurec-seal.XXXXXX)
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
# user_error NAME PATTERN ARGS...: exit 1, one line on stderr with PATTERN,
# nothing on stdout.
user_error() {
	local name=$1 pat=$2; shift 2
	"$GPUREC" "$@" >"$T/out" 2>"$T/err"; local rc=$?
	if [ $rc -ne 1 ]; then bad "$name" "exit $rc, want 1 ($(head -c 200 "$T/err"))"; return; fi
	if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$name" "want one line: $(cat "$T/err")"; return; fi
	if [ -s "$T/out" ]; then bad "$name" "stdout: $(cat "$T/out")"; return; fi
	grep -q -- "$pat" "$T/err" && ok "$name" || bad "$name" "message [$(cat "$T/err")] lacks [$pat]"
}
VKEY_RE='^gpurec-fss1-[0-9a-f]{64}-[0-9]+-[0-9]+$'
KEY_RE='^gpurec-fss 1 start=[0-9]{19} interval=[0-9]{19} epoch=[0-9]{19} key=[0-9a-f]{64} id=[0-9a-f]{16}$'

# --- a fresh directory -------------------------------------------------
D=$T/rec
mkdir "$D"
before=$(date +%s)
"$GPUREC" seal-setup --data "$D" >"$T/out" 2>"$T/err"
eq "seal-setup: exit 0" "$?" 0
after=$(date +%s)
vkey=$(cat "$T/out")
eq "stdout: one line, the verification key" \
	"$(wc -l <"$T/out") $(grep -cE "$VKEY_RE" "$T/out")" "1 1"
IFS=- read -r _ _ seed start iv <<<"$vkey"
eq "the key's interval: 900 s by default" "$iv" 900
if [ "$start" -ge "$before" ] && [ "$start" -le "$after" ]; then
	ok "the key's start is now ($start)"
else bad "the key's start" "$start not in $before..$after"; fi
eq "stderr: what to do with it, and how to verify" \
	"$(grep -c offline "$T/err") $(tr '\n' ' ' <"$T/err" | grep -c -- "gpurec verify --data $D --verification-key KEY")" "1 1"
eq "fss.key: a file, mode 0600, one link" \
	"$(stat -c '%F %a %h' "$D/fss.key")" "regular file 600 1"
eq "fss.key: one line in the recorder's form" \
	"$(wc -l <"$D/fss.key") $(grep -cE "$KEY_RE" "$D/fss.key")" "1 1"
eq "fss.key: epoch 0, start and interval as the key says" \
	"$(sed 's/.*start=\([0-9]*\) interval=\([0-9]*\) epoch=\([0-9]*\) .*/\1 \2 \3/' "$D/fss.key" |
	   awk '{ printf "%d %d %d", $1 / 1e9, $2 / 1e9, $3 }')" "$start 900 0"
eq "fss.key: epoch 0's key is the seed" \
	"$(sed 's/.* key=\([0-9a-f]*\) .*/\1/' "$D/fss.key")" "$seed"
eq "no temporary left" "$(ls -A "$D")" fss.key

# --- refusals ------------------------------------------------------------
cp "$D/fss.key" "$T/saved"
user_error "an existing key is refused" "fss.key exists: sealing is set up already (--force replaces" \
	seal-setup --data "$D"
eq "... and left as it was" "$(cmp -s "$D/fss.key" "$T/saved" && echo same)" same
"$GPUREC" seal-setup --data "$D" --force --interval 1h >"$T/out" 2>"$T/err"
eq "--force: exit 0, a new key, --interval 1h is 3600 s" \
	"$?|$(grep -cE "$VKEY_RE" "$T/out")|$(cmp -s "$D/fss.key" "$T/saved" || echo new)|$(sed 's/.*-//' "$T/out")" \
	"0|1|new|3600"
"$GPUREC" --force --interval 90 --data "$D" seal-setup >"$T/out" 2>/dev/null
eq "options before the command; --interval 90 is 90 s" "$(sed 's/.*-//' "$T/out")" 90

user_error "no such directory" "cannot open data directory $T/none: No such file or directory" \
	seal-setup --data "$T/none"
: >"$T/file"
user_error "a file, not a directory" "cannot open data directory $T/file: Not a directory" \
	seal-setup --data "$T/file"
for v in 0 1.5 500ms abc -1 ""; do
	user_error "--interval '$v' refused" "bad --interval '$v': expected whole seconds" \
		seal-setup --data "$D" --force --interval "$v"
done
user_error "--interval on another command" "--interval applies to seal-setup only" \
	--data "$D" --interval 1h status
user_error "--force on another command" "--force applies to sql -o, report -o, export and seal-setup only" \
	--data "$D" --force status
user_error "-o on seal-setup" "-o applies to sql, report and export only" seal-setup --data "$D" -o "$T/x"
user_error "arguments refused" "seal-setup takes no arguments" seal-setup --data "$D" now
user_error "two --data refused" "seal-setup takes one --data directory" \
	seal-setup --data "$D" --data "$T"

# --- planted links: never followed, never written through -----------------
P=$T/planted
mkdir "$P"
echo "victim" >"$T/victim"
ln -s "$T/victim" "$P/fss.key"
user_error "a symlink named fss.key counts as a key (refused)" "fss.key exists" \
	seal-setup --data "$P"
"$GPUREC" seal-setup --data "$P" --force >/dev/null 2>&1
eq "--force replaces the symlink itself; the target is untouched" \
	"$?|$(stat -c %F "$P/fss.key")|$(cat "$T/victim")" "0|regular file|victim"
ln -s "$T/victim" "$P/fss.key.tmp"
"$GPUREC" seal-setup --data "$P" --force >/dev/null 2>&1
eq "a planted fss.key.tmp symlink is removed, not followed" \
	"$?|$(cat "$T/victim")|$(ls -A "$P")" "0|victim|fss.key"

# --- ownership (root) ---------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	if [ "${CI:-}" = true ]; then bad "ownership checks" "not root"
	else echo "skip ownership checks: not root"; skipped=$((skipped + 1)); fi
else
	O=$T/owned
	mkdir "$O"
	chown nobody:nogroup "$O"
	chmod 0750 "$O"
	"$GPUREC" seal-setup --data "$O" >/dev/null 2>&1
	eq "root in a directory nobody owns: the key is nobody's, 0600" \
		"$?|$(stat -c '%U:%G %a' "$O/fss.key")" "0|nobody:nogroup 600"
	eq "... and its owner can read it" \
		"$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
		   head -c 10 "$O/fss.key")" "gpurec-fss"
	R=$T/rootdir
	mkdir "$R"
	chmod 0755 "$R"
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$GPUREC" seal-setup --data "$R" >"$T/out" 2>"$T/err"
	eq "another user in root's directory: exit 1, one line" \
		"$?|$(wc -l <"$T/err")|$(grep -c 'Permission denied' "$T/err")|$(ls -A "$R")" "1|1|1|"
	# A umask that takes the owner's bits: the key is 0600 anyway.
	U=$T/umask
	mkdir "$U"
	(umask 0377 && "$GPUREC" seal-setup --data "$U" >/dev/null 2>&1)
	eq "umask 0377: fss.key still 0600" "$(stat -c %a "$U/fss.key")" 600
fi

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
