#!/usr/bin/env bash
# memory.sh - gpurecd stays under its memory limit by shedding its ELF
# cache, never by dying, and names every launch after a shed (root, eBPF).
#
# --memory-max 1M is below what gpurecd always holds, so each flush finds
# it over 3/4 of the limit and sheds (at most once per 10 s): the symbols
# read to name process (a)'s launches are forgotten, and read again for
# process (b), started after the second shed.  Run by `make bpf-test`
# after tests/cuda/run.sh has built build/cuda-tests/calls_shared.
SUITE=memory
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
. "$(dirname "$0")/lib.sh"

[ -x build/cuda-tests/calls_shared ] || {
	"$NVCC" -cudart shared -o build/cuda-tests/calls_shared tests/cuda/calls.cu 2>"$T/nvcc.log" ||
		{ cat "$T/nvcc.log"; bad "nvcc" "build failed"; finish; exit 1; }
}
start_gpurecd --no-sched --no-io --memory-max 1M
grep -q "memory: limit 1.0 MiB (--memory-max): over 3/4 of it, caches are shed" "$T/gpurecd.log" &&
	ok "logs the limit it keeps under" || bad "limit log" "$(head -5 "$T/gpurecd.log")"

build/cuda-tests/calls_shared 0 0.3 >"$T/a.out" & pa=$!; wait $pa
sleep 11	# the next shed: at most one per 10 s
build/cuda-tests/calls_shared 0 0.3 >"$T/b.out" & pb=$!; wait $pb
sleep 0.5
m=$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["memory"]
print(m["sheds"] >= 2, m["elf_cache_evicted"] >= 1, m["limit_bytes"])' "$D/status.json")
eq "status.json: shed twice or more, ELF files forgotten, the limit" "$m" "True True 1048576"
stop_gpurecd
n=$(grep -c "memory: RSS .* is over 3/4 of the limit (1.0 MiB): shed the ELF cache" "$T/gpurecd.log")
[ "$n" -ge 2 ] && ok "each shed is logged ($n)" || bad "shed log" "$(grep memory: "$T/gpurecd.log")"
for p in $pa $pb; do
	eq "pid $p: every launch recorded and named after a shed" \
		"$(q "SELECT count(*), count(kernel) FROM cuda_kernel WHERE pid = $p")" "10,10 "
done
finish
