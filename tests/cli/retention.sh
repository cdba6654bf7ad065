#!/usr/bin/env bash
# retention.sh - gpurecd's retention by age beside size (docs/storage.md,
# "Retention"), with every probe family off (no root, no BPF): gpurec-synth
# writes segments whose events are days or seconds old, gpurecd opens the
# directory with --max-age / --min-age, and the exact segments deleted and
# kept, the MANIFEST's delete lines, gpurecd's log, status.json and
# `gpurec status` are checked.
# Env: GPUREC, GPURECD, SYNTH (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
SYNTH=${SYNTH:-build/gpurec-synth}
GPURECD=${GPURECD:-build/gpurecd}
. "$(dirname "$0")/../wait.sh"
T=$(mktemp -d /tmp/gpurec-retention.XXXXXX)
gpid=
trap '[ -n "$gpid" ] && kill "$gpid" 2>/dev/null; chattr -R -i "$T" 2>/dev/null; rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }

NS=1000000000
# synth DIR N AGE_S: N segments of 1000 cuda_kernel events 1 us apart,
# the first AGE_S seconds ago.
synth() {
	"$SYNTH" --data "$1" --events $(($2 * 1000)) --rotate-every 1000 \
		--interval 1000 --start $((($(date +%s) - $3) * NS)) \
		>>"$T/synth.log" 2>&1 || bad "gpurec-synth" "$(tail -3 "$T/synth.log")"
}
# sealed DIR: the names of its MANIFEST's seal lines, in order.
sealed() { sed -n 's/^seal \([^ ]*\) .*/\1/p' "$1/MANIFEST" | tr '\n' ' '; }
# deleted DIR: "NAME reason=R" of its delete lines, in order.
deleted() { sed -n 's/^delete \([^ ]*\) \(reason=[^ ]*\) .*/\1 \2/p' "$1/MANIFEST" | tr '\n' ' '; }
segs() { (cd "$1" && ls -- *.seg 2>/dev/null) | tr '\n' ' '; }
# gpurecd DIR LOG ARGS...: no probe family, a second's recording.
gpurecd() {
	local d=$1 log=$2
	shift 2
	"$GPURECD" --config /dev/null --data "$d" --no-cuda --no-sched --no-io \
		--no-gpu --flush-interval 100 --keep-free 0 "$@" >"$log" 2>&1
}
# st DIR EXPR: a Python expression over status.json (s).
st() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1] + "/status.json"))
print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

# ---- max-age at start: the old segments go, in order, logged ------------
D=$T/age
synth "$D" 3 $((3 * 86400))
synth "$D" 2 3600
read -r -a all <<<"$(sealed "$D")"
eq "5 sealed segments written" "${#all[@]}" 5
gpurecd "$D" "$T/age.log" --duration 1 --max-age 2d --max-disk 1G
eq "gpurecd --max-age 2d exits 0" "$?" 0
eq "the 3 segments of 3-day-old events are deleted, reason max-age, in order" \
	"$(deleted "$D")" \
	"${all[0]} reason=max-age ${all[1]} reason=max-age ${all[2]} reason=max-age "
eq "the 2 of 1-hour-old events are kept, nothing else on disk" \
	"$(segs "$D")" "${all[3]} ${all[4]} "
eq "gpurecd logs each deletion with its reason" \
	"$(sed -n 's/^gpurecd: retention (\(max-age\)): deleted \([^ ]*\) (.*/\1 \2/p' "$T/age.log" | tr '\n' ' ')" \
	"max-age ${all[0]} max-age ${all[1]} max-age ${all[2]} "
eq "status.json counts them: segments_deleted, retention.deleted_max_age" \
	"$(st "$D" 's["segments_deleted"], s["retention"]["deleted_max_age"], s["retention"]["max_age_ns"], s["retention"]["over_budget"]')" \
	"(3, 3, $((2 * 86400 * NS)), None)"
eq "gpurec status: 3 deleted by retention, none missing" \
	"$("$GPUREC" --data "$D" --format json status | python3 -c 'import json, sys
s = json.load(sys.stdin)["dirs"][0]["segments"]; print(s["deleted"], s["missing"])')" "3 0"
eq "gpurec status (text): the budgets and the deletions for age" \
	"$("$GPUREC" --data "$D" status | grep 'retention:' | sed 's/^ *//')" \
	"retention: max-disk 1.0 GiB, keep-free none, max-age 2d00h, min-age none; 3 deleted for age"
"$GPUREC" --data "$D" verify >"$T/verify" 2>&1
eq "gpurec verify: the chain holds after the deletions" "$?" 0

# ---- max-age while recording: checked at each flush, not only at start --
# The newest event is 60 s old when gpurecd starts with --max-age 70s: it
# is kept at start (unless starting took 10 s) and deleted some 10 s
# later, by a flush.
D=$T/live
synth "$D" 1 60
read -r -a all <<<"$(sealed "$D")"
"$GPURECD" --config /dev/null --data "$D" --no-cuda --no-sched --no-io \
	--no-gpu --flush-interval 100 --keep-free 0 --max-disk 1G \
	--max-age 70s >"$T/live.log" 2>&1 &
gpid=$!
if wait_ready "$T/live.log" "$gpid" 10; then
	if wait_until 30 grep -q '^delete ' "$D/MANIFEST"; then
		ok "a segment that ages past max-age while recording is deleted"
	else
		bad "deletion while recording" "none after $WAITED"
	fi
	eq "... after gpurecd was ready (a flush's retention, not the start's)" \
		"$(grep -n -e 'gpurecd: ready' -e 'retention (max-age)' "$T/live.log" | sed 's/^[0-9]*://' | tr '\n' '|')" \
		"gpurecd: ready|gpurecd: retention (max-age): deleted ${all[0]} $(sed -n 's/.*(max-age): deleted [^ ]* \((.*\)/\1/p' "$T/live.log")|"
else
	bad "gpurecd ready" "not after ${WAITED:-?}: $(tail -3 "$T/live.log")"
fi
kill -TERM "$gpid"
wait "$gpid"
eq "gpurecd exits 0 on SIGTERM" "$?" 0
gpid=
eq "the MANIFEST logs it: reason max-age" "$(deleted "$D")" "${all[0]} reason=max-age "

# ---- min-age: kept over the size budget, and status says so ------------
D=$T/young
synth "$D" 4 60
read -r -a all <<<"$(sealed "$D")"
gpurecd "$D" "$T/young.log" --duration 1 --max-disk 400K --min-age 1h
eq "gpurecd --max-disk 400K --min-age 1h exits 0" "$?" 0
eq "over max-disk, min-age deletes nothing: all 4 segments kept" \
	"$(deleted "$D")|$(segs "$D")" "|${all[*]} "
eq "status.json: over_budget max-disk, min_age_ns, nothing deleted" \
	"$(st "$D" 's["retention"]["over_budget"], s["retention"]["min_age_ns"], s["segments_deleted"], s["disk_bytes"] > 400 * 1024')" \
	"('max-disk', $((3600 * NS)), 0, True)"
eq "gpurec status (text) says what min-age does to the budget" \
	"$("$GPUREC" --data "$D" status | grep -A1 'retention:' | sed 's/^ *//')" \
	"retention: max-disk 400.0 KiB, keep-free none, max-age none, min-age 1h00m
over max-disk until the oldest segment is 1h00m old (min-age)"
# The same directory without min-age: the oldest go until the sealed ones
# and the open one fit (4 x 180-193K and ~40K under 440K: the first 2 go;
# the size of a segment grows with each summary kind the writer keeps).
gpurecd "$D" "$T/young2.log" --duration 1 --max-disk 440K
eq "without min-age the oldest go for max-disk, status back under budget" \
	"$(deleted "$D")|$(st "$D" 's["retention"]["over_budget"]')" \
	"${all[0]} reason=max-disk ${all[1]} reason=max-disk |None"

# ---- min-age wins over max-age: old events, sealed just now -------------
D=$T/both
synth "$D" 2 $((3 * 86400))
gpurecd "$D" "$T/both.log" --duration 1 --max-age 2d --min-age 1h --max-disk 1G
eq "events 3 days old in segments sealed now: min-age 1h keeps them" \
	"$(deleted "$D")|$(st "$D" 's["retention"]["deleted_max_age"]')" "|0"

# ---- the options -------------------------------------------------------
"$GPURECD" --config /dev/null --check-config --max-age 30d --min-age 12h \
	>"$T/out" 2>&1
eq "--check-config prints max-age and min-age as given" \
	"$?|$(grep -e '^max-age' -e '^min-age' "$T/out" | tr '\n' '|')" \
	"0|max-age = 30d|min-age = 12h|"
gpurecd "$T/bad" "$T/bad.log" --max-age 1h --min-age 1d
eq "max-age shorter than min-age: exit 1, one line naming both" \
	"$?|$(cat "$T/bad.log")|$([ -e "$T/bad" ] && echo created)" \
	"1|gpurecd: max-age (3600s) is shorter than min-age (86400s): segments between the two could not be deleted|"
gpurecd "$T/bad" "$T/bad.log" --max-age soon
eq "a bad --max-age: exit 1, the value named" "$?|$(cat "$T/bad.log")" \
	"1|gpurecd: bad value 'soon' for --max-age: expected seconds or a duration like 15m"

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
