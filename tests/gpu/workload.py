"""workload.py - a PyTorch workload profiled by torch.profiler (CUPTI),
for comparing gpurecd's recording of the same window (tests/gpu/validate.sh).

Prints one JSON line: pid, the window (ns since the epoch), and what the
profiler saw in it: launch API calls by name, kernels, copy bytes by
direction.  Usage: python3 workload.py [steps]
With GR_GO and GR_READY set (paths), it creates GR_READY once warm and
waits for GR_GO before its window: a process that predates gpurecd.
"""
import json, os, sys, time
import torch
from mlp import make_step  # beside this file

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20

dev = torch.device("cuda")
train_step = make_step(dev)

# A CUDA graph of a few elementwise ops and a matmul, replayed.
static_a = torch.randn(512, 512, device=dev)
static_b = torch.randn(512, 512, device=dev)
g = torch.cuda.CUDAGraph()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        (static_a @ static_b).relu_()
torch.cuda.current_stream().wait_stream(s)
with torch.cuda.graph(g):
    static_out = (static_a @ static_b).relu_() * 2 + 1

# Warm up (lazy module loading, cuBLAS handles) outside the window.
for _ in range(3):
    train_step()
g.replay()
torch.cuda.synchronize()
if os.environ.get("GR_GO"):
    # Started before gpurecd: say we are warm, wait until it records.
    open(os.environ["GR_READY"], "w").close()
    while not os.path.exists(os.environ["GR_GO"]):
        time.sleep(0.05)
else:
    time.sleep(float(os.environ.get("GR_SETTLE", "3")))  # discovery rescans

from torch.profiler import profile, ProfilerActivity
t0 = time.time_ns()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for i in range(steps):
        train_step()
        a = torch.randn(2048, 2048, device=dev)
        b = (a @ a.T).sin_() + a.cos()           # cuBLAS + elementwise
        host = b[:64].cpu()                       # D2H copy
        back = host.to(dev)                       # H2D copy
        g.replay()                                # graph launch
    torch.cuda.synchronize()
t1 = time.time_ns()

if os.environ.get("GR_HOLD"):  # stay alive (for naming.sh) until told
    while not os.path.exists(os.environ["GR_HOLD"]):
        time.sleep(0.05)
trace = "/tmp/gr_trace_%d.json" % os.getpid()
prof.export_chrome_trace(trace)
ev = json.load(open(trace))["traceEvents"]
launch_names = {}
kernels = 0
copy_bytes = {}
for e in ev:
    cat, name = e.get("cat", ""), e.get("name", "")
    if cat == "cuda_runtime" or cat == "cuda_driver":
        if "Launch" in name and "Graph" not in name and "HostFunc" not in name:
            launch_names[name] = launch_names.get(name, 0) + 1
        if "GraphLaunch" in name:
            launch_names[name] = launch_names.get(name, 0) + 1
    elif cat == "kernel":
        kernels += 1
    elif cat == "gpu_memcpy":
        kind = "H2D" if "HtoD" in name else "D2H" if "DtoH" in name else \
               "D2D" if "DtoD" in name else name
        copy_bytes[kind] = copy_bytes.get(kind, 0) + int(e.get("args", {}).get("bytes", 0))
print(json.dumps({"pid": os.getpid(), "t0": t0, "t1": t1, "steps": steps,
                  "launch_api_calls": launch_names, "gpu_kernels": kernels,
                  "copy_bytes": copy_bytes}))
