#!/usr/bin/env bash
# ncclfleet.sh - nccl-skew, nccl-arrivals and rank-pace from the C tables
# (query/nccl_fleet.c, issue 20) against their window-function SQL
# (--raw), over 8 hosts of one 64-rank job with a planted straggler: the
# whole recording, a window cut mid-collective at both ends, one host and
# one process (--host, --pid), a host missing from the fleet, a host whose
# job stopped early, rank-pace's per_iter, and a recording with no NCCL
# calls.  Every check compares exact text or exact
# counts, and each comparison first checks that it compares many rows.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-ncclfleet.XXXXXX)
cleanup() { chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# CSV lines end in CRLF (RFC 4180): compared as lines here.
g() { "$GPUREC" --format csv "$@" 2>>"$T/err" | tr -d '\r'; }

# One job of 64 ranks, 8 a host, 200 iterations 500 ms apart; rank 43
# (host5) enters every 10th collective 5 ms late.  The hosts share --seed
# and --start, so they agree on the collectives; several segments each.
for i in 0 1 2 3 4 5 6 7; do
	synth --data "$T/host$i" --host "host$i" --table nccl --nccl-ranks 64 \
		--nccl-host-ranks $((8 * i))-$((8 * i + 7)) --nccl-iters 200 \
		--nccl-step-ms 500 --nccl-late-rank 43 --nccl-late-ms 5 \
		--nccl-late-every 10 --seed 4 --start 2026-11-01T00:00:00Z \
		--rotate-every 4000
done
ALL=()
for i in 0 1 2 3 4 5 6 7; do ALL+=(--data "$T/host$i"); done
SEVEN=("${ALL[@]:0:14}")

# Compares a report read from the C tables with its --raw SQL: the same
# bytes, and at least @min rows.
same() {
	local name=$1 min=$2
	shift 2
	g "$@" >"$T/sum"
	g "$@" --raw >"$T/raw"
	local n=$(($(wc -l <"$T/raw") - 1))
	if [ "$n" -ge "$min" ] && cmp -s "$T/sum" "$T/raw"; then
		ok "$name: $n rows, the same as --raw"
	else
		bad "$name" "$n rows (want >= $min); $(diff "$T/sum" "$T/raw" | head -4)"
	fi
}

# 6 collectives an iteration and the Broadcast of the set-up: 1,201.
eq "the job: 64 ranks on 8 hosts, one communicator, 1,201 collectives" \
	"$(g "${ALL[@]}" sql "SELECT count(DISTINCT host || ':' || rank),
		count(DISTINCT comm_id), count(DISTINCT seq) FROM nccl
		WHERE op IN ('AllReduce', 'AllGather', 'ReduceScatter',
		             'Broadcast', 'Reduce', 'AllToAll')" | tail -1)" \
	"64,1,1201"

# --- the whole recording --------------------------------------------------
same "nccl-skew, 8 hosts" 64 "${ALL[@]}" report nccl-skew
# Rank 43 is 5 ms late in 121 of them (seq % 10 == 0): its p99 and max
# are the 5 ms planted (plus at most the 0.2 ms jitter, rounded away; the
# p99 is the midpoint of its histogram bucket, within 1/256: 4.997);
# the next rank's max is the on-time ranks' jitter.
eq "nccl-skew: rank 43 on host5 first, in all 1,201 collectives, 5 ms p99 (the histogram's) and max" \
	"$(g "${ALL[@]}" report nccl-skew | sed -n 2p | cut -d, -f1,2,5,6,9,10)" \
	"host5,43,64/64,1201,4.997,5.0"
eq "nccl-skew: the next rank's max lateness is the jitter, 0.2 ms" \
	"$(g "${ALL[@]}" report nccl-skew | sed -n 3p | cut -d, -f10)" "0.2"
same "nccl-arrivals, every collective" 1201 "${ALL[@]}" report nccl-arrivals \
	--param limit=100000
eq "nccl-arrivals: the 120 widest collectives end with rank 43" \
	"$(g "${ALL[@]}" report nccl-arrivals --param limit=120 |
		tail -n +2 | cut -d, -f8,9 | sort | uniq -c | sed 's/^ *//')" \
	"120 host5,43"

# --- a window that cuts collectives at both ends --------------------------
# Each collective's arrivals spread over 0.2 ms: a window from 0.1 ms
# after seq 60's first arrival to 0.1 ms after seq 600's sees both on
# fewer ranks, and they must not count for nccl-skew.
at() {
	local ns
	ns=$(g "${ALL[@]}" sql "SELECT min(ts) + 100000 FROM nccl
		WHERE seq = $1" | tail -1)
	echo "@${ns:0:10}.${ns:10}"
}
W=(--since "$(at 60)" --until "$(at 600)")
part=$(g "${ALL[@]}" "${W[@]}" sql "SELECT count(*) FROM (SELECT seq FROM nccl
	WHERE seq IS NOT NULL GROUP BY seq HAVING count(*) < 64)" | tail -1)
if [ "$part" -ge 1 ]; then ok "window: $part collectives cut by its edges"
else bad "window" "no collective cut by its edges"; fi
same "nccl-skew, window" 64 "${ALL[@]}" "${W[@]}" report nccl-skew
same "nccl-arrivals, window" 500 "${ALL[@]}" "${W[@]}" report nccl-arrivals \
	--param limit=100000

# --- one host, one process, a host missing ---------------------------------
same "nccl-skew --host host5" 8 "${ALL[@]}" --host host5 report nccl-skew
pid=$(g "${ALL[@]}" sql "SELECT pid FROM nccl WHERE host = 'host5' AND
	rank = 43 LIMIT 1" | tail -1)
# --pid warns that no process table names it (--table nccl writes none).
same "nccl-arrivals --pid (rank 43's)" 1201 "${ALL[@]}" --pid "$pid" \
	report nccl-arrivals --param limit=100000
grep -v "^gpurec: no process $pid in the recording" "$T/err" >"$T/err2"
mv "$T/err2" "$T/err"
same "nccl-skew, host7 missing" 56 "${SEVEN[@]}" report nccl-skew
same "nccl-arrivals, host7 missing" 1201 "${SEVEN[@]}" report nccl-arrivals \
	--param limit=100000
eq "host7 missing: every collective seen on 56 of 64 ranks" \
	"$(g "${SEVEN[@]}" report nccl-arrivals --param limit=100000 |
		tail -n +2 | cut -d, -f5 | sort -u)" "56/64"

# --- rank-pace -------------------------------------------------------------
same "rank-pace, 8 hosts" 64 "${ALL[@]}" report rank-pace
for n in 3 6; do
	same "rank-pace per_iter=$n" 64 "${ALL[@]}" report rank-pace \
		--param per_iter=$n
done
same "rank-pace, window" 64 "${ALL[@]}" "${W[@]}" report rank-pace
same "rank-pace --host host5" 8 "${ALL[@]}" --host host5 report rank-pace
# 6 collectives an iteration: the median gap between repeats of one call.
eq "rank-pace: 6 collectives an iteration, for every rank" \
	"$(g "${ALL[@]}" report rank-pace | tail -n +2 | cut -d, -f8 | sort -u)" "6"
# No rank is behind and all keep the same pace: the one the others wait
# for spends the least time inside NCCL calls.
eq "rank-pace: rank 43 first, none behind" \
	"$(g "${ALL[@]}" report rank-pace | sed -n 2p | cut -d, -f1,2,7)" \
	"host5,43,0"
# host7's job stopped 50 iterations early: its ranks are 300 seqs behind.
synth --data "$T/short7" --host host7 --table nccl --nccl-ranks 64 \
	--nccl-host-ranks 56-63 --nccl-iters 150 --nccl-step-ms 500 \
	--nccl-late-rank 43 --nccl-late-ms 5 --nccl-late-every 10 --seed 4 \
	--start 2026-11-01T00:00:00Z --rotate-every 4000
SHORT=("${SEVEN[@]}" --data "$T/short7")
same "rank-pace, host7 stopped early" 64 "${SHORT[@]}" report rank-pace
eq "rank-pace: host7's 8 ranks first, 300 seqs behind" \
	"$(g "${SHORT[@]}" report rank-pace | sed -n 2,9p | cut -d, -f1,7 | sort -u)" \
	"host7,300"
same "nccl-skew, host7 stopped early" 64 "${SHORT[@]}" report nccl-skew

# --- no NCCL calls ---------------------------------------------------------
synth --data "$T/none" --table cuda_kernel --events 1000 \
	--start 2026-11-01T00:00:00Z
for r in nccl-skew nccl-arrivals rank-pace; do
	eq "$r, no NCCL calls: the header alone, as --raw" \
		"$(g --data "$T/none" report $r | wc -l) $(g --data "$T/none" report $r --raw | wc -l)" \
		"1 1"
done

# --- bad input -------------------------------------------------------------
"$GPUREC" --data "$T/host0" sql "SELECT * FROM nccl_rank_skew(1)" \
	>"$T/out" 2>"$T/e"
eq "nccl_rank_skew takes no argument: exit 1, one line" \
	"$? $(wc -l <"$T/e")" "1 1"

"$GPUREC" --data "$T/host0" sql "SELECT * FROM nccl_rank_pace WHERE arg > 3" \
	>"$T/out" 2>"$T/e"
eq "nccl_rank_pace's argument is no filter: exit 1, one line" \
	"$? $(cat "$T/e")" "1 gpurec: SQL error: no query solution"

if [ -s "$T/err" ]; then bad "no warnings" "$(head -3 "$T/err")"; else ok "no warnings"; fi
# A host whose NCCL calls are all outside collectives (pipeline sends and
# receives, no seq) is interned after the collectives' names were renumbered
# (it overflowed the name array once), and one process driving 4 ranks of a
# communicator (ncclCommInitAll) has each seq 4 times, so its iteration
# pairs outnumber its calls (they overflowed a buffer sized by the calls).
# Both under ASan in CI, both equal to --raw.
S0=1793491200000000000
{
	for i in $(seq 0 199); do
		printf 'nccl\tts=%d\tpid=900\ttid=900\tcomm=python3\tdur=5000\top=%s\tbytes=4096\tpeer=1\trank=0\tnranks=2\tcomm_id=77\n' \
			$((S0 + i * 100000000)) "$([ $((i % 2)) = 0 ] && echo Send || echo Recv)"
	done
} >"$T/p2p.rows"
synth --data "$T/p2p" --host "a-p2p" --rows "$T/p2p.rows"
{
	for q in $(seq 1 120); do
		for r in 0 1 2 3; do
			printf 'nccl\tts=%d\tpid=950\ttid=%d\tcomm=python3\tdur=%d\top=AllReduce\tbytes=1048576\trank=%d\tnranks=4\tcomm_id=88\tseq=%d\n' \
				$((S0 + q * 50000000 + r * 1000 + (q % 3) * 7000)) $((950 + r)) $((20000 + r * 100)) $r $q
		done
	done
} >"$T/multi.rows"
synth --data "$T/multi" --host "b-multi" --rows "$T/multi.rows"
same "rank-pace with a host of sends and receives only" 64 "${ALL[@]}" --data "$T/p2p" report rank-pace
same "rank-pace, one process driving 4 ranks" 4 --data "$T/multi" report rank-pace
for n in 0 2; do
	same "rank-pace per_iter=$n, one process driving 4 ranks, beside the job" 68 \
		"${ALL[@]}" --data "$T/p2p" --data "$T/multi" report rank-pace --param per_iter=$n
done

# The C tables walk the nccl blocks, not through SQLite: an nccl block
# failing its checksum is skipped with the warnings --raw gives (one a
# read of the block: rank-pace reads the table twice), and the rows equal
# --raw's over the rest.
V="$T/badnccl"
cp -a "$T/host3" "$V"
chattr -R -i "$V" 2>/dev/null
seg=$(ls "$V"/*.seg | head -1)
python3 "$(dirname "$0")/flip_block.py" "$seg" 0 nccl ||
	{ bad "flip a block" "flip_block.py failed"; finish; exit 1; }
BAD=()
for i in 0 1 2 4 5 6 7; do BAD+=(--data "$T/host$i"); done
BAD+=(--data "$V")
# nccl-skew and rank-pace answer for that block from the records and
# arrivals kept beside it, which pass their own checksums: the rows of the
# recording before the flip, without a warning; --raw skips the block and
# warns.
g "${ALL[@]}" report nccl-skew >"$T/skew.good"
g "${ALL[@]}" report rank-pace >"$T/pace.good"
for r in skew pace; do
	rep=$([ $r = skew ] && echo nccl-skew || echo rank-pace)
	"$GPUREC" --format csv "${BAD[@]}" report $rep >"$T/bad.out" 2>"$T/bad.err"
	"$GPUREC" --format csv "${BAD[@]}" report $rep --raw >/dev/null 2>"$T/bad.rawerr"
	eq "$rep over a block failing its checksum: the rows from its arrivals" \
		"$(tr -d '\r' <"$T/bad.out" | cmp -s - "$T/$r.good" && echo same) $(wc -l <"$T/$r.good") $(wc -c <"$T/bad.err") $(grep -c "of nccl fails its checksum" "$T/bad.rawerr" | awk '{ print ($1 >= 1) }')" \
		"same 65 0 1"
done
# nccl-arrivals answers for that block from the records kept beside it,
# which pass their own checksum: the rows of the recording before the
# flip, where --raw, reading the calls, skips the block and warns.
"$GPUREC" --format csv "${BAD[@]}" report nccl-arrivals --param limit=100000 \
	>"$T/bad.out" 2>"$T/bad.err"
g "${ALL[@]}" report nccl-arrivals --param limit=100000 >"$T/good.out"
"$GPUREC" --format csv "${BAD[@]}" report nccl-arrivals --raw \
	--param limit=100000 >/dev/null 2>"$T/bad.rawerr"
eq "nccl-arrivals over a block failing its checksum: the rows from its records" \
	"$(tr -d '\r' <"$T/bad.out" | cmp -s - "$T/good.out" && echo same) $(wc -l <"$T/good.out") $(wc -c <"$T/bad.err") $(grep -c "of nccl fails its checksum" "$T/bad.rawerr")" \
	"same 1202 0 1"

# --- nccl-arrivals from the records kept per block (store/ncclcoll.h) ------
# Each host's nccl blocks have their collectives kept beside them, and
# nccl-arrivals reads those, not the calls: every block once for the
# spans, then only the blocks overlapping the widest (blocks_read 0).
nb=0
for i in 0 1 2 3 4 5 6 7; do
	for f in "$T"/host$i/*.seg; do
		nb=$((nb + $(sqlite3 "$f" "SELECT count(*) FROM blocks b JOIN nccl_coll c ON c.block = b.id AND c.crc = b.crc WHERE b.tbl = 'nccl'")))
	done
done
st=$(GPUREC_DEBUG_STATS=1 "$GPUREC" "${ALL[@]}" report nccl-arrivals 2>&1 >/dev/null |
	sed -n 's/.*nccl_coll_read=\([0-9]*\) blocks_read=\([0-9]*\).*/\2 \1/p')
read -r br cb <<<"$st"
eq "nccl-arrivals: every nccl block's records read, no block's calls ($nb blocks)" \
	"$br $([ "$nb" -ge 16 ] && [ "$cb" -gt "$nb" ] && [ "$cb" -le $((2 * nb)) ] && echo in)" "0 in"
# The same rows with the records gone (a segment older than them), gone
# from every other block, or not matching their block, or corrupt: each
# such block is read from its calls.
for how in drop half crc payload; do
	D=()
	for i in 0 1 2 3 4 5 6 7; do
		cp -a "$T/host$i" "$T/$how$i"
		chattr -R -i "$T/$how$i" 2>/dev/null
		j=0
		for f in "$T/$how$i"/*.seg; do
			case $how in
			drop) sql="DROP TABLE nccl_coll" ;;
			half) sql="DELETE FROM nccl_coll WHERE (block + $j) % 2 = 0" ;;
			crc) sql="UPDATE nccl_coll SET crc = crc + 1 WHERE (block + $j) % 3 = 0" ;;
			payload) sql="UPDATE nccl_coll SET payload = CAST(zeroblob(length(payload)) AS BLOB) WHERE (block + $j) % 3 = 1" ;;
			esac
			sqlite3 "$f" "$sql"
			j=$((j + 1))
		done
		D+=(--data "$T/$how$i")
	done
	st=$(GPUREC_DEBUG_STATS=1 "$GPUREC" --format csv "${D[@]}" report nccl-arrivals --param limit=100000 2>"$T/r.err" |
		tr -d '\r' | cmp - "$T/good.out" && echo same)
	eq "nccl-arrivals, records $how: the same rows as with them, blocks read from their calls" \
		"$st $(grep -c 'blocks_read=[1-9]' "$T/r.err")" "same 1"
	eq "nccl-skew, records $how: the same rows as with them" \
		"$(g "${D[@]}" report nccl-skew | cmp - "$T/skew.good" && echo same)" "same"
	eq "rank-pace, records $how: the same rows as with them" \
		"$(g "${D[@]}" report rank-pace | cmp - "$T/pace.good" && echo same)" "same"
done

# --- nccl-skew from the arrivals kept per block (store/ncclcoll.h) ---------
# The first walk reads every block's records, the second its arrivals:
# no block's calls.
for rep in nccl-skew rank-pace; do
	st=$(GPUREC_DEBUG_STATS=1 "$GPUREC" "${ALL[@]}" report $rep 2>&1 >/dev/null |
		sed -n 's/.*nccl_coll_read=\([0-9]*\) blocks_read=\([0-9]*\).*/\2 \1/p')
	eq "$rep: every nccl block's records or arrivals read twice, no block's calls" \
		"$st" "0 $((2 * nb))"
done
# The same rows with the arrivals gone, gone from every other block, not
# matching their block, or corrupt: such a block is read from its calls.
for how in drop half crc payload; do
	D=()
	for i in 0 1 2 3 4 5 6 7; do
		rm -rf "$T/a$how$i"
		cp -a "$T/host$i" "$T/a$how$i"
		chattr -R -i "$T/a$how$i" 2>/dev/null
		j=0
		for f in "$T/a$how$i"/*.seg; do
			case $how in
			drop) sql="DROP TABLE nccl_arr" ;;
			half) sql="DELETE FROM nccl_arr WHERE (block + $j) % 2 = 0" ;;
			crc) sql="UPDATE nccl_arr SET crc = crc + 1 WHERE (block + $j) % 3 = 0" ;;
			payload) sql="UPDATE nccl_arr SET payload = CAST(zeroblob(length(payload)) AS BLOB) WHERE (block + $j) % 3 = 1" ;;
			esac
			sqlite3 "$f" "$sql"
			j=$((j + 1))
		done
		D+=(--data "$T/a$how$i")
	done
	for r in skew pace; do
		rep=$([ $r = skew ] && echo nccl-skew || echo rank-pace)
		st=$(GPUREC_DEBUG_STATS=1 "$GPUREC" --format csv "${D[@]}" report $rep 2>"$T/a.err" |
			tr -d '\r' | cmp - "$T/$r.good" && echo same)
		eq "$rep, arrivals $how: the same rows as with them, blocks read from their calls" \
			"$st $(grep -c 'blocks_read=[1-9]' "$T/a.err")" "same 1"
	done
done
# One walk a thread over whole directories: any number of threads, the
# same rows.
for n in 1 2 3 5; do
	eq "nccl-skew with GPUREC_SCAN_THREADS=$n: the same rows" \
		"$(GPUREC_SCAN_THREADS=$n "$GPUREC" --format csv "${ALL[@]}" report nccl-skew | tr -d '\r' | cmp - "$T/skew.good" && echo same)" "same"
	eq "rank-pace with GPUREC_SCAN_THREADS=$n: the same rows" \
		"$(GPUREC_SCAN_THREADS=$n "$GPUREC" --format csv "${ALL[@]}" report rank-pace | tr -d '\r' | cmp - "$T/pace.good" && echo same)" "same"
done
# One host's segments in two directories (copied off in two batches): the
# threads' parts are whole directories, so that host's blocks would meet
# in two of them; they are read again on one thread, with --raw's rows.
rm -rf "$T/h5a" "$T/h5b"
mkdir -p "$T/h5a" "$T/h5b"
n5=$(ls "$T"/host5/*.seg | wc -l)
i=0
for f in "$T"/host5/*.seg; do
	[ $i -lt $((n5 / 2)) ] && cp "$f" "$T/h5a/" || cp "$f" "$T/h5b/"
	i=$((i + 1))
done
SPLIT=("${ALL[@]:0:10}" --data "$T/h5a" --data "$T/h5b" "${ALL[@]:12}")
GPUREC_SCAN_THREADS=2 same "nccl-skew, host5 in two directories, 2 threads" 64 "${SPLIT[@]}" report nccl-skew
GPUREC_SCAN_THREADS=2 same "rank-pace, host5 in two directories, 2 threads" 64 "${SPLIT[@]}" report rank-pace
# Blocks of 13 calls cut most collectives of a host (8 ranks) in two: a
# host's share (its first entry, how many ranks it had) is whole only
# once the blocks are put together; a rank's lateness within its host
# shows it.  --raw reads the calls; the arrivals must agree, over the
# whole and over windows whose edges cut blocks.
for i in 0 1 2; do
	synth --data "$T/cut$i" --host "cut$i" --table nccl --nccl-ranks 24 \
		--nccl-host-ranks $((8 * i))-$((8 * i + 7)) --nccl-iters 40 \
		--nccl-step-ms 50 --nccl-late-rank 9 --nccl-late-ms 3 \
		--nccl-late-every 4 --seed 9 --start 2026-11-01T00:00:00Z \
		--flush-every 13
done
CUT=(--data "$T/cut0" --data "$T/cut1" --data "$T/cut2")
same "nccl-skew, collectives cut across blocks" 24 "${CUT[@]}" report nccl-skew
same "nccl-skew, collectives cut across blocks, a window" 24 "${CUT[@]}" \
	--since 2026-11-01T00:00:00.4Z --until 2026-11-01T00:00:01.3Z report nccl-skew
GPUREC_SCAN_THREADS=1 same "nccl-skew, collectives cut across blocks, one thread" 24 \
	"${CUT[@]}" report nccl-skew
same "rank-pace, collectives cut across blocks" 24 "${CUT[@]}" report rank-pace
same "rank-pace, collectives cut across blocks, a window" 24 "${CUT[@]}" \
	--since 2026-11-01T00:00:00.4Z --until 2026-11-01T00:00:01.3Z report rank-pace
# A rank 400 ms behind its host in every other collective, 100 ms apart,
# in blocks of 13 calls: its call lands blocks after its host's others
# (up to 20), with other collectives' blocks between.  The first walk
# counts each host's records of a collective (past 15 aside), the second
# gathers them all, keeping only those in flight (2,400 collectives).
for i in 0 1; do
	synth --data "$T/trail$i" --host "trail$i" --table nccl --nccl-ranks 16 \
		--nccl-host-ranks $((8 * i))-$((8 * i + 7)) --nccl-iters 400 \
		--nccl-step-ms 100 --nccl-late-rank 3 --nccl-late-ms 400 \
		--nccl-late-every 2 --seed 5 --start 2026-11-01T00:00:00Z \
		--flush-every 13
done
TRAIL=(--data "$T/trail0" --data "$T/trail1")
for n in 1 2; do
	GPUREC_SCAN_THREADS=$n same "nccl-skew, a rank blocks behind its host, $n threads" 16 \
		"${TRAIL[@]}" report nccl-skew
	GPUREC_SCAN_THREADS=$n same "rank-pace, a rank blocks behind its host, $n threads" 16 \
		"${TRAIL[@]}" report rank-pace
done
# 24 ranks a host in blocks of one call: a host's share of a collective in
# 24 blocks (past the 15 counted in 4 bits).
for i in 0 1; do
	synth --data "$T/wide$i" --host "wide$i" --table nccl --nccl-ranks 48 \
		--nccl-host-ranks $((24 * i))-$((24 * i + 23)) --nccl-iters 10 \
		--nccl-step-ms 100 --seed 5 --start 2026-11-01T00:00:00Z \
		--flush-every 1
done
same "nccl-skew, a host's share of a collective in 24 blocks" 48 \
	--data "$T/wide0" --data "$T/wide1" report nccl-skew
eq "nccl-skew, a rank blocks behind its host: late by 200 ms on average, within its host too" \
	"$(g "${TRAIL[@]}" report nccl-skew --param limit=1 | tail -1 | awk -F, '{ d = $8 - $11; print $1, $2, ($8 >= 200 && $8 < 202.5), (d >= 0 && d < 0.3) }')" \
	"trail0 3 1 1"

# Blocks of the job's sends and receives alone have no records: read from
# their calls, once a walk.
nr=0 np=0
for f in "$T"/cut*/*.seg; do
	nr=$((nr + $(sqlite3 "$f" "SELECT count(*) FROM nccl_arr")))
	np=$((np + $(sqlite3 "$f" "SELECT count(*) FROM blocks b WHERE tbl = 'nccl' AND NOT EXISTS (SELECT 1 FROM nccl_coll c WHERE c.block = b.id)")))
done
st=$(GPUREC_DEBUG_STATS=1 "$GPUREC" "${CUT[@]}" report nccl-skew 2>&1 >/dev/null |
	sed -n 's/.*nccl_coll_read=\([0-9]*\) blocks_read=\([0-9]*\).*/\2 \1/p')
eq "nccl-skew, collectives cut across blocks: $nr blocks from their records and arrivals" \
	"$st $([ "$nr" -gt 100 ] && echo many)" "$((2 * np)) $((2 * nr)) many"
# A segment whose dictionary is gone: each of its blocks is skipped with
# --raw's warning, from its records as from its calls (the first walk
# must not count what the second cannot name).
cp -a "$T/host2" "$T/nodict"
chattr -R -i "$T/nodict" 2>/dev/null
f=$(ls "$T/nodict"/*.seg | head -1)
sqlite3 "$f" "DROP TABLE dict"
ND=("${ALL[@]:0:4}" --data "$T/nodict" "${ALL[@]:6}")
"$GPUREC" --format csv "${ND[@]}" report nccl-arrivals --param limit=100000 >"$T/nd.out" 2>"$T/nd.err"; rc=$?
"$GPUREC" --format csv "${ND[@]}" report nccl-arrivals --param limit=100000 --raw >"$T/nd.raw" 2>"$T/nd.rawerr"
eq "nccl-arrivals, a segment without its dictionary: --raw's rows and warning" \
	"$rc $(cmp -s "$T/nd.out" "$T/nd.raw" && echo same) $(wc -l <"$T/nd.out") $(grep -c "$f: dictionary" "$T/nd.err") $(cmp -s "$T/nd.err" "$T/nd.rawerr" && echo same)" \
	"0 same 1202 1 same"
"$GPUREC" --format csv "${ND[@]}" report nccl-arrivals --param limit=30 >"$T/nd.out" 2>/dev/null
"$GPUREC" --format csv "${ND[@]}" report nccl-arrivals --param limit=30 --raw >"$T/nd.raw" 2>/dev/null
eq "nccl-arrivals, a segment without its dictionary: --raw's 30 widest" \
	"$(cmp -s "$T/nd.out" "$T/nd.raw" && echo same) $(wc -l <"$T/nd.out")" "same 31"
st=$(GPUREC_DEBUG_STATS=1 "$GPUREC" --data "$T/drop0" --data "$T/drop1" \
	report nccl-arrivals 2>&1 >/dev/null |
	sed -n 's/.*nccl_coll_read=\([0-9]*\) blocks_read=\([0-9]*\).*/\2 \1/p')
read -r br cb <<<"$st"
eq "records gone: the blocks read from their calls" \
	"$([ "$br" -gt 0 ] && echo read) $cb" "read 0"

# The C tables allocate through SQLite, so --max-memory caps them as it caps
# SQLite's sorts.  nccl-arrivals and nccl-skew keep 16 and 20 bytes a
# collective (their pages of spans), rank-pace a few words a rank and
# process: over 1M calls they answer under a 16M ceiling, as without it.
synth --data "$T/big" --host big --table nccl --nccl-ranks 64 \
	--nccl-iters 2000 --nccl-step-ms 500 --seed 4 \
	--start 2026-11-01T00:00:00Z
"$GPUREC" --format csv --data "$T/big" --max-memory 16M report nccl-arrivals \
	>"$T/big.capped" 2>"$T/big.err"; rc=$?
"$GPUREC" --format csv --data "$T/big" report nccl-arrivals >"$T/big.out"
eq "nccl-arrivals over 1M calls under --max-memory 16M: answered, as without it" \
	"$rc $(wc -c <"$T/big.err") $(wc -l <"$T/big.out") $(cmp -s "$T/big.capped" "$T/big.out" && echo same)" \
	"0 0 51 same"
"$GPUREC" --format csv --data "$T/big" --max-memory 16M report nccl-skew \
	>"$T/big.capped" 2>"$T/big.err"; rc=$?
"$GPUREC" --format csv --data "$T/big" report nccl-skew >"$T/big.out"
eq "nccl-skew over 1M calls under --max-memory 16M: answered, as without it" \
	"$rc $(wc -c <"$T/big.err") $(wc -l <"$T/big.out") $(cmp -s "$T/big.capped" "$T/big.out" && echo same)" \
	"0 0 65 same"
"$GPUREC" --format csv --data "$T/big" --max-memory 16M report rank-pace \
	>"$T/big.capped" 2>"$T/big.err"; rc=$?
"$GPUREC" --format csv --data "$T/big" report rank-pace >"$T/big.out"
eq "rank-pace over 1M calls under --max-memory 16M: answered, as without it" \
	"$rc $(wc -c <"$T/big.err") $(wc -l <"$T/big.out") $(cmp -s "$T/big.capped" "$T/big.out" && echo same)" \
	"0 0 65 same"
# Where a process drives several ranks of one communicator, rank-pace's
# pairs need every call at once: the walk that holds them answers (88
# bytes a call), and --max-memory caps it: 16 ranks in one process, 20,000
# collectives (320,000 calls) under 16M end with the memory line, exit 1,
# not with the host's memory; without the cap, --raw's rows.
awk -v s0=$S0 'BEGIN {
	for (q = 1; q <= 20000; q++)
		for (r = 0; r < 16; r++)
			printf "nccl\tts=%d\tpid=970\ttid=%d\tcomm=python3\tdur=900\top=AllReduce\tbytes=4096\trank=%d\tnranks=16\tcomm_id=99\tseq=%d\n", s0 + q * 1000000 + r * 100, 970 + r, r, q
}' >"$T/mr.rows"
synth --data "$T/mr" --host mr --rows "$T/mr.rows"
out=$("$GPUREC" --data "$T/mr" --max-memory 16M report rank-pace 2>&1 >/dev/null); rc=$?
eq "rank-pace, one process driving 16 ranks, 320,000 calls under --max-memory 16M: the memory line, exit 1" \
	"$rc $out" "1 gpurec: out of memory: the query needs more than --max-memory allows"
same "rank-pace, one process driving 16 ranks, 320,000 calls" 16 --data "$T/mr" report rank-pace

finish
