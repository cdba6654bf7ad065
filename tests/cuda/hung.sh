#!/usr/bin/env bash
# hung.sh - a process is a GPU process from the moment it maps CUDA or
# enters the driver's initialization, not from its first recorded call
# (root, eBPF).
#
# The CI machines have no GPU and no driver, so the real libcudart never
# reaches a libcuda (given the mock's, it finds none of the entry points it
# asks the driver for, and gives up before cuInit): hung.c runs against
# the mock libcudart and libcuda (tests/cuda/mock/), whose runtime calls
# cuInit on first use as the real one does, and whose cuInit hangs when
# GR_MOCK_CUINIT_HANG asks, as the real one does on a host whose GPU fell
# off the bus.  Three processes, started after gpurecd:
#   (count) calls only cudaGetDeviceCount (unhooked; cuInit under it),
#           then sleeps 1 s and writes a file;
#   (idle)  makes no CUDA call at all, waits 0.5 s, sleeps 1 s, writes;
#   (init)  hangs in cuInit for 3 s (30 waits of 100 ms), checked while
#           it still hangs and after.
# Each must have its `process` row, its off-CPU intervals and its file
# calls, exactly.
set -uo pipefail
SUITE=hung
. "$(dirname "$0")/lib.sh"

# The Makefile builds them (make bpf-test).
M=build/cuda-tests/mock
H=build/cuda-tests/hung
[ -x $H ] || { bad "hung" "not built: run make bpf-test"; finish; exit 1; }
EXE=$(realpath $H)

start_gpurecd --file-io-min-us 0 --cuda-lib $M/libcuda.so.1 --cuda-lib $M/libcudart.so.13

# out NAME KEY [N]: field N (default 2) of the line of $T/NAME.out that
# starts with KEY.
out() { awk -v k="$2" -v f="${3:-2}" '$1 == k { print $f; exit }' "$T/$1.out"; }

$H count "$T/count.dat" 12345 >"$T/count.out" 2>&1 & pc=$!; wait $pc
eq "(count) runs" "$? $(out count ret 2) $(out count ret 4)" "0 0 1"
$H idle "$T/idle.dat" 4321 >"$T/idle.out" 2>&1 & pi=$!; wait $pi
eq "(idle) runs" "$?" 0

GR_MOCK_CUINIT_HANG=3 $H init >"$T/init.out" 2>&1 & ph=$!
sleep 2 # 2 s into its 3 s in cuInit
th=$(out init tid)
kill -0 $ph 2>/dev/null && ok "(init) still in cuInit" || bad "(init) still in cuInit" "exited early: $(cat "$T/init.out")"
eq "(init) while it hangs: off-CPU rows through cuInit, state S" \
	"$(q "SELECT count(*) >= 10, sum(state = 'S') = count(*) FROM offcpu WHERE tid = $th AND stack LIKE '%;cuInit;%'")" "1,1 "
eq "(init) while it hangs: its process row, running" \
	"$(q "SELECT count(*) >= 1, min(exe), max(exit_ts IS NULL) FROM process WHERE pid = $ph")" "1,$EXE,1 "
rep() { "$GPUREC" --data "$D" --format csv "$@" | tr -d '\r' | tail -n +2; }
eq "(init) while it hangs: offcpu-top lists it, its top stack through cuInit" \
	"$(rep --pid $ph report offcpu-top | awk -F, -v t="$th" '$2 == t { print $1 "," $4 "," ($NF ~ /;cuInit;/) }')" "$ph,S,1"
wait $ph
eq "(init) gives up after 3 s" "$? $(out init ret)" "0 3"
sleep 0.3
stop_gpurecd

# (count): traced from cuInit's entry, under cudaGetDeviceCount.
tc=$(out count tid) fc=$(out count fd)
eq "(count) its process row: the executable, exited 0" \
	"$(q "SELECT min(exe), max(exit_code) FROM process WHERE pid = $pc")" "$EXE,0 "
eq "(count) cuInit, a cuda_api row of its own (cudaGetDeviceCount is not hooked)" \
	"$(q "SELECT api, count(*), min(ret) FROM cuda_api WHERE pid = $pc GROUP BY api")" "cuInit,1,0 "
eq "(count) its 1 s sleep: one off-CPU row over 0.9 s, state S, through nanosleep" \
	"$(q "SELECT count(*), min(state), min(dur) >= 900000000, min(stack LIKE '%nanosleep%') FROM offcpu WHERE tid = $tc AND dur >= 900000000")" "1,S,1,1 "
eq "(count) its write: one row, every byte" \
	"$(q "SELECT syscall, bytes FROM file_io WHERE tid = $tc AND fd = $fc AND syscall = 'write'")" "write,12345 "

# (idle): traced from the scan that found its mappings (the exec rescans).
ti=$(out idle tid) fi_=$(out idle fd)
eq "(idle) its process row: the executable, exited 0" \
	"$(q "SELECT min(exe), max(exit_code) FROM process WHERE pid = $pi")" "$EXE,0 "
eq "(idle) no CUDA call, no cuda_api row" "$(q "SELECT count(*) FROM cuda_api WHERE pid = $pi")" "0 "
eq "(idle) its 1 s sleep: one off-CPU row over 0.9 s, state S" \
	"$(q "SELECT count(*), min(state) FROM offcpu WHERE tid = $ti AND dur >= 900000000")" "1,S "
eq "(idle) its write: one row, every byte" \
	"$(q "SELECT syscall, bytes FROM file_io WHERE tid = $ti AND fd = $fi_ AND syscall = 'write'")" "write,4321 "

# (init): traced from cuInit's entry, before its first wait: each of its
# 30 waits is a row, with cuInit on its stack.
eq "(init) all 30 waits in cuInit: 100 ms or more each, state S" \
	"$(q "SELECT count(*), sum(dur >= 100000000), sum(state = 'S') FROM offcpu WHERE tid = $th AND stack LIKE '%;cuInit;%'")" "30,30,30 "
eq "(init) cuInit's cuda_api row: 3 s or more, CUDA_ERROR_UNKNOWN" \
	"$(q "SELECT api, count(*), min(dur) >= 3000000000, min(ret) FROM cuda_api WHERE pid = $ph GROUP BY api")" "cuInit,1,1,999 "
eq "(init) its process row, exited 0" \
	"$(q "SELECT min(exe), max(exit_code) FROM process WHERE pid = $ph")" "$EXE,0 "
eq "(report) offcpu-top: the hung thread, 30 intervals in S, 3 s or more, through cuInit" \
	"$(rep --pid $ph report offcpu-top | awk -F, -v t="$th" '$2 == t { print $1 "," $4 "," $5 "," ($6 >= 3000000000) "," ($NF ~ /;cuInit;/) }')" "$ph,S,30,1,1"

eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "
"$GPUREC" --data "$D" verify >/dev/null 2>&1; eq "the recording verifies" "$?" 0
finish
