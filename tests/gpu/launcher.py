"""launcher.py SECONDS - launches tiny kernels as fast as one Python thread
can for SECONDS (synchronizing every 1,000, so the launch queue never
paces it), then prints one JSON line: pid, launches, t0, t1 (ns since the
epoch).  tests/gpu/daemon.sh runs several at once under gpurecd."""
import json, os, sys, time
import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
x = torch.zeros(256, device="cuda")
torch.cuda.synchronize()
n, t0 = 0, time.time_ns()
end = time.monotonic() + secs
while time.monotonic() < end:
    for _ in range(1000):
        x.add_(1.0)
    n += 1000
    torch.cuda.synchronize()
print(json.dumps({"pid": os.getpid(), "launches": n, "t0": t0,
                  "t1": time.time_ns()}))
