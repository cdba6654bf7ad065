"""nvml_cost.py - on a GPU machine: the wall and CPU time of each NVML call
the gpu family makes (recorder/gpu/gpu.c), per call, on GPU 0, N times
each; the figures behind its choice of calls (docs/gpu.md, BENCHMARKS.md).
Usage: python3 tests/gpu/nvml_cost.py [N]"""
import ctypes as C, sys, time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
nv = C.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
h = C.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, C.byref(h)) == 0
u32, u64 = C.c_uint(), C.c_ulonglong()
u32b, u32c, u32d = C.c_uint(), C.c_uint(), C.c_uint()
buf = (C.c_ubyte * 4096)()

class Field(C.Structure):
    _fields_ = [("fieldId", C.c_uint), ("scopeId", C.c_uint),
                ("timestamp", C.c_longlong), ("latencyUsec", C.c_longlong),
                ("valueType", C.c_uint), ("nvmlReturn", C.c_uint),
                ("value", C.c_ulonglong)]
fields = (Field * 2)()
fields[0].fieldId, fields[1].fieldId = 197, 198
mem2 = (C.c_ubyte * 40)()
C.cast(mem2, C.POINTER(C.c_uint))[0] = 40 | (2 << 24)
n = C.c_uint()
calls = [
    ("GetUtilizationRates", lambda: nv.nvmlDeviceGetUtilizationRates(h, buf)),
    ("GetClockInfo(SM)", lambda: nv.nvmlDeviceGetClockInfo(h, 1, C.byref(u32))),
    ("GetClockInfo(MEM)", lambda: nv.nvmlDeviceGetClockInfo(h, 2, C.byref(u32))),
    ("GetPowerUsage", lambda: nv.nvmlDeviceGetPowerUsage(h, C.byref(u32))),
    ("GetEnforcedPowerLimit", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h, C.byref(u32))),
    ("GetTemperature", lambda: nv.nvmlDeviceGetTemperature(h, 0, C.byref(u32))),
    ("GetMemoryInfo_v2", lambda: nv.nvmlDeviceGetMemoryInfo_v2(h, mem2)),
    ("GetCurrentClocksEventReasons", lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h, C.byref(u64))),
    ("GetPcieThroughput(TX)", lambda: nv.nvmlDeviceGetPcieThroughput(h, 0, C.byref(u32))),
    ("GetFieldValues(PCIe TX,RX bytes)", lambda: nv.nvmlDeviceGetFieldValues(h, 2, fields)),
    ("GetPcieReplayCounter", lambda: nv.nvmlDeviceGetPcieReplayCounter(h, C.byref(u32))),
    ("GetTotalEccErrors(corr)", lambda: nv.nvmlDeviceGetTotalEccErrors(h, 0, 0, C.byref(u64))),
    ("GetTotalEccErrors(unc)", lambda: nv.nvmlDeviceGetTotalEccErrors(h, 1, 0, C.byref(u64))),
    ("GetRemappedRows", lambda: nv.nvmlDeviceGetRemappedRows(h, C.byref(u32), C.byref(u32b), C.byref(u32c), C.byref(u32d))),
    ("GetRetiredPagesPendingStatus", lambda: nv.nvmlDeviceGetRetiredPagesPendingStatus(h, C.byref(u32))),
    ("GetPersistenceMode", lambda: nv.nvmlDeviceGetPersistenceMode(h, C.byref(u32))),
    ("GetComputeRunningProcesses_v3", lambda: (n.__setattr__("value", 64), nv.nvmlDeviceGetComputeRunningProcesses_v3(h, C.byref(n), buf))[1]),
    ("GetProcessUtilization", lambda: (n.__setattr__("value", 64), nv.nvmlDeviceGetProcessUtilization(h, buf, C.byref(n), C.c_ulonglong(0)))[1]),
    ("GetNvLinkState(0)", lambda: nv.nvmlDeviceGetNvLinkState(h, 0, C.byref(u32))),
]
tot_w = tot_c = 0
print(f"{'call':36s} {'ret':>4s} {'wall us':>9s} {'cpu us':>8s}")
for name, f in calls:
    r = f()
    w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    reps = N if "PcieThroughput" not in name else max(N // 10, 5)
    for _ in range(reps):
        f()
    w = (time.perf_counter_ns() - w0) / reps / 1e3
    c = (time.thread_time_ns() - c0) / reps / 1e3
    print(f"{name:36s} {r:4d} {w:9.1f} {c:8.1f}")
    if r == 0 and "PcieThroughput" not in name:
        tot_w += w; tot_c += c
print(f"{'sum of supported (no PcieThroughput)':36s}      {tot_w:9.1f} {tot_c:8.1f}")
print("fields:", [(f.nvmlReturn, f.valueType, f.value) for f in fields])
