#!/usr/bin/env bash
# daemon.sh - gpurecd with every probe family off (no root, no BPF): it
# still opens the store, writes status.json and seals on its --duration.
# Checks the status file stays valid JSON for a data directory whose name
# holds a quote, a backslash and a tab, and that gpurec status reads it;
# and that a MANIFEST line torn by a crash is cut off by the next run.
# Env: GPUREC, GPURECD, SYNTH (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
SYNTH=${SYNTH:-build/gpurec-synth}
GPURECD=${GPURECD:-build/gpurecd}
T=$(mktemp -d /tmp/gpurec-daemon.XXXXXX)
trap 'chattr -R -i "$T" 2>/dev/null; rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }

D=$T/$'odd "name\\ with\ttab'
"$GPURECD" --config /dev/null --data "$D" --no-cuda --no-sched --no-io \
	--duration 1 --flush-interval 100 >"$T/log" 2>&1
eq "gpurecd with no probe family records and exits 0" "$?" 0
eq "status.json is JSON, its segment path the directory's" \
	"$(python3 -c 'import json, os, sys
s = json.load(open(sys.argv[1]))
print(s["state"], os.path.dirname(s["segment"]) == sys.argv[2])' "$D/status.json" "$D" 2>&1)" \
	"stopped True"
eq "gpurec status reads it" \
	"$("$GPUREC" --data "$D" --format json status 2>&1 |
	   python3 -c 'import json, sys; print(json.load(sys.stdin)["dirs"][0]["recorder"]["state"])' 2>&1)" \
	"stopped"

# A crash in the middle of a MANIFEST append leaves a line without its
# newline: the next writer (the store's, here gpurec-synth's) cuts it off
# before it appends its own.
M=$T/m
"$SYNTH" --data "$M" --events 1000 >/dev/null 2>&1
printf 'seal 20261123T000000.000000000Z.seg sha256=0123' >>"$M/MANIFEST"
"$SYNTH" --data "$M" --events 1000 >"$T/log2" 2>&1
eq "the next writer exits 0 and says it cut the 47 bytes" \
	"$? $(grep -c 'removed a torn last line (47 bytes' "$T/log2")" "0 1"
SEAL='^seal [0-9TZ.]+\.seg sha256=[0-9a-f]{64} prev=(-|[0-9a-f]{64}) start=[0-9]+ end=[0-9]+ events=1000 bytes=[0-9]+ host=[^ ]+ seq=[12] at=[0-9]+ lh=[0-9a-f]{64}$'
LINE='^(seal|delete|start|stop|anchor) .* lh=(-|[0-9a-f]{64})$'
eq "the MANIFEST: two whole seal lines, every line whole, the torn one gone" \
	"$(grep -cE "$SEAL" "$M/MANIFEST") $(grep -vcE "$LINE" "$M/MANIFEST") $(grep -c 'sha256=0123$' "$M/MANIFEST")" "2 0 0"
"$GPUREC" --data "$M" verify >"$T/verify" 2>&1
eq "gpurec verify: the chain holds" "$?" 0
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
