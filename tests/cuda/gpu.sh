#!/usr/bin/env bash
# gpu.sh - the gpu family (issue 18) without a GPU: gpurecd samples two
# scripted GPUs served by the mock NVML (tests/gpu-mock/libnvidia-ml.c)
# and every row comes back exactly; Xid lines written to /dev/kmsg (root)
# are recorded once, with their meaning, merged with NVML's report of the
# same Xid, and not again after a restart; the reports answer on the data.
set -uo pipefail
SUITE=gpu
. "$(dirname "$0")/lib.sh"

MOCK=${GPU_MOCK:-build/gpu-mock}
[ -e "$MOCK/libnvidia-ml.so.1" ] || { bad "mock NVML" "not built: run make bpf-test"; finish; exit 1; }
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"

# 1. Two GPUs, 50 ms samples.  Device 0: a utilization, power and clock
# sequence, a throttle (power cap, then thermal too, then none), ECC
# counters, NVLink CRC errors on both links, persistence turned off, a
# process; an ECC double-bit event.  Device 1: no ECC, no NVLink, an NVML
# Xid 79 at its third sample, lost at its fourth.
cat >"$T/gpus" <<'S'
driver 580.95.05
gpu 0 uuid=GPU-00000000-1111-2222-3333-444444444444 pci=00000000:3B:00.0 name="NVIDIA H100 80GB HBM3" mem_total=85899345920 power_limit=700000 nvlinks=2
gpu 1 uuid=GPU-55555555-6666-7777-8888-999999999999 pci=00000000:5E:00.0 name="NVIDIA H100 80GB HBM3" mem_total=85899345920 power_limit=700000 nvlinks=0
step 0 gpu 0 util=10 memutil=5 sm=1980 memclk=2619 power=100000 temp=40 used=1073741824 throttle=0 tx=100 rx=200 replay=7 sbe=2 dbe=0 remap_corr=1 remap_unc=0 pending=0 nvcrc_flit=5 nvcrc_data=1 nvreplay=0 nvrecovery=0 persist=1 proc=4242:536870912:50:20
step 1 gpu 0 util=90 memutil=60 power=650000 temp=61 throttle=0x4 sbe=5 used=2147483648
step 2 gpu 0 util=97 sm=1755 throttle=0x44 nvcrc_flit=7 replay=9 temp=88
step 3 gpu 0 util=20 sm=1980 power=120000 temp=70 throttle=0x0 persist=0 pending=1 procs=none
step 0 gpu 1 util=1 memutil=0 sm=345 memclk=2619 power=69000 temp=31 used=0 throttle=0x1
event 2 gpu 0 dbe
event 2 gpu 1 xid xid=79
lost 3 gpu 1
S
# The kernel log is left out here (GPURECD_KMSG empty): earlier tests'
# Xid lines are in it, and part 2 tests it.
rm -rf "$D"
GPURECD_KMSG= GR_MOCK_NVML="$T/gpus" LD_LIBRARY_PATH="$MOCK" start_gpurecd --no-cuda --no-sched --no-io --gpu-sample-ms 50
grep -q "gpu: 2 GPUs, driver 580.95.05, sampled every 50 ms; NVML Xid/ECC events$" "$T/gpurecd.log" && ok "logs the GPUs, driver, period and event sources" || bad "gpu log" "$(grep gpu: "$T/gpurecd.log")"
for _ in $(seq 100); do # until device 0 has taken 6 samples
	[ "$(q "SELECT count(*) FROM gpu WHERE gpu = 0")" -ge 6 ] 2>/dev/null && break; sleep 0.1
done
sleep 2.2 # the NVML Xid waits 2 s for a kernel log line
stop_gpurecd

eq "device 0: its first samples, exactly (counters as increases, NULL at the first reading; PCIe every 10 s)" \
	"$(q "SELECT util_gpu, util_mem, sm_clock, power_mw, temp_c, mem_used, coalesce(throttle, '-'), throttle_mask, coalesce(pcie_tx, '-'), coalesce(pcie_rx, '-'), coalesce(pcie_replays, '-'), coalesce(ecc_corrected, '-'), coalesce(ecc_uncorrected, '-'), remap_pending, remapped_corr, coalesce(nvlink_crc, '-'), ecc_corrected_total FROM gpu WHERE gpu = 0 ORDER BY ts LIMIT 5")" \
	"10,5,1980,100000,40,1073741824,-,0,102400,204800,-,-,-,0,1,-,2 90,60,1980,650000,61,2147483648,sw_power_cap,4,-,-,-,3,0,0,1,0,5 97,60,1755,650000,88,2147483648,\"sw_power_cap,hw_thermal\",68,-,-,-,0,0,0,1,4,5 20,60,1980,120000,70,2147483648,-,0,-,-,-,0,0,1,1,0,5 20,60,1980,120000,70,2147483648,-,0,-,-,-,0,0,1,1,0,5 "
eq "device 0: identity on every row" \
	"$(q "SELECT count(DISTINCT uuid || pci || name || mem_total || power_limit_mw), min(uuid), min(pci), min(name), min(mem_total), min(power_limit_mw) FROM gpu WHERE gpu = 0")" \
	"1,GPU-00000000-1111-2222-3333-444444444444,0000:3b:00.0,NVIDIA H100 80GB HBM3,85899345920,700000 "
eq "device 1: what it lacks is NULL; three samples, then lost" \
	"$(q "SELECT count(*), count(ecc_corrected), count(nvlink_crc), count(pcie_tx), min(throttle), min(sm_clock) FROM gpu WHERE gpu = 1")" \
	"3,0,0,0,idle,345 "
eq "gpu_process: the process at samples 0-2, then gone" \
	"$(q "SELECT count(*), min(pid), min(mem_used), max(mem_used), min(sm_util), min(mem_util), min(gpu), min(pci) FROM gpu_process")" \
	"3,4242,536870912,536870912,50,20,0,0000:3b:00.0 "
eq "gpu_event: throttles, ECC, persistence, the NVML Xid with its meaning, the lost GPU" \
	"$(q "SELECT gpu, kind, coalesce(xid, '-'), coalesce(detail, '-'), source, coalesce(meaning, '-') FROM gpu_event ORDER BY gpu, kind, detail")" \
	"0,ecc_uncorrected,-,-,nvml,- 0,persistence,-,off,nvml,- 0,throttle_start,-,hw_thermal,nvml,- 0,throttle_start,-,sw_power_cap,nvml,- 0,throttle_stop,-,hw_thermal,nvml,- 0,throttle_stop,-,sw_power_cap,nvml,- 1,gpu_lost,-,GPU is lost,nvml,- 1,xid,79,-,nvml,GPU has fallen off the bus (no longer reachable over PCIe) "
eq "every row's sample_ns measured" "$(q "SELECT count(*) FROM gpu WHERE sample_ns > 0") " "$(q "SELECT count(*) FROM gpu") "
eq "status.json: the gpu family" \
	"$(python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; print(g["enabled"], g["devices"], g["lost"], g["driver"])' "$D/status.json")" \
	"True 2 1 580.95.05"
eq "report gpu-health: per GPU, what went wrong" \
	"$("$GPUREC" --data "$D" --format csv report gpu-health | tail -n +2 | cut -d, -f2,4,5,8- | grep -v '^0,samples\|^0,temp\|^0,at_power\|^0,throttled' | tr -d '\r' | tr '\n' ' ')" \
	"0,persistence,1,off 0,ecc_corrected,3,errors while recorded; 5 since the driver loaded 0,remapped_rows,1,\"1 correctable, 0 uncorrectable; a reset is pending\" 0,nvlink_crc,4,CRC errors 1,samples,3,NVIDIA H100 80GB HBM3 1,xid 79,1,GPU has fallen off the bus (no longer reachable over PCIe) 1,gpu_lost,1,GPU is lost 1,temp_max_c,31,degrees C "
n0=$(q "SELECT count(*) FROM gpu WHERE gpu = 0" | tr -d ' ')
eq "report gpu-health: device 0's throttling and temperature" \
	"$("$GPUREC" --data "$D" --format csv report gpu-health | tr -d '\r' | awk -F, '$2 == 0 && ($4 ~ /^(throttled|temp|at_power)/ || $4 ~ /^"?throttled/) { print $4 "=" $5 }' | tr '\n' ' ')" \
	"$(awk -v n="$n0" 'BEGIN { printf "throttled sw_power_cap=%.1f throttled hw_thermal=%.1f temp_max_c=88 ", 200 / n, 100 / n }')"

# 2. Xids in the kernel log: one the NVML event reports too (merged), one
# only the log has; both once, with the pid and name the driver gave, and
# once only after a restart on the same directory.
tok="gr$$x$RANDOM"
cat >"$T/gpus2" <<'S'
driver 580.95.05
gpu 0 uuid=GPU-a pci=00000000:3B:00.0 name="NVIDIA H100 80GB HBM3"
gpu 1 uuid=GPU-b pci=00000000:5E:00.0 name="NVIDIA H100 80GB HBM3"
step 0 gpu 0 util=50
step 0 gpu 1 util=50
event 1 gpu 0 xid xid=13
S
D2="$T/data2"
D0=$D; D=$D2
GR_MOCK_NVML="$T/gpus2" LD_LIBRARY_PATH="$MOCK" start_gpurecd --no-cuda --no-sched --no-io --gpu-sample-ms 1000
echo "NVRM: Xid (PCI:0000:3b:00): 13, pid=$$, name=$tok, Graphics Exception: ESR 0x404600=0x80000002 ($tok)" >/dev/kmsg
echo "NVRM: Xid (PCI:0000:5e:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus. ($tok)" >/dev/kmsg
sleep 3.5
stop_gpurecd
eq "the two kernel log Xids, once each; the one NVML saw too merged" \
	"$(q "SELECT gpu, xid, source, coalesce(pid, '-'), coalesce(comm, '-'), meaning FROM gpu_event WHERE kind = 'xid' AND (text LIKE '%$tok%' OR source = 'nvml') ORDER BY gpu")" \
	"0,13,nvml+kmsg,$$,$tok,\"Graphics engine exception, mostly an app fault (e.g. out of bounds)\" 1,79,kmsg,-,-,GPU has fallen off the bus (no longer reachable over PCIe) "
eq "the Xid's text and action" \
	"$(q "SELECT text, action IS NOT NULL FROM gpu_event WHERE kind = 'xid' AND gpu = 1 AND text LIKE '%$tok%'")" \
	"\"Xid (PCI:0000:5e:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus. ($tok)\",1 "
GR_MOCK_NVML="$T/gpus" LD_LIBRARY_PATH="$MOCK" start_gpurecd --no-cuda --no-sched --no-io --gpu-sample-ms 1000
sleep 0.5
stop_gpurecd
eq "a restart does not record them again" \
	"$(q "SELECT count(*) FROM gpu_event WHERE kind = 'xid' AND text LIKE '%$tok%'")" "2 "
eq "report xid: each Xid with the process the driver named" \
	"$("$GPUREC" --data "$D" --format csv report xid | tr -d '\r' | grep -c "$tok\|,$$,")" "1"
D=$D0

# 3. The crash view: a process hangs in cuInit (the mock driver's, as the
# real one does on a host whose GPU fell off the bus) and the driver logs
# an Xid 79 naming it meanwhile; `report xid` shows it with its off-CPU
# wait and the stack through cuInit, and offcpu-top lists it.
M=build/cuda-tests/mock
H=build/cuda-tests/hung
[ -x $H ] || { bad "hung" "not built: run make bpf-test"; finish; exit 1; }
D3="$T/data3"
D=$D3
GPURECD_KMSG=/dev/kmsg GR_MOCK_NVML="$T/gpus2" LD_LIBRARY_PATH="$MOCK" start_gpurecd --cuda-lib $M/libcuda.so.1 --cuda-lib $M/libcudart.so.13
GR_MOCK_CUINIT_HANG=12 $H init >"$T/init.out" 2>&1 & ph=$!
sleep 1
echo "NVRM: Xid (PCI:0000:3b:00): 79, pid=$ph, name=hung, GPU has fallen off the bus. ($tok)" >/dev/kmsg
sleep 2.5 # the Xid waits 2 s for NVML's report of it
rep() { "$GPUREC" --data "$D" --format csv "$@" | tr -d '\r' | tail -n +2; }
eq "report xid, while it hangs: the Xid, the process, its wait through cuInit" \
	"$(rep report xid | awk -F, -v p="$ph" '$6 == p && $4 == 79 { print $5 "," $7 "," $8 "," ($NF ~ /^S 0\.[0-9]+ s tid [0-9]+: .*;cuInit;/) }')" \
	"kmsg,hung,0,1"
eq "offcpu-top, while it hangs: the process, its top stack through cuInit" \
	"$(rep --pid $ph report offcpu-top | awk -F, '{ print $1 "," $4 "," ($NF ~ /;cuInit;/) }' | head -1)" "$ph,S,1"
wait $ph
sleep 0.3
stop_gpurecd
eq "report xid, after: its cuInit call, failed (the driver gave up)" \
	"$(rep report xid | awk -F, -v p="$ph" '$6 == p && $4 == 79 { print $8 "," $9 "," $10 }' | sed 's/ at -[0-9.]* s//')" "1,1,cuInit ret 999"
D=$D0

# 4. No NVML: the family is off, with one line, and the rest records.
start_gpurecd --no-cuda --no-sched --no-io
stop_gpurecd
eq "without NVML: one line, and gpurecd runs" \
	"$(grep -c "gpu: no NVML (libnvidia-ml.so.1: cannot open shared object file" "$T/gpurecd.log")" 1
finish
