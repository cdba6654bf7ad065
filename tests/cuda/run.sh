#!/usr/bin/env bash
# run.sh - gpurecd records a real CUDA program's runtime calls (root, eBPF).
#
# tests/cuda/calls.cu makes a known sequence of calls; without a GPU each
# fails fast (cudaErrorInsufficientDriver, 35) but is made, with its real
# arguments.  It runs three ways while gpurecd records: (a) cudart shared
# from the toolkit, (b) nvcc's default static cudart, (c) a copy of
# libcudart at a path gpurecd has never seen (a "venv"), started after
# gpurecd; and (d) a stripped copy of (a) started before gpurecd: its
# kernels registered unseen and its stubs have no symbols, so their names
# come from its registration code.  Every row must come back exactly.
#
# Not root, no nvcc or no BPF: skipped with a reason, except under CI=true,
# where that is a failure.
set -uo pipefail
SUITE=cuda
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
CUDA_LIB=${CUDA_LIB:-/usr/local/cuda/lib64}
[ -x "$NVCC" ] || { . "$(dirname "$0")/lib.sh"; skip "no nvcc at $NVCC"; }
. "$(dirname "$0")/lib.sh"

# Build the program both ways (once per tree: cached under build/).
mkdir -p build/cuda-tests
for v in shared static; do
	out=build/cuda-tests/calls_$v
	if [ ! -x "$out" ] || [ tests/cuda/calls.cu -nt "$out" ]; then
		flag=""; [ $v = shared ] && flag="-cudart shared"
		"$NVCC" $flag -o "$out" tests/cuda/calls.cu 2>"$T/nvcc.log" ||
			{ cat "$T/nvcc.log"; bad "nvcc $v" "build failed"; finish; exit 1; }
	fi
done
mkdir -p "$T/venv/lib"
cp "$CUDA_LIB"/libcudart.so.13* "$T/venv/lib/"

# (d) stripped, started now; it makes its calls once gpurecd is ready.
strip -o "$T/calls_stripped" build/cuda-tests/calls_shared
"$T/calls_stripped" "$T/go.d" 0.5 >"$T/d.out" & pd=$!
sleep 0.3 # its kernels register before gpurecd starts

start_gpurecd
touch "$T/go.d"; wait $pd

# gpurec status sees the live recorder: its status.json and its lock.
eq "(status) while recording: state, running, pid, cuda family, fresh, one open segment" \
	"$("$GPUREC" --data "$D" --format json status | python3 -c '
import json, sys
d = json.load(sys.stdin)["dirs"][0]; r = d["recorder"]
print(r["state"], r["running"], r["pid"], r["families"]["cuda"], r["updated_age_s"] < 5, d["segments"]["open"])')" \
	"recording True $dpid True True 1"
# Its memory: resident and peak from /proc, the ELF cache's indexes (the
# static programs' symbols were read for naming), and the text line.
eq "(status) gpurecd's memory: RSS, peak, ELF cache files and bytes" \
	"$("$GPUREC" --data "$D" --format json status | python3 -c '
import json, sys
m = json.load(sys.stdin)["dirs"][0]["recorder"]["status_file"]["memory"]
print(0 < m["rss_bytes"] <= m["peak_rss_bytes"], m["elf_cache_read"] >= 1, m["elf_cache_bytes"] > 0,
      m["bpf_maps_bytes"] > 0, m["kernel_names_bytes"] >= 0, m["writer_bytes"] > 0, m["sheds"], m["elf_cache_evicted"])')" \
	"True True True True True True 0 0"
"$GPUREC" --data "$D" status | grep -q "^ *memory [0-9.]* MiB, peak [0-9.]* MiB$" &&
	"$GPUREC" --data "$D" status | grep -q "^ *writer [0-9.]*, BPF maps [0-9.]*, ELF [0-9.]* ([1-9][0-9]* files), kernel names [0-9.]* MiB$" &&
	ok "(status) the memory lines" || bad "(status) memory lines" "$("$GPUREC" --data "$D" status)"

# (a) shared cudart: attached at start from the toolkit's path.
build/cuda-tests/calls_shared 0 0.5 >"$T/a.out" & pa=$!; wait $pa
# (b) static cudart: a new executable, found when it execs; it waits a
#     moment first (see docs/recorder.md: discovery latency).
build/cuda-tests/calls_static 0.7 0.5 >"$T/b.out" & pb=$!; wait $pb
# (c) a libcudart copy gpurecd has never seen, in a process started now.
LD_LIBRARY_PATH="$T/venv/lib" build/cuda-tests/calls_shared 0.7 0.5 >"$T/c.out" & pc=$!; wait $pc
sleep 0.3
stop_gpurecd
grep -q "attached .*libcudart.*inode $(stat -L -c %i "$CUDA_LIB/libcudart.so.13"))" "$T/gpurecd.log" && ok "logs the toolkit's libcudart" || bad "attach log" "$(cat "$T/gpurecd.log")"
grep -q "attached .* to $T/venv/lib/libcudart.so" "$T/gpurecd.log" && ok "logs the venv copy" || bad "venv attach log" "$(grep attached "$T/gpurecd.log")"
grep -q "attached .*calls_static" "$T/gpurecd.log" && ok "logs the static executable" || bad "static attach log" "$(grep attached "$T/gpurecd.log")"
grep -q "cuda: read 3 kernel registrations from the code of $T/calls_stripped (a stub of pid $pd has no symbol)" "$T/gpurecd.log" && ok "(d) reads the stripped program's registrations" || bad "(d) registrations log" "$(grep -v attached "$T/gpurecd.log")"

# pv CASE NAME: a host pointer the program printed ("ptr NAME VALUE").
pv() { sed -n "s/^ptr $2 //p" "$T/$1.out"; }

for case in a:$pa b:$pb c:$pc d:$pd; do
	n=${case%%:*} pid=${case#*:}
	h=$(pv $n host) pin=$(pv $n pin) pg=$(pv $n pg)
	# A stub's symbol has internal linkage (L); the registered name not.
	tiled=_ZN2nsL5tiledIfLi16EEEvPT_; [ $n = d ] && tiled=_ZN2ns5tiledIfLi16EEEvPT_
	eq "($n) launches: dims, smem, stream, names, api, ret" \
		"$(q "SELECT count(*), grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem, stream, kernel, kernel_mangled, api, ret FROM cuda_kernel WHERE pid = $pid GROUP BY kernel_mangled ORDER BY kernel_mangled")" \
		"5,64,1,1,256,1,1,4096,4660,\"saxpy(float*, float const*, float, int)\",_Z5saxpyPfPKffi,cudaLaunchKernel,35 3,4,2,1,128,1,1,0,0,\"scale(float*, float)\",_Z5scalePff,cudaLaunchKernel,35 2,8,8,2,16,16,4,1024,0,\"void ns::tiled<float, 16>(float*)\",$tiled,cudaLaunchKernel,35 "
	# d and e stay NULL (failed cudaMalloc): 0.  3D: srcPtr host+4096,
	# dstPtr 0x7000; a symbol is no pointer.
	eq "($n) copies: bytes, kind, async, stream, src, dst" \
		"$(q "SELECT api, bytes, kind, async, stream, ret, src, dst FROM cuda_memcpy WHERE pid = $pid ORDER BY ts")" \
		"cudaMemcpy,4096,H2D,0,,35,$h,0 cudaMemcpy,8192,D2H,0,,35,0,$h cudaMemcpy,8192,D2H,0,,35,0,$h cudaMemcpy,1048576,D2D,0,,35,0,0 cudaMemcpyAsync,65536,H2D,1,4660,35,$h,0 cudaMemcpyAsync,4096,H2D,1,4660,35,$pin,0 cudaMemcpyAsync,16384,D2H,1,4660,35,0,$pg cudaMemcpy2DAsync,512,H2D,1,4660,35,$h,0 cudaMemcpy3D,512,H2D,0,,35,$((h + 4096)),28672 cudaMemcpyToSymbol,64,H2D,0,,35,$h, cudaMemcpy,100,default,0,,35,$((h + 8192)),$pg "
	eq "($n) memsets" \
		"$(q "SELECT api, bytes, async, stream, ret FROM cuda_memset WHERE pid = $pid ORDER BY ts")" \
		"cudaMemset,512,0,,35 cudaMemsetAsync,256,1,4660,35 "
	eq "($n) allocations and frees" \
		"$(q "SELECT api, op, bytes, ptr, ret FROM cuda_mem WHERE pid = $pid ORDER BY ts")" \
		"cudaMalloc,alloc,1048576,,35 cudaMalloc,alloc,4096,,35 cudaFree,free,,0,35 cudaFree,free,,0,35 cudaMallocHost,alloc,4096,,35 cudaHostAlloc,alloc,8192,,35 cudaHostRegister,alloc,16384,,35 "
	eq "($n) synchronizations" \
		"$(q "SELECT api, stream, ret FROM cuda_sync WHERE pid = $pid ORDER BY ts")" \
		"cudaDeviceSynchronize,,35 cudaStreamSynchronize,4660,35 "
	eq "($n) cuda_api holds every call" \
		"$(q "SELECT count(*), sum(dur > 0), min(comm) FROM cuda_api WHERE pid = $pid AND api NOT LIKE '\_\_cuda%' ESCAPE '\\'")" \
		"32,32,$(case $n in b) echo calls_static;; d) echo calls_stripped;; *) echo calls_shared;; esac) "
done

# The canned reports over (a)'s known calls (--pid: the common options
# apply); columns that hold times are left out, they vary.
r() { "$GPUREC" --data "$D" --format csv --pid "$pa" report "$@" | tr -d '\r' | tail -n +2; }
eq "(report) top-kernels: launches, share, shapes, then the kernel" \
	"$(r top-kernels | cut -d, -f1-4,6- | tr '\n' ' ')" \
	'5,50.0,1,64x1x1/256x1x1,"saxpy(float*, float const*, float, int)" 3,30.0,1,4x2x1/128x1x1,"scale(float*, float)" 2,20.0,1,8x8x2/16x16x4,"void ns::tiled<float, 16>(float*)" '
eq "(report) top-kernels --param limit=1" "$(r top-kernels --param limit=1 | wc -l)" 1
eq "(report) cuda-api-sum: calls and errors per API" \
	"$(r cuda-api-sum | awk -F, '{ print $NF "," $1 "," $10 }' | sort | tr '\n' ' ')" \
	"__cudaRegisterFunction,3,0 cudaDeviceSynchronize,1,1 cudaFree,2,2 cudaHostAlloc,1,1 cudaHostRegister,1,1 cudaLaunchKernel,10,10 cudaMalloc,2,2 cudaMallocHost,1,1 cudaMemcpy,5,5 cudaMemcpy2DAsync,1,1 cudaMemcpy3D,1,1 cudaMemcpyAsync,3,3 cudaMemcpyToSymbol,1,1 cudaMemset,1,1 cudaMemsetAsync,1,1 cudaStreamSynchronize,1,1 "
eq "(report) cuda-errors: by API and code, named" \
	"$(r cuda-errors | cut -d, -f1-6 | tr '\n' ' ')" \
	"$(for c in cudaLaunchKernel:10 cudaMemcpy:5 cudaMemcpyAsync:3 cudaFree:2 cudaMalloc:2 cudaDeviceSynchronize:1 cudaHostAlloc:1 cudaHostRegister:1 cudaMallocHost:1 cudaMemcpy2DAsync:1 cudaMemcpy3D:1 cudaMemcpyToSymbol:1 cudaMemset:1 cudaMemsetAsync:1 cudaStreamSynchronize:1; do printf '%s,35,cudaErrorInsufficientDriver,%s,calls_shared,%s ' ${c%:*} $pa ${c#*:}; done)"
eq "(report) sync-long: each synchronization, its stream and code" \
	"$(r sync-long | awk -F, '{ print $4 "," $6 "," $7 }' | sort | tr '\n' ' ')" \
	"cudaDeviceSynchronize,,35 cudaStreamSynchronize,4660,35 "
eq "(report) memcpy-sum: by direction and mode" \
	"$(r memcpy-sum | awk -F, '{ print $1 "," $2 "," $3 "," $4 "," $NF }' | tr '\n' ' ')" \
	"D2D,sync,1,1048576,1 H2D,async,3,70144,3 D2H,async,1,16384,1 D2H,sync,2,16384,2 H2D,sync,3,4672,3 default,sync,1,100,1 "
# Reports that read the summaries (sum_*) print what their raw-event form
# prints, here over a real recording.
for rr in top-kernels cuda-api-sum memcpy-sum "process --param pid=$pa"; do
	got=$(r $rr) raw=$(r $rr --raw)
	if [ "$got" == "$raw" ] && [ -n "$got" ]; then ok "(report) $rr from summaries equals --raw"
	else bad "(report) $rr from summaries equals --raw" "[$got] vs [$raw]"; fi
done
# memcpy-sync and memcpy-pageable over (a): no GPU, so cudaMallocHost,
# cudaHostAlloc and cudaHostRegister failed and every host pointer is
# pageable (the failed pinned calls' buffers too).  Sorted: rows of equal
# standing are ordered by time, which varies.
h=$(pv a host) pin=$(pv a pin) pg=$(pv a pg)
srt() { LC_ALL=C sort | tr '\n' ' '; }
hex() { printf '0x%x' "$1"; } # reports print pointers in hex
eq "(report) memcpy-sync: per thread, the sync API copies and the async ones on pageable memory; each call" \
	"$(r memcpy-sync | cut -d, -f1,5-10,13 | srt)" \
	"$(printf '%s\n' "thread,sync API,,,,7,1069732,7" "thread,async on pageable,,,,4,86528,4" \
		"call,sync API,cudaMemcpy,H2D,pageable,1,4096,1" "call,sync API,cudaMemcpy,D2H,pageable,1,8192,1" \
		"call,sync API,cudaMemcpy,D2H,pageable,1,8192,1" "call,sync API,cudaMemcpy,D2D,,1,1048576,1" \
		"call,sync API,cudaMemcpy3D,H2D,pageable,1,512,1" "call,sync API,cudaMemcpyToSymbol,H2D,pageable,1,64,1" \
		"call,sync API,cudaMemcpy,default,pageable,1,100,1" "call,async on pageable,cudaMemcpyAsync,H2D,pageable,1,65536,1" \
		"call,async on pageable,cudaMemcpyAsync,H2D,pageable,1,4096,1" "call,async on pageable,cudaMemcpyAsync,D2H,pageable,1,16384,1" \
		"call,async on pageable,cudaMemcpy2DAsync,H2D,pageable,1,512,1" | srt)"
eq "(report) memcpy-sync: a thread's blocked time, longest call and its ts" \
	"$(r memcpy-sync | grep '^thread,.*,sync API,' | cut -d, -f11,12,14)" \
	"$(q "SELECT sum(dur), max(dur), (SELECT ts FROM cuda_memcpy WHERE pid = $pa AND async = 0 ORDER BY dur DESC, ts LIMIT 1) FROM cuda_memcpy WHERE pid = $pa AND async = 0" | tr -d ' ')"
eq "(report) memcpy-sync --param limit=2: the threads, and the two longest calls (every copy of (a) blocks)" \
	"$(r memcpy-sync --param limit=2 | cut -d, -f1 | uniq -c | tr -s ' ' | tr -d '\n') $(r memcpy-sync --param limit=2 | grep '^call,' | cut -d, -f6,10,11 | tr '\n' ' ')" \
	" 2 thread 2 call $(q "SELECT api, bytes, dur FROM cuda_memcpy WHERE pid = $pa ORDER BY dur DESC, ts LIMIT 2")"
eq "(report) memcpy-sync: rows ordered, threads then calls, longest first" \
	"$(r memcpy-sync | awk -F, '$1 != s { s = $1; n++; p = "" } p != "" && $11 + 0 > p + 0 { bad = 1 } { p = $11 } END { print n, bad + 0 }')" "2 0"
eq "(report) memcpy-pageable: async copies of pageable memory, per API and direction; each call's pointers" \
	"$(r memcpy-pageable | cut -d, -f1,5-9,12-14 | srt)" \
	"$(printf '%s\n' "sum,cudaMemcpyAsync,H2D,1,2,69632,2,," "sum,cudaMemcpy2DAsync,H2D,1,1,512,1,," \
		"sum,cudaMemcpyAsync,D2H,1,1,16384,1,," "call,cudaMemcpyAsync,H2D,1,1,65536,1,$(hex $h),0x0" \
		"call,cudaMemcpyAsync,H2D,1,1,4096,1,$(hex $pin),0x0" "call,cudaMemcpyAsync,D2H,1,1,16384,1,0x0,$(hex $pg)" \
		"call,cudaMemcpy2DAsync,H2D,1,1,512,1,$(hex $h),0x0" | srt)"
eq "(report) memcpy-pageable --param sync=1: the blocking calls too (D2D has no host side)" \
	"$(r memcpy-pageable --param sync=1 | grep '^sum,' | cut -d, -f5-9,12 | srt) $(r memcpy-pageable --param sync=1 | grep -c '^call,')" \
	"$(printf '%s\n' cudaMemcpyAsync,H2D,1,2,69632,2 cudaMemcpy2DAsync,H2D,1,1,512,1 cudaMemcpyAsync,D2H,1,1,16384,1 \
		cudaMemcpy,H2D,0,1,4096,1 cudaMemcpy,D2H,0,2,16384,2 cudaMemcpy,default,0,1,100,1 \
		cudaMemcpy3D,H2D,0,1,512,1 cudaMemcpyToSymbol,H2D,0,1,64,1 | srt) 10"
eq "(report) memcpy-pageable --param limit=1: the sums and the longest call" \
	"$(r memcpy-pageable --param limit=1 | grep '^call,' | cut -d, -f5,9,10)" \
	"$(q "SELECT api, bytes, dur FROM cuda_memcpy WHERE pid = $pa AND async = 1 ORDER BY dur DESC, ts LIMIT 1" | sed 's/ $//')"
"$GPUREC" --data "$D" report top-kernels --param nope=1 >/dev/null 2>"$T/rep.err"
eq "(report) an unknown parameter: exit 1, named" "$?:$(cat "$T/rep.err")" \
	"1:gpurec: report top-kernels takes no parameter 'nope' (gpurec report list shows its parameters)"
"$GPUREC" --data "$D" report top-kernels --param limit=ten >/dev/null 2>"$T/rep.err"
eq "(report) a bad value: exit 1, named" "$?:$(cat "$T/rep.err")" \
	"1:gpurec: bad --param 'limit=ten': limit takes a whole number, 0 or more"
"$GPUREC" --data "$D" report process >/dev/null 2>"$T/rep.err"
eq "(report) a required parameter left out: exit 1, named" "$?:$(cat "$T/rep.err")" \
	"1:gpurec: report process needs --param pid=… (the process id)"
"$GPUREC" --data "$D" report no-such >/dev/null 2>"$T/rep.err"
eq "(report) an unknown report: exit 1, named" "$?:$(cat "$T/rep.err")" \
	"1:gpurec: no report 'no-such' (gpurec report list shows them)"

# export over the real calls.  perfetto: every row once, each on its
# thread, nesting as Perfetto requires, named; sqlite: what gpurec sql has.
"$GPUREC" --data "$D" export --format perfetto -o "$T/t.json" 2>"$T/exp.err"
eq "(export) perfetto: exit 0, the summary line alone on stderr" \
	"$?:$(grep -cE '^exported [0-9,]+ rows from [0-9]+ segments? to .* \([0-9.]+ [kMG]?B\) in [0-9]+\.[0-9] s$' "$T/exp.err"):$(wc -l <"$T/exp.err")" "0:1:1"
B0=$(q "SELECT min(start_ts) FROM segments" | tr -d ' ')
python3 tests/cli/check_trace.py "$T/t.json" "$B0" >"$T/t.facts"
others="SELECT api FROM cuda_kernel UNION ALL SELECT api FROM cuda_memcpy UNION ALL SELECT api FROM cuda_memset UNION ALL SELECT api FROM cuda_mem UNION ALL SELECT api FROM cuda_sync UNION ALL SELECT api FROM cuda_graph"
want="format OK|"
for t in block_io cuda_api cuda_graph cuda_kernel cuda_mem cuda_memcpy cuda_memset cuda_sync file_io nccl offcpu runq; do
	w=""; [ $t = cuda_api ] && w="WHERE api NOT IN ($others)"
	row=$(q "SELECT count(*), ifnull(sum(ts - $B0), 0), ifnull(sum(dur), 0) FROM $t $w" | tr -d ' ')
	[ "${row%%,*}" = 0 ] || want+="X $t ${row//,/ }|"
done
eq "(export) perfetto: an X event per row of each table, ts and dur exact" \
	"$(grep -E '^(format|X) ' "$T/t.facts" | tr '\n' '|')" "$want"
# (Off-CPU and file rows of these short programs come and go with timing:
# counted above when there, not required.)
eq "(export) perfetto: the recording has every kind of call to draw" \
	"$(grep -cE '^X (cuda_api|cuda_kernel|cuda_memcpy|cuda_memset|cuda_mem|cuda_sync) ' "$T/t.facts")" 6
threads=$(q "SELECT count(*) FROM (SELECT pid, tid FROM cuda_api UNION SELECT pid, tid FROM offcpu UNION SELECT pid, tid FROM runq UNION SELECT pid, tid FROM file_io UNION SELECT pid, tid FROM nccl)" | tr -d ' ')
lanes=$(grep '^lanes ' "$T/t.facts" | cut -d' ' -f2)
eq "(export) perfetto: a thread_name per thread and lane; every track named once" \
	"$(grep -E '^(M thread_name|unnamed|idle-names) ' "$T/t.facts" | tr '\n' '|')" \
	"M thread_name $((threads + lanes))|unnamed 0|idle-names 0|"
eq "(export) perfetto: the slices of every thread nest (Perfetto drops those that do not)" \
	"$(grep -E '^(thread-overlaps|lane-overlaps) ' "$T/t.facts" | tr '\n' '|')" "thread-overlaps 0|lane-overlaps 0|"
eq "(export) perfetto: every field DevTools reads; every time a double holds to the ns" \
	"$(grep -E '^(missing-fields|float-loss|float-overlaps) ' "$T/t.facts" | tr '\n' '|')" \
	"missing-fields 0|float-loss 0|float-overlaps 0|"
got=$(python3 - "$T/t.json" "$pa" "$pb" "$pd" <<'PY'
import decimal, json, sys
d = json.load(open(sys.argv[1]), parse_float=decimal.Decimal)["traceEvents"]
pa, pb, pd = (int(p) for p in sys.argv[2:5])
names = {e["pid"]: e["args"]["name"] for e in d if e["ph"] == "M" and e["name"] == "process_name"}
x = sorted((e for e in d if e["ph"] == "X" and e["pid"] == pa), key=lambda e: e["ts"])
print(names[pa], names[pb], names[pd])
print("|".join(sorted({e["name"] for e in x if e["cat"] == "cuda_kernel"})))
k = [e for e in x if e["name"].startswith("void ns::tiled")][0]["args"]
print(k["grid_x"], k["grid_y"], k["grid_z"], k["block_x"], k["block_y"], k["block_z"], k["shared_mem"], k["kernel_mangled"], k["api"], k["ret"])
print(" ".join("%s,%s,%s" % (e["name"], e["args"]["bytes"], e["args"]["kind"]) for e in x if e["cat"] == "cuda_memcpy"))
print(" ".join(e["name"] for e in x if e["cat"] in ("cuda_api", "cuda_sync", "cuda_mem", "cuda_memset")))
PY
)
eq "(export) perfetto: processes named from the process table" "$(sed -n 1p <<<"$got")" "calls_shared calls_static calls_stripped"
eq "(export) perfetto: launches named by kernel, with dims and api" "$(sed -n 2,3p <<<"$got" | tr '\n' '|')" \
	"saxpy(float*, float const*, float, int)|scale(float*, float)|void ns::tiled<float, 16>(float*)|8 8 2 16 16 4 1024 _ZN2nsL5tiledIfLi16EEEvPT_ cudaLaunchKernel 35|"
eq "(export) perfetto: copies with bytes and kind, in order" "$(sed -n 4p <<<"$got")" \
	"cudaMemcpy,4096,H2D cudaMemcpy,8192,D2H cudaMemcpy,8192,D2H cudaMemcpy,1048576,D2D cudaMemcpyAsync,65536,H2D cudaMemcpyAsync,4096,H2D cudaMemcpyAsync,16384,D2H cudaMemcpy2DAsync,512,H2D cudaMemcpy3D,512,H2D cudaMemcpyToSymbol,64,H2D cudaMemcpy,100,default"
eq "(export) perfetto: registrations, allocations, memsets and syncs named by api" "$(sed -n 5p <<<"$got")" \
	"__cudaRegisterFunction __cudaRegisterFunction __cudaRegisterFunction cudaMalloc cudaMalloc cudaMemset cudaMemsetAsync cudaDeviceSynchronize cudaStreamSynchronize cudaFree cudaFree cudaMallocHost cudaHostAlloc cudaHostRegister"
"$GPUREC" --data "$D" export --format sqlite -o "$T/rec.db" 2>"$T/exp.err"
eq "(export) sqlite: exit 0, the summary line alone on stderr" \
	"$?:$(grep -cE '^exported [0-9,]+ rows from [0-9]+ segments? to .* \([0-9.]+ [kMG]?B\) in [0-9]+\.[0-9] s$' "$T/exp.err"):$(wc -l <"$T/exp.err")" "0:1:1"
eq "(export) sqlite: every table's rows, columns, types and values as gpurec sql has them" \
	"$(bash tests/cli/sqlite_diff.sh "$GPUREC" "$T/rec.db" cuda_kernel cuda_memcpy cuda_memset cuda_mem cuda_sync cuda_graph cuda_api nccl offcpu runq block_io file_io process drops -- --data "$D")" ""
eq "(export) sqlite: (a)'s copies read back by the sqlite3 CLI" \
	"$(sqlite3 -csv "$T/rec.db" "SELECT api, bytes, kind, async, stream, ret FROM cuda_memcpy WHERE pid = $pa ORDER BY ts" | tr '\n' ' ')" \
	"cudaMemcpy,4096,H2D,0,,35 cudaMemcpy,8192,D2H,0,,35 cudaMemcpy,8192,D2H,0,,35 cudaMemcpy,1048576,D2D,0,,35 cudaMemcpyAsync,65536,H2D,1,4660,35 cudaMemcpyAsync,4096,H2D,1,4660,35 cudaMemcpyAsync,16384,D2H,1,4660,35 cudaMemcpy2DAsync,512,H2D,1,4660,35 cudaMemcpy3D,512,H2D,0,,35 cudaMemcpyToSymbol,64,H2D,0,,35 cudaMemcpy,100,default,0,,35 "

eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "
eq "(status) after SIGTERM: stopped; every table's count is SQL's" \
	"$("$GPUREC" --data "$D" --format json status | python3 -c '
import json, subprocess, sys
gpurec, data = sys.argv[1:]
d = json.load(sys.stdin)["dirs"][0]
diff = []
for t, n in d["events"]["tables"].items():
    out = subprocess.run([gpurec, "--data", data, "--format", "json", "sql", f"SELECT count(*) AS n FROM {t}"], capture_output=True, text=True, check=True).stdout
    if json.loads(out)[0]["n"] != n["events"]:
        diff.append(t)
print(d["recorder"]["state"], d["recorder"]["running"], d["segments"]["open"], d["events"]["tables"]["cuda_api"]["events"] > 0, diff or "same")' "$GPUREC" "$D")" \
	"stopped False 0 True same"
"$GPUREC" --data "$D" verify >/dev/null 2>&1; eq "the recording verifies" "$?" 0
finish
