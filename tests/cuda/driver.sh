#!/usr/bin/env bash
# driver.sh - where a driver is attached, each launch is recorded once, at
# the driver, and named from the load-time calls (root, eBPF).
#
# The CI machines have no GPU, so the real libcuda is never reached: this
# test runs drv_calls.c against a mock libcuda and libcudart (tests/cuda/
# mock/) with the real entry points' names and prototypes, the runtime
# calling the driver as the real one does.  Two processes make the same
# calls: one started before gpurecd ("old": its early handles are unseen,
# so gpurecd attaches the runtime's launch probes for it alone and names
# its runtime launches from their host stubs, and early module functions
# from the name the driver keeps behind the handle) and one started after ("new":
# runtime launches trap only in the driver and are named from
# cuLibraryGetKernel).  A third ("bogus") makes a driver launch gpurecd
# cannot name, and gets the runtime's launch probes from then on.  Every
# row must come back exactly.
set -uo pipefail
SUITE=driver
. "$(dirname "$0")/lib.sh"

# The Makefile builds them (make bpf-test).
M=build/cuda-tests/mock
[ -x build/cuda-tests/drv_calls ] || { bad "drv_calls" "not built: run make bpf-test"; finish; exit 1; }

build/cuda-tests/drv_calls "$T/go.old" >"$T/old.out" & po=$!
sleep 0.2 # its early calls are made before gpurecd starts
start_gpurecd --cuda-lib $M/libcuda.so.1 --cuda-lib $M/libcudart.so.13
# Its runtime launch probes come once the ELF cache has read its files'
# symbols, which may be after "ready" (docs/recorder.md): launches made
# before that are the driver's, as the test would then see (CI, ASan, load).
old_probes() { grep -q "pid $po predates gpurecd: 2 runtime launch probes" "$T/gpurecd.log"; }
wait_until 20 old_probes || bad "(old) runtime launch probes attached" "not after $WAITED: $(grep -v attached "$T/gpurecd.log")"
touch "$T/go.old"; wait $po; eq "(old) its calls succeed" "$?" 0
touch "$T/go.new"
build/cuda-tests/drv_calls "$T/go.new" >"$T/new.out" & pn=$!; wait $pn
eq "(new) its calls succeed" "$?" 0
build/cuda-tests/drv_calls "$T/go.new" bogus >"$T/bogus.out" & pb=$!; wait $pb
eq "(bogus) its calls succeed" "$?" 0
sleep 0.3
stop_gpurecd

L="$T/gpurecd.log"
grep -q "driver .*$M/libcuda.so.1 records every launch" "$L" && ok "logs the driver taking over launches" || bad "driver log" "$(cat "$L")"
grep -q "attached .*runtime launches left to the driver.* to $M/libcudart.so.13" "$L" && ok "the runtime's launch entry points are not attached" || bad "runtime attach log" "$(grep attached "$L")"
grep -q "pid $po predates gpurecd: 2 runtime launch probes on .*libcudart.so.13 for it alone" "$L" && ok "(old) runtime launch probes for it alone" || bad "old pid log" "$(grep -v attached "$L")"
if [ -e /usr/local/cuda/lib64/libcudart.so.13 ]; then
	grep -q "detached [1-9][0-9]* runtime launch probes" "$L" && ok "the toolkit's runtime launch probes give way to the driver" || bad "detach log" "$(cat "$L")"
fi

grep -q "pid $pb made a driver launch without a name: 2 runtime launch probes on .*libcudart.so.13 for it alone" "$L" && ok "(bogus) an unnamed driver launch brings runtime launch probes for it alone" || bad "bogus pid log" "$(grep -v attached "$L")"

K="SELECT api, count(*), grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem, stream, kernel, kernel_mangled, ret FROM cuda_kernel"
G="GROUP BY api, kernel_mangled, grid_x ORDER BY api, kernel_mangled, grid_x"
eq "(new) one row per launch, all at the driver, all named" \
	"$(q "$K WHERE pid = $pn $G")" \
	'cuLaunchKernel,1,1,1,1,1,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cuLaunchKernel,5,10,1,1,128,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cuLaunchKernel,4,3,2,1,64,2,1,256,119,"kernel(float*, int)",_Z6kernelPfi,0 cuLaunchKernel,2,1,1,1,32,1,1,0,0,oldker(),_Z6oldkerv,0 cuLaunchKernel,2,2,2,1,16,1,1,0,0,oldker(),_Z6oldkerv,0 cuLaunchKernelEx,3,16,8,1,256,1,1,49152,153,"void ns::gemm<128>(float const*, float*)",_ZN2ns4gemmILi128EEEvPKfPf,0 '
eq "(old) runtime launches named from the stub or the handle's memory; early library handles unnamed" \
	"$(q "$K WHERE pid = $po $G")" \
	'cuLaunchKernel,4,3,2,1,64,2,1,256,119,"kernel(float*, int)",_Z6kernelPfi,0 cuLaunchKernel,2,1,1,1,32,1,1,0,0,oldker(),_Z6oldkerv,0 cuLaunchKernelEx,3,16,8,1,256,1,1,49152,153,"void ns::gemm<128>(float const*, float*)",_ZN2ns4gemmILi128EEEvPKfPf,0 cudaLaunchKernel,5,10,1,1,128,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cudaLaunchKernel,2,2,2,1,16,1,1,0,0,oldker(),_Z6oldkerv,0 '
eq "(bogus) after an unnamed driver launch, runtime launches are named from their stubs" \
	"$(q "$K WHERE pid = $pb $G")" \
	'cuLaunchKernel,1,2,1,1,2,1,1,0,0,,,0 cuLaunchKernel,1,1,1,1,1,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cuLaunchKernel,4,3,2,1,64,2,1,256,119,"kernel(float*, int)",_Z6kernelPfi,0 cuLaunchKernel,2,1,1,1,32,1,1,0,0,oldker(),_Z6oldkerv,0 cuLaunchKernelEx,3,16,8,1,256,1,1,49152,153,"void ns::gemm<128>(float const*, float*)",_ZN2ns4gemmILi128EEEvPKfPf,0 cudaLaunchKernel,5,10,1,1,128,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cudaLaunchKernel,2,2,2,1,16,1,1,0,0,oldker(),_Z6oldkerv,0 '
# pv CASE NAME: a pointer the program printed ("ptr NAME VALUE").
pv() { sed -n "s/^ptr $2 //p" "$T/$1.out"; }
for c in new:$pn old:$po; do
	n=${c%%:*} pid=${c#*:}
	h=$(pv $n host) dev=$(pv $n dev) pin=$(pv $n pin) hal=$(pv $n hal)
	pg=$(pv $n pg) reg=$(pv $n reg)
	eq "($n) a runtime call that crosses both layers is one row" \
		"$(q "SELECT api, op, bytes, ptr, ret FROM cuda_mem WHERE pid = $pid ORDER BY ts")" \
		"cudaMalloc,alloc,1048576,$dev,0 cudaMallocHost,alloc,65536,$pin,0 cuMemHostAlloc,alloc,32768,$hal,0 cudaHostRegister,alloc,8192,$reg,0 cudaHostUnregister,free,,$reg,0 cuMemHostRegister_v2,alloc,8192,$reg,0 cudaFreeHost,free,,$pin,0 "
	eq "($n) copies: direction, bytes, src and dst, from arguments and 2D structs" \
		"$(q "SELECT api, kind, bytes, async, src, dst, ret FROM cuda_memcpy WHERE pid = $pid ORDER BY ts")" \
		"cudaMemcpy,H2D,4096,0,$h,$dev,0 cudaMemcpyAsync,H2D,4096,1,$pin,$dev,0 cudaMemcpyAsync,D2H,4096,1,$dev,$((pin + 60000)),0 cudaMemcpyAsync,H2D,16384,1,$pg,$dev,0 cuMemcpyDtoHAsync_v2,D2H,2048,1,$dev,$((pg + 100)),0 cuMemcpyHtoDAsync_v2,H2D,32768,1,$hal,$dev,0 cuMemcpyHtoDAsync_v2,H2D,8192,1,$reg,$dev,0 cuMemcpyHtoDAsync_v2,H2D,8192,1,$reg,$dev,0 cuMemcpyHtoDAsync_v2,H2D,4096,1,$((reg + 4096)),$dev,0 cuMemcpy,default,1024,0,$pg,$dev,0 cuMemcpy,default,512,0,$hal,$dev,0 cuMemcpy2DAsync_v2,H2D,1024,1,$pg,$dev,0 cuMemcpy2D_v2,D2H,1024,0,$dev,$((hal + 1024)),0 cudaMemcpyAsync,H2D,4096,1,$pin,$dev,0 "
	eq "($n) the driver's own calls" \
		"$(q "SELECT api, ret FROM cuda_sync WHERE pid = $pid")" "cuCtxSynchronize,0 "
done

# The reports over (new)'s copies: pinned by cudaMallocHost (inside it
# too), cuMemHostAlloc and cudaHostRegister, and by cuMemHostRegister_v2
# of the same memory again; pageable from malloc, after
# cudaHostUnregister and after cudaFreeHost.  Times vary: left out, rows
# sorted.
r() { "$GPUREC" --data "$D" --format csv --pid "$pn" report "$@" | tr -d '\r' | tail -n +2; }
srt() { LC_ALL=C sort | tr '\n' ' '; }
hex() { printf '0x%x' "$1"; } # reports print pointers in hex
h=$(pv new host) dev=$(pv new dev) pin=$(pv new pin) pg=$(pv new pg) reg=$(pv new reg)
eq "(report) memcpy-sync: sync API copies, and async ones only where pageable" \
	"$(r memcpy-sync | cut -d, -f1,5-10,13 | srt)" \
	"$(printf '%s\n' "thread,sync API,,,,4,6656,0" "thread,async on pageable,,,,5,31744,0" \
		"call,sync API,cudaMemcpy,H2D,pageable,1,4096,0" "call,sync API,cuMemcpy,default,pageable,1,1024,0" \
		"call,sync API,cuMemcpy,default,pinned,1,512,0" "call,sync API,cuMemcpy2D_v2,D2H,pinned,1,1024,0" \
		"call,async on pageable,cudaMemcpyAsync,H2D,pageable,1,16384,0" "call,async on pageable,cuMemcpyDtoHAsync_v2,D2H,pageable,1,2048,0" \
		"call,async on pageable,cuMemcpyHtoDAsync_v2,H2D,pageable,1,8192,0" "call,async on pageable,cuMemcpy2DAsync_v2,H2D,pageable,1,1024,0" \
		"call,async on pageable,cudaMemcpyAsync,H2D,pageable,1,4096,0" | srt)"
eq "(report) memcpy-pageable: per API and direction, and each call's pointers" \
	"$(r memcpy-pageable | cut -d, -f1,5-9,12-14 | srt)" \
	"$(printf '%s\n' "sum,cudaMemcpyAsync,H2D,1,2,20480,0,," "sum,cuMemcpyDtoHAsync_v2,D2H,1,1,2048,0,," \
		"sum,cuMemcpyHtoDAsync_v2,H2D,1,1,8192,0,," "sum,cuMemcpy2DAsync_v2,H2D,1,1,1024,0,," \
		"call,cudaMemcpyAsync,H2D,1,1,16384,0,$(hex $pg),$(hex $dev)" "call,cuMemcpyDtoHAsync_v2,D2H,1,1,2048,0,$(hex $dev),$(hex $((pg + 100)))" \
		"call,cuMemcpyHtoDAsync_v2,H2D,1,1,8192,0,$(hex $reg),$(hex $dev)" "call,cuMemcpy2DAsync_v2,H2D,1,1,1024,0,$(hex $pg),$(hex $dev)" \
		"call,cudaMemcpyAsync,H2D,1,1,4096,0,$(hex $pin),$(hex $dev)" | srt)"
eq "(report) memcpy-pageable --param sync=1: the blocking pageable copies too" \
	"$(r memcpy-pageable --param sync=1 | grep '^sum,' | cut -d, -f5-9 | srt)" \
	"$(printf '%s\n' cudaMemcpyAsync,H2D,1,2,20480 cuMemcpyDtoHAsync_v2,D2H,1,1,2048 cuMemcpyHtoDAsync_v2,H2D,1,1,8192 \
		cuMemcpy2DAsync_v2,H2D,1,1,1024 cudaMemcpy,H2D,0,1,4096 cuMemcpy,default,0,1,1024 | srt)"
eq "(report) mem-churn: allocations, registrations, their bytes, the peak outstanding" \
	"$(r mem-churn | cut -d, -f3-7,9 | tr '\n' ' ')" \
	"cuMemHostAlloc,alloc,1,0,32768,1155072 cuMemHostRegister_v2,alloc,1,0,8192,1155072 cudaFreeHost,free,1,0,,1155072 cudaHostRegister,alloc,1,0,8192,1155072 cudaHostUnregister,free,1,0,,1155072 cudaMalloc,alloc,1,0,1048576,1155072 cudaMallocHost,alloc,1,0,65536,1155072 "
# 44 calls, and the driver's initialization: the mock runtime calls
# cuInit on first use, under cudaLaunchKernel, whose probes (left to the
# driver) do not fold it.
eq "(new) cuda_api holds every call, and cuInit's once" \
	"$(q "SELECT count(*), sum(api = 'cuInit') FROM cuda_api WHERE pid = $pn")" "45,1 "
eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "
"$GPUREC" --data "$D" verify >/dev/null 2>&1; eq "the recording verifies" "$?" 0
finish
