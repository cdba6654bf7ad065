#!/usr/bin/env bash
# rss_bench.sh - `make bench`'s daemon.rss_mib_8proc: gpurecd's peak
# resident memory (VmHWM) while it records 8 processes that launch kernels
# and map a library shaped like PyTorch's (issue 17).
#
#   bash bench/rss_bench.sh GPURECD LAUNCH_LOOP MOCK_DIR BIGLIB    (root)
#
# NPROC launch-loop processes (bench/launch_loop.c, through the mock
# libcudart and libcuda in MOCK_DIR) run for LOAD_S seconds with BIGLIB
# (bench/biglib.sh: 200,000 functions, a 21 MiB string table) preloaded,
# while gpurecd records with its default families.  gpurecd reads BIGLIB
# twice over: attaching looks for CUDA entry points in every file a CUDA
# process maps, and off-CPU stacks queue a traced process's libraries in
# the ELF cache.  Printed: the peak, the RSS at the end and what
# status.json names of it.  BASELINE=PATH runs another gpurecd the same
# way, in turn within each of ROUNDS rounds, for a before/after in one run;
# medians.  Exits non-zero with a one-line reason if not root or gpurecd
# does not start or stop cleanly.
set -uo pipefail
usage="usage: rss_bench.sh GPURECD LAUNCH_LOOP MOCK_DIR BIGLIB"
GPURECD=${1:?$usage}
LOOP=${2:?$usage}
MOCK=${3:?$usage}
BIG=${4:?$usage}
NPROC=${NPROC:-8}
LOAD_S=${LOAD_S:-8}
ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "rss_bench: needs root (BPF)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/gpurec-rss-bench.XXXXXX)
pid=
[ -n "${KEEP:-}" ] || trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; chattr -R -i "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
die() { echo "rss_bench: $*" >&2; exit 1; }
bins=("$GPURECD") tags=("")
[ -n "${BASELINE:-}" ] && bins+=("$BASELINE") tags+=("_baseline")
kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }

for r in $(seq "$ROUNDS"); do
	for k in "${!bins[@]}"; do
		log=$tmp/log.$r.$k d=$tmp/d$r.$k
		"${bins[$k]}" --data "$d" --config /dev/null \
			--cuda-lib "$MOCK/libcuda.so.1" \
			--cuda-lib "$MOCK/libcudart.so.13" >"$log" 2>&1 &
		pid=$!
		for _ in $(seq 1200); do
			grep -q "gpurecd: ready" "$log" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		grep -q "gpurecd: ready" "$log" ||
			die "${bins[$k]} did not start: $(tail -2 "$log")"
		loops=()
		for i in $(seq "$NPROC"); do
			LD_PRELOAD=$BIG nice -n 19 "$LOOP" "$LOAD_S" >/dev/null &
			loops+=($!)
		done
		for p in "${loops[@]}"; do
			wait "$p" || die "round $r: a launch-loop failed"
		done
		sleep 1.5 # the last flush's status.json
		hwm=$(kib VmHWM) rss=$(kib VmRSS)
		parts=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1])).get("memory", {})
g = lambda k: m.get(k, 0) / 1048576
print("%.1f %.1f %.1f %d" % (g("bpf_maps_bytes"), g("elf_cache_bytes"), g("kernel_names_bytes"), m.get("elf_cache_read", 0)))' "$d/status.json")
		kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
		[ "$rc" = 0 ] || die "${bins[$k]} exited $rc on SIGTERM: $(tail -2 "$log")"
		echo "$hwm $rss $parts" >>"$tmp/rounds.$k"
	done
done
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for k in "${!bins[@]}"; do
	f=$tmp/rounds.$k
	col() { awk -v k="$1" '{print $k}' "$f" | median; }
	printf "daemon.rss_mib_8proc%s %.1f MiB (peak; RSS at the end %.1f MiB, of which BPF maps %.1f, ELF symbols %.1f in %d files, kernel names %.1f; %d processes, %d rounds)\n" \
		"${tags[$k]}" "$(echo "$(col 1) / 1024" | bc -l)" \
		"$(echo "$(col 2) / 1024" | bc -l)" "$(col 3)" "$(col 4)" \
		"$(col 6)" "$(col 5)" "$NPROC" "$ROUNDS"
done
