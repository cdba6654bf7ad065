#!/usr/bin/env bash
# memcpyhost.sh - memcpy-sync and memcpy-pageable classify host pointers
# and group copies in C (query/memcpy_host.c), in one pass; each prints
# exactly what it prints --raw (the reports' SQL, kept as the reference),
# byte for byte, over two hosts (pid 100 on both), the whole recording and
# a window cut mid-minute at both ends, --pid and --host, several limit
# and sync values.  The recording has pinned, managed (any case of the
# API's name) and device allocations, frees, reuses of a base with another
# size, failed allocations, copies at the very ts of an allocation of
# their base, every direction (unknown ones too), NULL durations, bytes,
# comms and returns, failed copies, and many threads; one process's
# copies are written by hand and their rows checked against counts worked
# out here.  The copies are walked directly (not through SQLite): a block
# failing its checksum is skipped with the warning --raw gives.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-memcpyhost.XXXXXX)
cleanup() { chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# CSV lines end in CRLF (RFC 4180): compared as lines here.
g() { "$GPUREC" "${DATA[@]}" --format csv "$@" 2>>"$T/err" | tr -d '\r'; }
q() { g sql "$1" | tail -n +2; }

# 20 minutes of copies (deterministic, Park-Miller) by host.  Per pid
# (100 and 200 on alpha, 100 and 300 on beta), 8 bases 16 MiB apart (the
# same on both hosts for pid 100: the reports join on pid alone), each
# with an event every 45 s: an allocation of 1 to 10 MiB (pinned by one
# of the six pinning APIs, managed, or device, by base), a free, or a
# failed allocation; every 7th allocation comes with a copy at its very
# ts into its base.  Allocation times are even and copies' odd, so no two
# rows of one (pid, ptr) or two copies share a ts.  Copies every 60 ms:
# host pointers in a base (up to 12 MiB past it: some past the live
# allocation, some past every size), pageable (elsewhere), or 0; every
# direction and none; every 13th has no duration, every 997th waits
# exactly 5 ms (ties, by ts), every 17th fails, every 23rd has no ret,
# every 29th no bytes, every 31st no comm.  The API sets async (cuMemcpy:
# NULL) so that memcpy-pageable's bare async is one value per group.
cat >"$T/gen.awk" <<'AWK'
function at(off) { return sprintf("%d%09d", S + int(off / 1e9), off % 1e9) }
function rnd() { seed = (seed * 16807) % 2147483647; return seed / 2147483647 }
# An integer below 2^53 in decimal: mawk prints numbers past 2^31 as
# %.6g, and clamps them to 2^31 - 1 under %d.
function dec(v,   h, l) {
	h = int(v / 1e9); l = v - h * 1e9
	if (l < 0) { h--; l += 1e9 } else if (l >= 1e9) { h++; l -= 1e9 }
	return h ? sprintf("%d%09d", h, l) : sprintf("%d", l)
}
function hostptr(p,   j) {
	r = rnd()
	if (r < 0.02) return 0
	if (r < 0.6) { j = int(rnd() * 8); return base[p, j] + int(rnd() * 12582912) }
	return 366503875000 + int(rnd() * 1073741824)
}
BEGIN {
	seed = host == "alpha" ? 7 : 11
	npid = split(host == "alpha" ? "100 200" : "100 300", pids, " ")
	split("cudaMallocHost cudaHostAlloc cudaHostRegister cuMemAllocHost_v2 cuMemHostAlloc cuMemHostRegister_v2 cudaMallocManaged cudaMalloc cuMemAllocManaged cudamallocMANAGED cuMemAlloc_v2", aapi, " ")
	split("cudaMemcpyAsync cudaMemcpy cuMemcpyHtoDAsync_v2 cuMemcpyDtoH_v2 cuMemcpy", capi, " ")
	split("1 0 1 0 -", casync, " ")
	split("H2D D2H H2H D2D default P2P - H2D D2H", ckind, " ")
	hoff = host == "alpha" ? 0 : 500000
	for (pi = 1; pi <= npid; pi++) {
		p = pids[pi]
		for (j = 0; j < 8; j++) {
			base[p, j] = 139637976727552 + j * 16777216
			api = aapi[1 + (j + p) % 11]
			for (k = 0; k < 27; k++) {
				ts = k * 45000000000 + j * 2000000 + hoff + (p % 3) * 100000
				r = rnd()
				if (r < 0.55) {
					f = sprintf("cuda_mem\tts=%s\tpid=%d\ttid=%d\tcomm=python3\tdur=100\tapi=%s\top=alloc\tbytes=%d\tptr=%s\tret=0",
						at(ts), p, p, api, 1048576 * (1 + int(rnd() * 10)), dec(base[p, j]))
					print f
					if (++na % 7 == 0)
						printf "cuda_memcpy\tts=%s\tpid=%d\ttid=%d\tcomm=python3\tdur=%d\tapi=cudaMemcpyAsync\tkind=H2D\tbytes=64\tasync=1\tret=0\tsrc=%s\tdst=4096\n",
							at(ts), p, p, 1000 + na, dec(base[p, j] + 4096)
				} else if (r < 0.9) {
					printf "cuda_mem\tts=%s\tpid=%d\ttid=%d\tcomm=python3\tdur=100\tapi=cudaFree\top=free\tptr=%s\tret=0\n",
						at(ts), p, p, dec(base[p, j])
				} else {
					printf "cuda_mem\tts=%s\tpid=%d\ttid=%d\tcomm=python3\tdur=100\tapi=%s\top=alloc\tbytes=4096\tptr=%s\tret=2\n",
						at(ts), p, p, api, dec(base[p, j])
				}
			}
		}
	}
	for (i = 0; i < 20000; i++) {
		ts = i * 60000000 + 2 * int(rnd() * 29000000) + 1
		p = pids[1 + i % npid]
		tid = p + int(rnd() * 3)
		a = 1 + int(rnd() * 5)
		kd = ckind[1 + int(rnd() * 9)]
		d = int(2 ^ (rnd() * 20))
		if (i % 997 == 0) d = 5000000
		f = sprintf("cuda_memcpy\tts=%s\tpid=%d\ttid=%d\tapi=%s", at(ts), p, tid, capi[a])
		if (i % 31) f = f "\tcomm=" (tid == p ? "python3" : "worker-" (tid - p))
		if (i % 13) f = f "\tdur=" d
		if (i % 29) f = f "\tbytes=" 4096 * (1 + i % 5)
		if (i % 23) f = f "\tret=" (i % 17 ? 0 : 1)
		if (casync[a] != "-") f = f "\tasync=" casync[a]
		if (kd != "-") f = f "\tkind=" kd
		s = hostptr(p); t = hostptr(p)
		if (rnd() < 0.95) f = f "\tsrc=" dec(s)
		if (rnd() < 0.95) f = f "\tdst=" dec(t)
		print f
	}
}
AWK
S=1793491200 # 2026-11-01T00:00:00Z
P=536870912  # pid 900's base, 0x20000000
at() { echo "$((S + $1 / 1000000000))$(printf '%09d' $(($1 % 1000000000)))"; }
# hand TS KIND ASYNC DUR [MORE]: a copy of pid 900 on beta.
hand() {
	printf 'cuda_memcpy\tts=%s\tpid=900\ttid=900\tcomm=hand\tapi=%s\tkind=%s\tbytes=64\tret=0%s%s\n' \
		"$(at "$1")" "$([ "$3" = 1 ] && echo cudaMemcpyAsync || echo cudaMemcpy)" \
		"$2" "${3:+	async=$3}" "${4:+	dur=$4}${5:+	$5}"
}
{
	awk -v S=$S -v host=beta -f "$T/gen.awk"
	printf 'cuda_mem\tts=%s\tpid=900\ttid=900\tcomm=hand\tapi=cudaHostAlloc\top=alloc\tbytes=8192\tptr=%d\tret=0\n' "$(at 100000000000)" $P
	hand 100000000000 H2D 1 500 "src=$((P + 16))"	# same ts: pageable
	hand 110000000000 H2D 1 600 "src=$((P + 16))"	# pinned
	hand 120000000000 D2H 1 700 "dst=$((P + 8192))"	# past it: pageable
	printf 'cuda_mem\tts=%s\tpid=900\ttid=900\tcomm=hand\tapi=cudaFreeHost\top=free\tptr=%d\tret=0\n' "$(at 130000000000)" $P
	hand 140000000000 H2D 1 800 "src=$((P + 16))"	# freed: pageable
	printf 'cuda_mem\tts=%s\tpid=900\ttid=900\tcomm=hand\tapi=cudaMallocManaged\top=alloc\tbytes=16384\tptr=%d\tret=0\n' "$(at 150000000000)" $P
	hand 160000000000 D2H 1 900 "dst=$((P + 9000))"	# managed
	hand 170000000000 default 1 "" "src=$((P + 1))	dst=805306368" # dst pageable
	hand 180000000000 H2D 0 1000 "src=$((P + 1))"	# sync API, managed
	hand 190000000000 D2D 1 400 "src=1	dst=2"	# no host side
	hand 200000000000 H2D 1 50 "src=805306368	ret=1"	# pageable, failed
	hand 210000000000 D2H 0 300 "dst=805306368"	# sync API, pageable
} >"$T/b.tsv"
awk -v S=$S -v host=alpha -f "$T/gen.awk" >"$T/a.tsv"
A="$T/alpha" B="$T/beta"
synth --data "$A" --host alpha --block-rows 256 --rows "$T/a.tsv"
synth --data "$B" --host beta --block-rows 256 --rows "$T/b.tsv"
DATA=(--data "$A" --data "$B")
W="--since 2026-11-01T00:03:20.5Z --until 2026-11-01T00:14:40.25Z"

eq "the recording: every copy and successful allocation, 10 copies of pid 900" \
	"$(q "SELECT (SELECT count(*) FROM cuda_memcpy), (SELECT count(*) FROM cuda_mem WHERE op = 'alloc' AND ret = 0), (SELECT count(*) FROM cuda_memcpy WHERE pid = 900)")" \
	"$(cat "$T/a.tsv" "$T/b.tsv" | grep -c '^cuda_memcpy'),$(cat "$T/a.tsv" "$T/b.tsv" | grep -c 'op=alloc.*ret=0$'),10"

eq "the generated pointers are exact: 9 bases, copies in and past them" \
	"$(q "SELECT (SELECT count(DISTINCT ptr) FROM cuda_mem), (SELECT count(*) > 10000 FROM cuda_memcpy WHERE src BETWEEN 139637976727552 AND 139637976727552 + 8 * 16777216), (SELECT count(*) > 10000 FROM cuda_memcpy WHERE src BETWEEN 366503875000 AND 366503875000 + 1073741824), (SELECT count(DISTINCT src) > 30000 FROM cuda_memcpy)")" \
	"9,1,1,1"

# The hand-written process, by the rules worked out beside its rows.
eq "memcpy-pageable, pid 900: per direction, the pageable async copies" \
	"$(g report memcpy-pageable --pid 900 --param limit=0 | cut -d, -f1-12 | tail -n +2 | tr '\n' ' ')" \
	"sum,900,,hand,cudaMemcpyAsync,H2D,1,3,192,1350,800,1 sum,900,,hand,cudaMemcpyAsync,D2H,1,1,64,700,700,0 sum,900,,hand,cudaMemcpyAsync,default,1,1,64,,,0 "
eq "memcpy-pageable sync=1, pid 900: the blocking copy to pageable memory too" \
	"$(g report memcpy-pageable --pid 900 --param limit=0 --param sync=1 | cut -d, -f1-12 | tail -n +2 | tr '\n' ' ')" \
	"sum,900,,hand,cudaMemcpyAsync,H2D,1,3,192,1350,800,1 sum,900,,hand,cudaMemcpyAsync,D2H,1,1,64,700,700,0 sum,900,,hand,cudaMemcpy,D2H,0,1,64,300,300,0 sum,900,,hand,cudaMemcpyAsync,default,1,1,64,,,0 "
eq "memcpy-pageable, pid 900: the calls, longest first, no duration last" \
	"$(g report memcpy-pageable --pid 900 | grep '^call' | cut -d, -f5,6,10,13,14 | tr '\n' ' ')" \
	"cudaMemcpyAsync,H2D,800,0x20000010, cudaMemcpyAsync,D2H,700,,0x20002000 cudaMemcpyAsync,H2D,500,0x20000010, cudaMemcpyAsync,H2D,50,0x30000000, cudaMemcpyAsync,default,,0x20000001,0x30000000 "
eq "memcpy-sync, pid 900: per blocking reason, the longest call's ts" \
	"$(g report memcpy-sync --pid 900 --param limit=0 | tail -n +2 | tr '\n' ' ')" \
	"thread,900,900,hand,async on pageable,,,,5,320,2050,800,1,$(at 140000000000) thread,900,900,hand,sync API,,,,2,128,1300,1000,0,$(at 180000000000) "
eq "memcpy-sync, pid 900: host_mem of the calls (managed, pageable)" \
	"$(g report memcpy-sync --pid 900 --param limit=3 | grep '^call' | cut -d, -f5,8,11 | tr '\n' ' ')" \
	"sync API,managed,1000 async on pageable,pageable,800 async on pageable,pageable,700 "
eq "memcpy-sync from 00:01:45: the pinned allocation is not seen" \
	"$(g --since 2026-11-01T00:01:45Z report memcpy-sync --pid 900 --param limit=0 | cut -d, -f5,9,11 | tail -n +2 | tr '\n' ' ')" \
	"async on pageable,5,2150 sync API,2,1300 "

eq "memcpy-sync from 00:02:35: no allocation at all, every host side pageable" \
	"$(g --since 2026-11-01T00:02:35Z report memcpy-sync --pid 900 --param limit=0 | cut -d, -f5,9,11 | tail -n +2 | tr '\n' ' ')" \
	"sync API,2,1300 async on pageable,3,950 "
eq "memcpy-pageable from 00:02:35, pid 900: as --raw" \
	"$(g --since 2026-11-01T00:02:35Z report memcpy-pageable --pid 900 --param sync=1 | md5sum)" \
	"$(g --since 2026-11-01T00:02:35Z report memcpy-pageable --pid 900 --param sync=1 --raw | md5sum)"
# (gpurec says on stderr that --pid matched nothing.)
n() { "$GPUREC" "${DATA[@]}" --format csv --pid 999 "$@" 2>/dev/null | tr -d '\r'; }
eq "no copies (pid 999): the header alone, as --raw" \
	"$(n report memcpy-sync; n report memcpy-pageable) $(n report memcpy-sync --raw | wc -l)" \
	"$(n report memcpy-sync --raw; n report memcpy-pageable --raw) 1"

# Every report, window and parameter against --raw.
same() { # NAME ARGS...: the report equals --raw, saved as $T/out.NAME
	local name=$1 n; shift
	g "$@" >"$T/out.$name"
	g "$@" --raw >"$T/raw"
	n=$(($(wc -l <"$T/raw") - 1))
	if [ "$n" -gt 1 ] && cmp -s "$T/out.$name" "$T/raw"; then
		ok "$name: $* equals --raw ($n rows)"
	else
		bad "$name: $* equals --raw" "$(diff "$T/out.$name" "$T/raw" | head -5) ($n rows)"
	fi
}
for w in whole window; do
	win=()
	if [ $w = window ]; then read -ra win <<<"$W"; fi
	same "$w.sync" "${win[@]}" report memcpy-sync
	same "$w.sync0" "${win[@]}" report memcpy-sync --param limit=0
	same "$w.sync7" "${win[@]}" report memcpy-sync --param limit=7
	same "$w.syncall" "${win[@]}" report memcpy-sync --param limit=100000
	same "$w.page" "${win[@]}" report memcpy-pageable
	same "$w.page1" "${win[@]}" report memcpy-pageable --param sync=1
	same "$w.page0" "${win[@]}" report memcpy-pageable --param sync=0 --param limit=0
	same "$w.page1all" "${win[@]}" report memcpy-pageable --param sync=1 --param limit=100000
	same "$w.pid" "${win[@]}" --pid 100 report memcpy-sync --param limit=50
	same "$w.host" "${win[@]}" --host beta report memcpy-pageable --param sync=1 --param limit=50
done

# What the comparisons above cover, so that a vacuous one fails.
eq "whole recording: every host-memory kind is listed, and each blocking reason" \
	"$(cut -d, -f5,8 "$T/out.whole.syncall" | grep -v '^blocking' | sort -u | tr '\n' ' ')" \
	"async on pageable, async on pageable,pageable sync API, sync API,managed sync API,pageable sync API,pinned "
eq "whole recording: 6 thread rows of pid 100's pid 100 (both hosts' threads merge), calls with errors and no duration" \
	"$(grep -c '^thread,100,' "$T/out.whole.sync") $(grep '^call' "$T/out.whole.syncall" | awk -F, '$13 == 1' | wc -l | awk '$1 > 100 { print "errors" }') $(grep '^call' "$T/out.whole.syncall" | awk -F, '$11 == ""' | wc -l | awk '$1 > 100 { print "nulls" }')" \
	"6 errors nulls"
eq "limit=7 lists 7 calls, limit=0 none" \
	"$(grep -c '^call' "$T/out.whole.sync7") $(grep -c '^call' "$T/out.whole.sync0")" "7 0"
# Thread rows' ts: their longest call's, the earliest of tied 5 ms calls.
eq "the 5 ms ties: a thread's ts is its earliest longest call's" \
	"$(awk -F, '$1 == "call" && $11 == 5000000 { k = $2 "," $3 "," $5; n[k]++; if (!(k in m) || $14 < m[k]) m[k] = $14 }
		$1 == "thread" && $12 == 5000000 { t[$2 "," $3 "," $5] = $14 }
		END { for (k in n) { tied += n[k] > 1; bad += t[k] != m[k] }; print (tied > 2 ? "ties" : "few ties " tied), bad + 0 }' \
		"$T/out.whole.syncall")" \
	"ties 0"
eq "alpha: every copy at its base's allocation's own ts is pageable" \
	"$(g --host alpha report memcpy-pageable --param limit=100000 | grep -c '^call,.*,cudaMemcpyAsync,H2D,1,1,64,')" \
	"$(grep -c 'bytes=64' "$T/a.tsv")"
# Many segments: the copies are cut into runs of segments, each walked by
# a thread of its own, and merged in segment order.  The same rows
# written 1,500 events to a segment give the same reports for any number
# of walkers (GPUREC_SCAN_THREADS), equal to --raw and to the
# one-segment recordings'.
synth --data "$T/alpha_r" --host alpha --block-rows 256 --rotate-every 1500 --rows "$T/a.tsv"
synth --data "$T/beta_r" --host beta --block-rows 256 --rotate-every 1500 --rows "$T/b.tsv"
R=(--data "$T/alpha_r" --data "$T/beta_r")
eq "rotated: the recordings hold 20 or more segments" \
	"$(ls "$T"/alpha_r/*.seg "$T"/beta_r/*.seg | wc -l | awk '{ print ($1 >= 20) ? "many" : $1 }')" many
for r in "memcpy-sync syncall" "memcpy-pageable page1all"; do
	set -- $r
	p=(--param limit=100000)
	[ "$1" = memcpy-pageable ] && p+=(--param sync=1)
	"$GPUREC" "${R[@]}" --format csv report "$1" "${p[@]}" --raw 2>>"$T/err" | tr -d '\r' >"$T/rot.raw"
	for th in 1 2 3 8; do
		GPUREC_SCAN_THREADS=$th "$GPUREC" "${R[@]}" --format csv report "$1" "${p[@]}" 2>>"$T/err" | tr -d '\r' >"$T/rot.$th"
		eq "rotated: $1, $th walkers: --raw's rows and the one-segment recordings'" \
			"$(cmp -s "$T/rot.$th" "$T/rot.raw" && echo raw) $(cmp -s "$T/rot.$th" "$T/out.whole.$2" && echo same)" "raw same"
	done
done

for v in 0 65 two; do
	eq "GPUREC_SCAN_THREADS=$v: one line, exit 1" \
		"$(GPUREC_SCAN_THREADS=$v "$GPUREC" "${R[@]}" --format csv report memcpy-sync 2>&1; echo "rc $?")" \
		"gpurec: SQL error: GPUREC_SCAN_THREADS=$v: not a number from 1 to 64
rc 1"
done

# Ties across the walkers' runs, in one process (pid 777, no allocation:
# every copy pageable), two copies to a segment: 8 copies at one ts with
# one duration.  Calls list in read order; a group's comm is its least,
# with the async of the first row that has it (row 6, not the last row,
# which follows only NULL comms), as
# SQLite's min() and one walk in read order give.
{
	i=0
	for row in "1 - 0" "1 - 1" "1 zeta 0" "1 beta 1" "2 beta 0" "2 alpha 0" "2 - 0" "2 - 1"; do
		read -r tid comm async <<<"$row"
		i=$((i + 1))
		printf 'cuda_memcpy\tts=%s\tpid=777\ttid=%s\tapi=cudaMemcpyAsync\tkind=H2D\tasync=%s\tdur=500\tbytes=%s\tret=0\tsrc=805306368%s\n' \
			"$(at 60000000000)" "$tid" "$async" "$i" "$([ "$comm" = - ] || printf '\tcomm=%s' "$comm")"
	done
} >"$T/ties.tsv"
synth --data "$T/ties" --host gamma --rotate-every 2 --rows "$T/ties.tsv"
eq "ties: 4 segments" "$(ls "$T"/ties/*.seg | wc -l)" 4
for th in 1 2 4; do
	eq "ties, $th walkers: memcpy-pageable's sum (async of row 6) and calls in read order" \
		"$(GPUREC_SCAN_THREADS=$th "$GPUREC" --data "$T/ties" --format csv report memcpy-pageable --param sync=1 --param limit=100 2>>"$T/err" | tr -d '\r' | tail -n +2 | cut -d, -f1-4,7,8,9 | tr '\n' ' ')" \
		"sum,777,,alpha,0,8,36 call,777,1,,0,1,1 call,777,1,,1,1,2 call,777,1,zeta,0,1,3 call,777,1,beta,1,1,4 call,777,2,beta,0,1,5 call,777,2,alpha,0,1,6 call,777,2,,0,1,7 call,777,2,,1,1,8 "
	eq "ties, $th walkers: memcpy-sync's thread rows (least comm) and calls in read order" \
		"$(GPUREC_SCAN_THREADS=$th "$GPUREC" --data "$T/ties" --format csv report memcpy-sync --param limit=3 2>>"$T/err" | tr -d '\r' | tail -n +2 | cut -d, -f1-5,9,10 | tr '\n' ' ')" \
		"thread,777,2,alpha,sync API,3,18 thread,777,1,beta,async on pageable,2,6 thread,777,1,zeta,sync API,2,4 thread,777,2,,async on pageable,1,8 call,777,1,,async on pageable,1,2 call,777,1,,sync API,1,1 call,777,1,zeta,sync API,1,3 "
done

# A cuda_memcpy block failing its checksum: the walk skips it with the
# warning any query gives, and answers from the rest as --raw does.
V="$T/bad"
cp -a "$A" "$V"
chattr -R -i "$V" 2>/dev/null
seg=$(ls "$V"/*.seg | head -1)
python3 "$(dirname "$0")/flip_block.py" "$seg" 2 cuda_memcpy ||
	{ bad "flip a block" "flip_block.py failed"; finish; exit 1; }
for r in memcpy-sync memcpy-pageable; do
	"$GPUREC" --data "$V" --format csv report $r --param limit=100000 >"$T/bad.out" 2>"$T/bad.err"
	"$GPUREC" --data "$V" --format csv report $r --param limit=100000 --raw >"$T/bad.raw" 2>"$T/bad.rawerr"
	eq "$r over a block failing its checksum: the --raw rows, fewer than the intact copy's" \
		"$(cmp -s "$T/bad.out" "$T/bad.raw" && echo same) $(awk -F, '$1 == "call"' "$T/bad.out" | wc -l | awk -v n="$(g --host alpha report $r --param limit=100000 | grep -c '^call')" '{ print ($1 > 0 && $1 < n) ? "fewer" : $1 " of " n }')" \
		"same fewer"
	eq "$r over a block failing its checksum: the warning --raw gives" \
		"$(cat "$T/bad.err")" \
		"$(cat "$T/bad.rawerr")"
done
grep -q "warning: $seg: block [0-9]* of cuda_memcpy fails its checksum, skipped" "$T/bad.err" &&
	ok "the warning names the segment and the block" ||
	bad "the warning" "$(cat "$T/bad.err")"

eq "no errors" "$(cat "$T/err")" ""
finish
