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
for c in new:$pn old:$po; do
	n=${c%%:*} pid=${c#*:}
	eq "($n) a runtime call that crosses both layers is one row" \
		"$(q "SELECT api, op, bytes, ptr > 0, ret FROM cuda_mem WHERE pid = $pid") $(q "SELECT api, kind, bytes, ret FROM cuda_memcpy WHERE pid = $pid")" \
		"cudaMalloc,alloc,1048576,1,0  cudaMemcpy,H2D,4096,0 "
	eq "($n) the driver's own calls" \
		"$(q "SELECT api, ret FROM cuda_sync WHERE pid = $pid")" "cuCtxSynchronize,0 "
done
eq "(report) mem-churn: the allocation, its bytes, the peak outstanding" \
	"$("$GPUREC" --data "$D" --format csv --pid "$pn" report mem-churn | tr -d '\r' | tail -n +2 | cut -d, -f3-7,9)" \
	"cudaMalloc,alloc,1,0,1048576,1048576"
eq "(new) cuda_api holds every call" \
	"$(q "SELECT count(*) FROM cuda_api WHERE pid = $pn")" "25 "
eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "
"$GPUREC" --data "$D" verify >/dev/null 2>&1; eq "the recording verifies" "$?" 0
finish
