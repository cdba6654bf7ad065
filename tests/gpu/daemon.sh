#!/usr/bin/env bash
# daemon.sh - on a GPU machine (the device tool): gpurecd's stop, restart
# gap, kill -9, CPU and peak RSS while NPROC PyTorch processes launch tiny
# kernels as fast as they can (issue 17).
#
# Run from the repository root: bash tests/gpu/daemon.sh [BIN_DIR]
# (BIN_DIR holds gpurecd and gpurec: make STATIC=1 B=carry/static all, then
# copy both to carry/gpu).  Results go to stdout and $OUT/daemon.txt.
#
#   1. gpurecd A starts; NPROC launchers (tests/gpu/launcher.py) run for
#      SECS s.  Over a 5 s window: A's CPU (utime+stime) and peak RSS.
#   2. Mid-run, a restart: SIGTERM to A (stop time), then gpurecd B on the
#      same data directory (start time to "ready").  The recorded hole is
#      the longest gap between consecutive launches of any launcher around
#      the restart; the launches not recorded are the launchers' own counts
#      minus the rows.
#   3. Once the launchers are done: SIGTERM to B with every probe still
#      attached (stop time, links and probes from its log).
#   4. gpurecd C starts while one launcher runs (its libraries attached)
#      and is killed with -9: the time until the kernel has reaped it.
set -uo pipefail
BIN=${1:-carry/gpu}
OUT=${OUT:-/tmp/gr-out}
NPROC=${NPROC:-8}
SECS=${SECS:-24}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gr-daemon.XXXXXX)
D=$W/data
ns() { date +%s%N; }
say() { echo "$*" | tee -a "$OUT/daemon.txt"; }
: >"$OUT/daemon.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
uname -r

start() { # LOG: gpurecd on $D, pid in $dpid, start->ready ms in $ready_ms
	local t0; t0=$(ns)
	"$BIN/gpurecd" --data "$D" --config /dev/null >"$1" 2>&1 &
	dpid=$!
	for _ in $(seq 600); do grep -q "gpurecd: ready" "$1" && break; sleep 0.02; done
	ready_ms=$((($(ns) - t0) / 1000000))
}
stop() { # SIG: signal $dpid and wait for it (not in a subshell: wait
	 # needs the parent); ms in $took_ms
	local t0; t0=$(ns)
	kill -"$1" "$dpid"; wait "$dpid" 2>/dev/null
	took_ms=$((($(ns) - t0) / 1000000))
}
q() { "$BIN/gpurec" --data "$D" --format csv sql "$1" | tail -1 | tr -d '\r'; }

# 1. Recording NPROC launchers.
start "$OUT/gpurecd-a.log"
say "A: ready in $ready_ms ms; $(grep -c ': attached ' "$OUT/gpurecd-a.log") files attached; $(grep 'probes attach as' "$OUT/gpurecd-a.log" | sed 's/.*cuda: //')"
for i in $(seq "$NPROC"); do
	python3 tests/gpu/launcher.py "$SECS" >"$W/l$i.json" 2>"$W/l$i.err" &
done
sleep 4
read -r -a s0 < <(cut -d' ' -f14,15 /proc/$dpid/stat); w0=$(ns)
sleep 5
read -r -a s1 < <(cut -d' ' -f14,15 /proc/$dpid/stat); w1=$(ns)
hz=$(getconf CLK_TCK)
cpu=$(awk -v t=$((s1[0] + s1[1] - s0[0] - s0[1])) -v hz="$hz" -v w=$((w1 - w0)) 'BEGIN {printf "%.1f", 100 * t / hz / (w / 1e9)}')
say "A: cpu ${cpu} % of one core over 5 s with $NPROC launchers; peak RSS $(awk '/VmHWM/ {print $2 / 1024}' /proc/$dpid/status) MiB"
say "A: RSS by kind (MiB): $(awk '/^(Rss|Anonymous|Shared_Clean|Private_Clean|Private_Dirty):/ {printf "%s %.1f  ", $1, $2 / 1024}' /proc/$dpid/smaps_rollup)"
say "A: status.json memory: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory"])' "$D/status.json")"

# 2. Restart in the middle of the run.
sleep 2
tsig=$(ns)
stop TERM
ms_a=$took_ms
start "$OUT/gpurecd-b.log"
tready=$(ns)
say "restart: A stopped in $ms_a ms ($(grep -o 'detaching .*' "$OUT/gpurecd-a.log")); B ready in $ready_ms ms; SIGTERM to B ready $(((tready - tsig) / 1000000)) ms"

# 3. The launchers finish; B stops with every probe attached.
for j in $(jobs -p); do [ "$j" = "$dpid" ] || wait "$j"; done
hwm_b=$(awk '/VmHWM/ {print $2 / 1024}' /proc/$dpid/status)
stop TERM
say "B: $(grep -o 'memory: .*' "$OUT/gpurecd-b.log")"
say "B: peak RSS $hwm_b MiB; stopped in $took_ms ms ($(grep -o 'detaching .*' "$OUT/gpurecd-b.log"); $(grep -o 'detached in .*' "$OUT/gpurecd-b.log"))"
say "drops by time from the restart's SIGTERM (ms): $("$BIN/gpurec" --data "$D" --format csv sql "SELECT (ts - $tsig) / 1000000, source, count FROM drops ORDER BY ts" | tail -n +2 | tr -d '\r' | tr '\n' ' ')"
say "drops: $("$BIN/gpurec" --data "$D" --format csv sql "SELECT source, sum(count) FROM drops GROUP BY 1" | tail -n +2 | tr -d '\r' | tr '\n' ' ')"

# Launches recorded against launched, and the restart's hole.
pids=$(python3 -c 'import json,sys; print(",".join(str(json.load(open(f))["pid"]) for f in sys.argv[1:]))' "$W"/l*.json)
launched=$(python3 -c 'import json,sys; print(sum(json.load(open(f))["launches"] for f in sys.argv[1:]))' "$W"/l*.json)
recorded=$(q "SELECT count(*) FROM cuda_kernel WHERE pid IN ($pids)")
lo=$((tsig - 2000000000)) hi=$((tready + 2000000000))
hole=$(q "SELECT max(ts - p) FROM (SELECT ts, lag(ts) OVER (PARTITION BY pid ORDER BY ts) AS p FROM cuda_kernel WHERE pid IN ($pids) AND ts BETWEEN $lo AND $hi)")
named=$(q "SELECT count(kernel) FROM cuda_kernel WHERE pid IN ($pids)")
say "launches: $launched launched, $recorded recorded ($((launched - recorded)) not, in the restart's hole), $named named; longest hole $(awk -v h="$hole" 'BEGIN {printf "%.3f", h / 1e9}') s"
say "B: $(grep -c 'runtime launch probes wait' "$OUT/gpurecd-b.log") processes waited for their stub files; $(grep -o 'read [0-9]* kernel registrations from the code of [^ ]*' "$OUT/gpurecd-b.log" | sort -u | tr '\n' ';')"
"$BIN/gpurec" --data "$D" report recording | tee -a "$OUT/daemon.txt"
"$BIN/gpurec" --data "$D" verify | tail -1 | tee -a "$OUT/daemon.txt"

# 4. kill -9.
D=$W/data.kill
python3 tests/gpu/launcher.py 12 >/dev/null 2>&1 & lp=$!
sleep 4 # warm: its libraries are mapped when C scans
start "$OUT/gpurecd-c.log"
n=$(grep -c ': attached ' "$OUT/gpurecd-c.log")
stop KILL
say "C: kill -9 -> reaped in $took_ms ms ($n files attached, $(sed -n 's/.*: attached \([0-9]*\) probes.*/\1/p' "$OUT/gpurecd-c.log" | awk '{s += $1} END {print s}') probes)"
wait "$lp"
chattr -R -i "$W" 2>/dev/null; rm -rf "$W"
