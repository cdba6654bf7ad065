"""gpu_work.py - the workload of tests/gpu/gpu_health.sh: "utilization is
not work".  Phase 1 (WORK_S seconds) multiplies 4096x4096 matrices as fast
as it can; phase 2 (SPIN_S seconds) does one such multiply, then spins the
GPU (torch.cuda._sleep) for about 2.6 times as long, so the GPU stays busy
while launches and multiplies per second fall about 3x.  Prints one JSON
line per second (phase, matmuls in that second, torch's memory_reserved)
and, at the end, its totals."""
import json, os, sys, time
import torch

work_s, spin_s = float(sys.argv[1]), float(sys.argv[2])
dev = torch.device("cuda")
a = torch.randn(4096, 4096, device=dev)
b = torch.randn(4096, 4096, device=dev)
torch.cuda.synchronize()
# How long one multiply takes, and the spin cycles that take twice that.
t = time.time()
for _ in range(50):
    c = a @ b
torch.cuda.synchronize()
mm_s = (time.time() - t) / 50
t = time.time()
torch.cuda._sleep(10_000_000)
torch.cuda.synchronize()
cycles_per_s = 10_000_000 / (time.time() - t)
spin = int(2.6 * mm_s * cycles_per_s)
print(json.dumps({"pid": os.getpid(), "matmul_ms": round(mm_s * 1e3, 3),
                  "spin_cycles": spin}), flush=True)

def phase(name, secs, spinning):
    end = time.time() + secs
    n, sec_start = 0, time.time()
    total = 0
    while time.time() < end:
        c = a @ b
        if spinning:
            torch.cuda._sleep(spin)
        n += 1
        if n % 8 == 0:
            torch.cuda.synchronize()
        if time.time() - sec_start >= 1:
            torch.cuda.synchronize()
            print(json.dumps({"ts": time.time_ns(), "phase": name,
                              "matmuls": n,
                              "reserved": torch.cuda.memory_reserved()}),
                  flush=True)
            total += n
            n, sec_start = 0, time.time()
    torch.cuda.synchronize()
    return total + n

w = phase("work", work_s, False)
s = phase("spin", spin_s, True)
print(json.dumps({"done": True, "work_matmuls": w, "spin_matmuls": s,
                  "work_rate": w / work_s, "spin_rate": s / spin_s}),
      flush=True)
