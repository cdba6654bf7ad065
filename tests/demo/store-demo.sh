#!/usr/bin/env bash
# store-demo.sh - shows the segment store and `gpurec` on a recording made
# of SYNTHETIC events (gpurec-synth writes them through the same store API
# the recorder uses).  It records nothing from this machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=$(mktemp -d /tmp/gpurec-demo.XXXXXX)
trap 'rm -rf "$D"' EXIT
G=build/gpurec
# Bold commands on a terminal only, as in demo.sh.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
else
	say() { printf '\n$ %s\n' "$*"; }
fi

echo "Writing synthetic events (1M kernel launches, 1M off-CPU intervals, 1M"
echo "block I/Os, then 2M more launches) into $D, host name 'synthetic'..."
build/gpurec-synth --data "$D" --events 1000000 --rotate-every 1000000 \
	--table cuda_kernel --table offcpu --table block_io >/dev/null 2>&1
build/gpurec-synth --data "$D" --events 2000000 --rotate-every 1000000 \
	--seed 2 >/dev/null 2>&1

say ls -l "$D"
ls -l "$D"
say gpurec --data "$D" sql "SELECT count(*) AS segments, sum(events), sum(bytes), round(sum(bytes)*1.0/sum(events), 2) AS bytes_per_event FROM segments"
$G --data "$D" --format table sql "SELECT count(*) AS segments, sum(events) AS events, sum(bytes) AS bytes, round(sum(bytes)*1.0/sum(events), 2) AS bytes_per_event FROM segments"
say gpurec --data "$D" sql "SELECT kernel, count(*) AS launches, median(dur) AS med_ns, percentile(dur, 99) AS p99_ns FROM cuda_kernel GROUP BY kernel ORDER BY launches DESC LIMIT 5"
$G --data "$D" --format table sql "SELECT substr(kernel, 1, 60) AS kernel, count(*) AS launches, median(dur) AS med_ns, percentile(dur, 99) AS p99_ns FROM cuda_kernel GROUP BY kernel ORDER BY launches DESC LIMIT 5"
say gpurec --data "$D" sql "SELECT state, count(*), sum(dur)/1e6 AS ms FROM offcpu GROUP BY state"
$G --data "$D" --format table sql "SELECT state, count(*) AS n, round(sum(dur)/1e6, 1) AS total_ms FROM offcpu GROUP BY state"
say gpurec --data "$D" --format json sql "SELECT dev, op, count(*), sum(bytes) FROM block_io GROUP BY 1, 2"
$G --data "$D" --format json sql "SELECT dev, op, count(*) AS n, sum(bytes) AS bytes FROM block_io GROUP BY 1, 2"
say gpurec --data "$D" verify
$G --data "$D" verify
SEG=$(ls "$D"/*.seg | sed -n 2p)
say "flip one byte in $(basename "$SEG"), then verify again"
chattr -i "$SEG" 2>/dev/null || true
chmod u+w "$SEG"
printf '\x00' | dd of="$SEG" bs=1 seek=100000 conv=notrunc status=none
$G --data "$D" verify || echo "(exit $? : verify found the change)"
