#!/usr/bin/env bash
# diskfull.sh - gpurecd on a full disk (issue 15, defects 2, 3 and 4).
#
# A small tmpfs mounted here holds the data directory; gpurecd records the
# host's scheduling (--sched-all: events without CUDA) into it.
#  A. Filled by a held file while recording: the writer first deletes the
#     oldest sealed segments (MANIFEST "delete ... reason=disk-full"), then
#     drops, counted as store:disk_full in status.json; once the file is
#     released recording resumes and the count lands in `drops` (gpurec
#     sql, status, report recording); a SIGTERM stop exits 0.
#  B. Started on a full tmpfs: gpurecd starts anyway, counts what it
#     cannot write, and records once space is freed.
#  C. Killed (-9) with a segment open, restarted on a full disk: it starts,
#     leaves the crashed segment valid, seals it once space is back.
# Never a 0-byte or invalid *.seg; `gpurec verify` passes at the end.
# The writer deletes sealed segments while min-age allows and only then
# drops; with min-age 0 it would recycle its oldest segments for ever.
# Root only (mount, BPF).  Env: GPUREC, GPURECD (binaries under test),
# TRIALS (repetitions, default 1), CI (true: never skip).
set -uo pipefail
GPUREC=${GPUREC:-build/asan/gpurec}
GPURECD=${GPURECD:-build/asan/gpurecd}
TRIALS=${TRIALS:-1}
. "$(dirname "$0")/lib.bash"
needs_root diskfull.sh "mount, BPF"
T=$(mktemp -d /tmp/gpurec-diskfull.XXXXXX)
KEEP=${KEEP:-}
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "$KEEP" ]; then echo "kept $T (mounted)"; return; fi
	for m in "$T"/fs*; do umount "$m" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

# Events to record however quiet the host: a process switching 20,000
# times a second (--sched-all records its run-queue waits), so segments
# of 256K fill in seconds.
SWITCH_LOAD=${SWITCH_LOAD:-build/switch-load}
if [ ! -x "$SWITCH_LOAD" ]; then
	bad "diskfull.sh" "no $SWITCH_LOAD (make $SWITCH_LOAD)"; finish
fi
"$SWITCH_LOAD" --rate 20000 --seconds 3600 >/dev/null 2>&1 &
pids+=($!)

json() { python3 -c 'import json, sys
try: s = json.load(open(sys.argv[1]))
except Exception: sys.exit(1)
v = eval(sys.argv[2], {"s": s})
print(v)' "$@" 2>/dev/null; }
nsealed() { local n; n=$(grep -c '^seal ' "$1/MANIFEST" 2>/dev/null); echo "${n:-0}"; }
sealed_at_least() { [ "$(nsealed "$1")" -ge "$2" ]; }
# Every *.seg is a non-empty SQLite database (a valid segment or none).
segs_valid() {
	local f bad=
	for f in "$1"/*.seg; do
		[ -e "$f" ] || continue
		if [ ! -s "$f" ] ||
		   [ "$(head -c 15 "$f")" != "SQLite format 3" ]; then
			bad+=" $(basename "$f")($(stat -c %s "$f"))"
		fi
	done
	echo "${bad# }"
}
fill() { dd if=/dev/zero of="$1" bs=64k 2>/dev/null; sync; }
start() { # DIR LOG [options]
	local dir=$1 log=$2; shift 2
	"$GPURECD" --config /dev/null --data "$dir" --no-cuda --sched-all \
		--flush-interval 200 "$@" >"$log" 2>&1 &
	pids+=($!)
	GPID=$!
}
stop() { # sends SIGTERM, sets RC to the exit status
	kill -TERM "$GPID" 2>/dev/null
	RC=0
	wait "$GPID" || RC=$?
}
store_drops() { "$GPUREC" --data "$1" sql "SELECT coalesce(sum(count), 0) FROM drops WHERE source = 'store:disk_full'" --format csv 2>/dev/null | tail -1 | tr -d '\r'; }

for trial in $(seq 1 "$TRIALS"); do
	echo "# trial $trial"
	# ---- A1: filled while recording: room made by retention ----------
	F=$T/fsA$trial; mkdir -p "$F"; mount -t tmpfs -o size=16m tmpfs "$F"
	D=$F/data1
	start "$D" "$T/logA1" --segment-size 256K --keep-free 1 --max-disk 1G
	waitfor 60 sealed_at_least "$D" 4 ||
		bad "A1: four sealed segments to start from" "$(nsealed "$D") sealed"
	fill "$F/hold"
	ev0=$(json "$D/status.json" 's["events"]')
	waitfor 60 sh -c "grep -q 'reason=disk-full' '$D/MANIFEST'"
	eq "A1: full disk: the oldest sealed segments deleted, logged as delete reason=disk-full" \
		"$(grep -c '^delete .* reason=disk-full' "$D/MANIFEST" | awk '{print ($1 > 0)}')" 1
	sleep 2
	ev1=$(json "$D/status.json" 's["events"]')
	eq "A1: the writer goes on recording on the full disk ($ev0 -> $ev1 events)" \
		"$([ "${ev1:-0}" -gt "${ev0:-0}" ] && echo yes)" yes
	stop; rc=$RC
	eq "A1: SIGTERM on the full disk: exit 0" "$rc" 0
	rm -f "$F/hold"
	"$GPUREC" --data "$D" verify >"$T/verifyA1" 2>&1
	eq "A1: gpurec verify passes" "$?" 0
	eq "A1: no 0-byte or invalid *.seg" "$(segs_valid "$D")" ""
	chattr -R -i "$D" 2>/dev/null; rm -rf "$D"

	# ---- A2: filled, nothing deletable (min-age), then released -------
	D=$F/data2
	start "$D" "$T/logA2" --segment-size 256K --keep-free 1 --max-disk 1G \
		--min-age 1h
	waitfor 60 sealed_at_least "$D" 2 ||
		bad "A2: two sealed segments to start from" "$(nsealed "$D") sealed"
	fill "$F/hold"
	waitfor 60 sh -c "[ \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"drops\"].get(\"store:disk_full\", 0) > 0)' '$D/status.json' 2>/dev/null)\" = True ]"
	lost=$(json "$D/status.json" 's["drops"].get("store:disk_full", 0)')
	eq "A2: status.json counts the loss as store:disk_full" "$([ "${lost:-0}" -gt 0 ] && echo yes)" yes
	eq "A2: min-age: no segment deleted" "$(grep -c '^delete ' "$D/MANIFEST")" 0
	st=$("$GPUREC" --data "$D" status 2>&1)
	eq "A2: gpurec status does not say 'drops none'" \
		"$(grep -c '^drops *none' <<<"$st")" 0
	eq "A2: gpurec status names store:disk_full" \
		"$(grep -c 'store:disk_full' <<<"$st" | awk '{print ($1 > 0)}')" 1
	js=$("$GPUREC" --data "$D" status --format json 2>/dev/null |
	     python3 -c 'import json, sys; print(json.load(sys.stdin)["dirs"][0]["recorder"]["drops"]["sources"].get("store:disk_full", 0) > 0)' 2>&1)
	eq "A2: gpurec status --format json has it" "$js" True
	eq "A2: no 0-byte or invalid *.seg on the full disk" "$(segs_valid "$D")" ""
	# Release the space: recording resumes, the count goes into drops.
	rm -f "$F/hold"
	ev0=$(json "$D/status.json" 's["events"]')
	waitfor 30 sh -c "[ \"\$(\"$GPUREC\" --data '$D' sql \"SELECT coalesce(sum(count),0) > 0 FROM drops WHERE source = 'store:disk_full'\" --format csv 2>/dev/null | tail -1 | tr -d '\\r')\" = 1 ]"
	n=$(store_drops "$D")
	eq "A2: released: the loss is a drops row store:disk_full" \
		"$([ "${n:-0}" -gt 0 ] && echo yes)" yes
	sleep 1
	ev1=$(json "$D/status.json" 's["events"]')
	eq "A2: released: recording resumes (events $ev0 -> $ev1)" \
		"$([ "${ev1:-0}" -gt "${ev0:-0}" ] && echo yes)" yes
	stop; rc=$RC
	eq "A2: SIGTERM after a full disk: exit 0" "$rc" 0
	n=$(store_drops "$D")
	lost=$(json "$D/status.json" 's["drops"].get("store:disk_full", 0)')
	eq "A2: every counted loss is in drops after the stop ($n of $lost)" "$n" "$lost"
	rep=$("$GPUREC" --data "$D" report recording --format csv 2>&1)
	eq "A2: report recording lists store:disk_full" \
		"$(grep -c '^drops,store:disk_full,' <<<"$rep")" 1
	"$GPUREC" --data "$D" verify >"$T/verifyA" 2>&1
	eq "A2: gpurec verify passes" "$?" 0
	eq "A2: no 0-byte or invalid *.seg" "$(segs_valid "$D")" ""
	[ -n "$KEEP" ] || umount "$F"

	# ---- B: started on a full disk --------------------------------------
	F=$T/fsB$trial; mkdir -p "$F"; mount -t tmpfs -o size=4m tmpfs "$F"
	D=$F/data; mkdir "$D"
	fill "$F/hold"
	start "$D" "$T/logB" --segment-size 256K --keep-free 1 --max-disk 1G
	sleep 3
	eq "B: gpurecd starts on a full disk (still running after 3 s)" \
		"$(kill -0 "$GPID" 2>/dev/null && echo running)" running
	eq "B: it says why it records nothing" \
		"$(grep -c 'no segment can be opened' "$T/logB" | awk '{print ($1 > 0)}')" 1
	eq "B: no *.seg left on the full disk, nor a 0-byte one" \
		"$(ls "$D" | grep -c '\.seg$')" 0
	rm -f "$F/hold"
	waitfor 20 sh -c "ls '$D' | grep -q '\.seg$'"
	sleep 1
	stop; rc=$RC
	eq "B: space freed: a segment, and a clean stop" "$rc" 0
	n=$(store_drops "$D")
	eq "B: the events lost before are a drops row store:disk_full" \
		"$([ "${n:-0}" -gt 0 ] && echo yes)" yes
	"$GPUREC" --data "$D" verify >"$T/verifyB" 2>&1
	eq "B: gpurec verify passes" "$?" 0
	[ -n "$KEEP" ] || umount "$F"

	# ---- C: kill -9, restart on a full disk ------------------------------
	F=$T/fsC$trial; mkdir -p "$F"; mount -t tmpfs -o size=8m tmpfs "$F"
	D=$F/data
	start "$D" "$T/logC1" --segment-size 4M --keep-free 1 --max-disk 1G
	waitfor 20 sh -c "ls '$D' 2>/dev/null | grep -q '\.seg-wal$'"
	sleep 1
	kill -9 "$GPID"; wait "$GPID" 2>/dev/null
	fill "$F/hold"
	start "$D" "$T/logC2" --segment-size 4M --keep-free 1 --max-disk 1G
	sleep 3
	eq "C: restarted on a full disk after kill -9: running" \
		"$(kill -0 "$GPID" 2>/dev/null && echo running)" running
	eq "C: the crashed segment is still valid" "$(segs_valid "$D")" ""
	rm -f "$F/hold"
	sleep 2
	stop; rc=$RC
	eq "C: space freed: a clean stop" "$rc" 0
	"$GPUREC" --data "$D" verify >"$T/verifyC" 2>&1; rc=$?
	eq "C: gpurec verify passes (the crashed segment sealed)" "$rc" 0
	[ "$rc" = 0 ] || { grep -v '^ok' "$T/verifyC" | head -5; tail -5 "$T/logC2"; }
	eq "C: no 0-byte or invalid *.seg" "$(segs_valid "$D")" ""
	[ -n "$KEEP" ] || umount "$F"
done
finish
