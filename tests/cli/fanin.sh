#!/usr/bin/env bash
# fanin.sh - a fleet's recordings read together (issue 20, point 3): three
# hosts' copies under one parent directory, read by repeated --data and
# by a glob that gpurec expands itself; the union of their rows, the
# straggler named across hosts, segments outside --since left unopened,
# and verify and status per host.  Every check compares exact text.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-fanin.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# qa ARGS…: csv rows without the header
qa() { "$GPUREC" --format csv "$@" 2>"$T/stderr" | tr -d '\r' | tail -n +2; }
# user_error NAME WANT ARGS…: exit 1, and stderr exactly one line WANT
user_error() {
	local name=$1 want=$2; shift 2
	"$GPUREC" "$@" >"$T/out" 2>"$T/err"; local rc=$?
	eq "$name" "$rc $(wc -l <"$T/err") $(cat "$T/err")" "1 1 gpurec: $want"
}

# One 6-rank NCCL job (bench/synth_nccl.h has the model) as three hosts
# record it, two ranks each: node0 ranks 0-1, node1 2-3, node2 4-5.  Rank
# 3 enters every collective exactly 120 ms after the others (no jitter).
# Per rank: 1 CommInitRank, 1 Broadcast (seq 0), 20 iterations of 10
# calls (6 collectives, seq 1..120), 1 CommDestroy = 203 rows; a segment
# is sealed every 100 events, so each host has 5 segments (406 rows).
# node2 is written first: the glob's order must not be the disk's.
S_NS=1795000000000000000
F="$T/fleet"
mkdir "$F"
for i in 2 0 1; do
	synth --data "$F/node$i" --table nccl --host "node$i" --start "$S_NS" \
		--nccl-ranks 6 --nccl-host-ranks "$((2 * i))-$((2 * i + 1))" \
		--nccl-iters 20 --nccl-late-rank 3 --nccl-late-ms 120 \
		--nccl-jitter-us 0 --rotate-every 100
done
echo "not a recording" >"$F/README"
REP=(--data "$F/node0" --data "$F/node1" --data "$F/node2")
GLOB=(--data "$F/node*")

per_host="SELECT group_concat(h, ' ') FROM (SELECT host || ':' || count(*) AS h FROM nccl GROUP BY host ORDER BY host)"
eq "repeated --data: rows per host, 2 ranks x 203" \
	"$(qa "${REP[@]}" sql "$per_host")" "node0:406 node1:406 node2:406"
eq "--data glob: the same rows per host" \
	"$(qa "${GLOB[@]}" sql "$per_host")" "node0:406 node1:406 node2:406"
all="SELECT host, rank, pid, ts, dur, op, seq, bytes FROM nccl ORDER BY host, ts, rank, op"
eq "--data glob: exactly the rows of repeated --data" \
	"$(qa "${GLOB[@]}" sql "$all" | md5sum)" "$(qa "${REP[@]}" sql "$all" | md5sum)"
eq "--data glob: exactly the union of each host read alone" \
	"$(qa "${GLOB[@]}" sql "$all" | md5sum)" \
	"$(for i in 0 1 2; do qa --data "$F/node$i" sql "$all"; done | md5sum)"
eq "--data glob: directories in sorted order, files ignored" \
	"$(qa "${GLOB[@]}" sql "SELECT group_concat(DISTINCT host) FROM segments")" \
	'"node0,node1,node2"'
eq "--data '$F/*': the README file is no directory" \
	"$(qa --data "$F/*" sql "$per_host")" "node0:406 node1:406 node2:406"
eq "--data glob and a plain directory: one host twice is read twice" \
	"$(qa --data "$F/node[01]" --data "$F/node1" sql "$per_host")" \
	"node0:406 node1:812"
eq "--data glob with --host: one host's rows" \
	"$(qa "${GLOB[@]}" --host node1 sql "SELECT count(*), min(rank), max(rank) FROM nccl")" \
	"406,2,3"
user_error "--data glob matching nothing: exit 1, one line" \
	"--data $F/nope* matches no directory" --data "$F/nope*" sql "SELECT 1"
user_error "--data glob matching only a file: exit 1, one line" \
	"--data $F/READ? matches no directory" --data "$F/READ?" sql "SELECT 1"
user_error "a missing plain --data is still named" \
	"cannot read data directory $F/node9: No such file or directory" \
	--data "$F/node9" sql "SELECT 1"

# --- the straggler, named across hosts ------------------------------------
cid=$(qa "${GLOB[@]}" sql "SELECT min(comm_id) FROM nccl")
eq "nccl-skew over the glob: node1 rank 3 first, exactly 120 ms late" \
	"$(qa "${GLOB[@]}" report nccl-skew | cut -d, -f1,2,4- | tr '\n' ' ')" \
	"node1,3,$cid,6/6,121,121,120.0,120.0,120.0,120.0 node0,0,$cid,6/6,121,0,0.0,0.0,0.0,0.0 node0,1,$cid,6/6,121,0,0.0,0.0,0.0,0.0 node1,2,$cid,6/6,121,0,0.0,0.0,0.0,0.0 node2,4,$cid,6/6,121,0,0.0,0.0,0.0,0.0 node2,5,$cid,6/6,121,0,0.0,0.0,0.0,0.0 "
eq "nccl-skew: repeated --data answers the same" \
	"$(qa "${REP[@]}" report nccl-skew | md5sum)" "$(qa "${GLOB[@]}" report nccl-skew | md5sum)"
eq "nccl-arrivals: all 121 collectives of 6/6 ranks, spread 120 ms, node1 rank 3 last" \
	"$(qa "${GLOB[@]}" report nccl-arrivals --param limit=1000 | cut -d, -f5,7-9,11 | sort | uniq -c | sed 's/^ *//')" \
	"121 6/6,120.0,node1,3,120.0"
# An iteration: 1000 ms plus 6 collectives x 120 ms waiting for rank 3
# (the median from its histogram: 1720.7, its bucket within 1/256).
eq "rank-pace: node1 rank 3 first, 1720 ms an iteration, waits least" \
	"$(qa "${GLOB[@]}" report rank-pace | head -2 | cut -d, -f1,2,5- | tr '\n' ' ')" \
	"node1,3,121,120,0,6,1720.7,34.87,0.9 node0,0,121,120,0,6,1720.7,34.87,42.6 "

# With the synth's arrival jitter every rank's median iteration differs by
# a little noise: rank-pace must still put the rank the others wait for
# (lowest nccl_pct) first, not the rank whose noise is slowest.
mkdir "$T/jit"
for i in 0 1 2; do
	synth --data "$T/jit/node$i" --table nccl --host "node$i" --start "$S_NS" \
		--nccl-ranks 24 --nccl-host-ranks "$((8 * i))-$((8 * i + 7))" \
		--nccl-iters 200 --nccl-step-ms 250 --nccl-late-rank 11 \
		--nccl-late-ms 30 --seed 1
done
eq "rank-pace with jitter: node1 rank 11 first, 24 ranks at one pace" \
	"$(qa --data "$T/jit/*" report rank-pace | cut -d, -f1,2 | head -1) $(qa --data "$T/jit/*" report rank-pace | cut -d, -f10 | cut -d. -f1 | sort | uniq -c | tr -s ' ')" \
	"node1,11  24 139"
eq "nccl-skew with jitter: node1 rank 11 first" \
	"$(qa --data "$T/jit/*" report nccl-skew | head -1 | cut -d, -f1,2)" "node1,11"
eq "nccl-arrivals with jitter: node1 rank 11 last into all 1201 collectives" \
	"$(qa --data "$T/jit/*" report nccl-arrivals --param limit=2000 | cut -d, -f5,8,9 | sort | uniq -c | sed 's/^ *//')" \
	"1201 24/24,node1,11"

# --- pruning: a segment outside the window is not opened -------------------
# From 11:07:00 (S + 20 s): 9 of the 15 segments end at or after it.
in_window=$(qa "${GLOB[@]}" sql "SELECT count(*) FROM segments WHERE end_ts >= $((S_NS + 20000000000))")
eq "the window's segments per the manifests" "$in_window" 9
GPUREC_DEBUG_STATS=1 "$GPUREC" "${GLOB[@]}" --since 2026-11-18T11:07:00Z \
	--format csv sql "SELECT count(*) FROM nccl WHERE ts >= $((S_NS + 20000000000))" \
	>"$T/out" 2>"$T/err"
eq "--since over 3 hosts: only the window's 9 segments opened" \
	"$(tail -1 "$T/out" | tr -d "\r") $(grep -o 'segments_opened=[0-9]*' "$T/err")" \
	"$(qa "${GLOB[@]}" sql "SELECT count(*) FROM nccl WHERE ts >= $((S_NS + 20000000000))") segments_opened=9"
GPUREC_DEBUG_STATS=1 "$GPUREC" "${GLOB[@]}" --format csv \
	sql "SELECT count(*) FROM nccl" >"$T/out" 2>"$T/err"
eq "no window: all 15 opened" \
	"$(tail -1 "$T/out" | tr -d "\r") $(grep -o 'segments_opened=[0-9]*' "$T/err")" \
	"1218 segments_opened=15"

# The window check of every windowed query reads the segments table: from
# the manifests, sealed segments unopened, whatever the number of hosts.
GPUREC_DEBUG_STATS=1 "$GPUREC" "${GLOB[@]}" --since 2026-11-18T12:00:00Z \
	--format csv sql "SELECT 1" >"$T/out" 2>"$T/err"
eq "a window after the recording: said on stderr, no segment opened" \
	"$(grep -c 'lies outside the recording' "$T/err") $(grep -o 'segments_opened=[0-9]*' "$T/err")" \
	"1 segments_opened=0"
GPUREC_DEBUG_STATS=1 "$GPUREC" "${GLOB[@]}" --format csv \
	sql "SELECT count(*), sum(events), min(start_ts), count(DISTINCT host), count(sha256) FROM segments" \
	>"$T/out" 2>"$T/err"
eq "segments from the manifests: 15 rows, 1218 events, none opened" \
	"$(tail -1 "$T/out" | tr -d '\r') $(grep -o 'segments_opened=[0-9]*' "$T/err")" \
	"15,1218,$(qa "${GLOB[@]}" sql "SELECT min(ts) FROM nccl"),3,15 segments_opened=0"
GPUREC_DEBUG_STATS=1 "$GPUREC" "${GLOB[@]}" --format csv \
	sql "SELECT count(*), min(schema_version) FROM segments" >"$T/out" 2>"$T/err"
eq "segments' schema_version: each segment's own metadata, all 15 opened" \
	"$(tail -1 "$T/out" | tr -d '\r') $(grep -o 'segments_opened=[0-9]*' "$T/err")" \
	"15,1 segments_opened=15"

# --- verify and status, per host -------------------------------------------
"$GPUREC" "${GLOB[@]}" verify >"$T/out" 2>"$T/err"; rc=$?
eq "verify over the glob: a verdict line per host, exit 0" \
	"$rc $(grep -v '^note ' "$T/out" | tr '\n' '|')" \
	"0 ok   $F/node0 (host node0): 5 segments, 5 blocks, 0 problems|ok   $F/node1 (host node1): 5 segments, 5 blocks, 0 problems|ok   $F/node2 (host node2): 5 segments, 5 blocks, 0 problems|verify: all segments intact|"
# A copy gone bad in transit: one byte of one segment.
cp -a "$F/node1" "$T/node1-copy"
seg=$(ls "$T/node1-copy"/*.seg | sed -n 3p)
printf 'x' | dd of="$seg" bs=1 seek=30000 conv=notrunc status=none
"$GPUREC" "${GLOB[@]}" --data "$T/node1-copy" verify >"$T/out" 2>"$T/err"; rc=$?
eq "verify: the bad copy's host fails, the others hold, exit 1" \
	"$rc $(grep -E '^(ok|FAIL) ' "$T/out" | grep -v '\.seg:' | cut -d: -f1 | tr '\n' '|') $(cat "$T/err")" \
	"1 ok   $F/node0 (host node0)|ok   $F/node1 (host node1)|ok   $F/node2 (host node2)|FAIL $T/node1-copy (host node1)| gpurec: verify: 1 problem found"
eq "verify: the finding names the segment" \
	"$(grep -c "^FAIL $seg: SHA-256 mismatch" "$T/out")" 1
eq "verify --format json over the glob: 3 directories, 15 segments" \
	"$("$GPUREC" "${GLOB[@]}" --format json verify | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["ok"], d["dirs_checked"], d["segments_checked"], d["blocks_checked"])')" \
	"True 3 15 15"
"$GPUREC" "${GLOB[@]}" --data "$T/node1-copy" --format jsonl verify >"$T/out" 2>"$T/err"; rc=$?
eq "verify --format jsonl: dirs, a verdict per directory naming its host" \
	"$rc $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s:%s:%d:%d:%d" % (x["dir"].split("/")[-1], x["host"], x["segments"], x["blocks"], x["problems"]) for x in d["dirs"]))' "$T/out")" \
	"1 node0:node0:5:5:0 node1:node1:5:5:0 node2:node2:5:5:0 node1-copy:node1:5:5:1"
eq "verify --format jsonl of one directory: no dirs key, as before" \
	"$("$GPUREC" --data "$F/node0" --format jsonl verify | python3 -c 'import json,sys; print("dirs" in json.load(sys.stdin))')" \
	"False"
eq "status over the glob: each host's directory and segments, then the total" \
	"$("$GPUREC" "${GLOB[@]}" status | grep -E '^(data|host|segments|total) ' | tr -s ' ' | tr '\n' '|')" \
	"data $F/node0|host node0|segments 5: 5 sealed, 0 open|data $F/node1|host node1|segments 5: 5 sealed, 0 open|data $F/node2|host node2|segments 5: 5 sealed, 0 open|total 3 directories: 15 segments, 1218 events, 0 dropped, $(python3 -c 'import os, sys; print("%.1f" % (sum(os.path.getsize(f) for f in sys.argv[1:]) / 1024))' "$F"/node*/*.seg) KiB in segments|"

# --- a copy made as docs/fleet.md says: tar of sealed segments + MANIFEST ---
mkdir "$T/srv"
for i in 0 1 2; do
	mkdir "$T/srv/node$i"
	(cd "$F/node$i" && tar cf - MANIFEST ./*.seg) | tar xf - -C "$T/srv/node$i"
done
"$GPUREC" --data "$T/srv/*" verify >"$T/out" 2>"$T/err"; rc=$?
eq "tar copies verify per host" "$rc $(grep -c '^ok ' "$T/out") $(tail -1 "$T/out")" \
	"0 3 verify: all segments intact"
eq "tar copies answer as the originals" \
	"$(qa --data "$T/srv/*" report nccl-skew | md5sum)" "$(qa "${GLOB[@]}" report nccl-skew | md5sum)"

finish
