#!/usr/bin/env bash
# daemon.sh - gpurecd with every probe family off (no root, no BPF): it
# still opens the store, writes status.json and seals on its --duration.
# Checks the status file stays valid JSON for a data directory whose name
# holds a quote, a backslash and a tab, and that gpurec status reads it.
# Env: GPUREC, GPURECD (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
GPURECD=${GPURECD:-build/gpurecd}
T=$(mktemp -d /tmp/gpurec-daemon.XXXXXX)
trap 'chattr -R -i "$T" 2>/dev/null; rm -rf "$T"' EXIT
pass=0 fail=0
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
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
