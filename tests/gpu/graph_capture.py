"""graph_capture.py REPLAYS DIRECT - a small PyTorch step (matmul, relu,
scale, row sums) warmed up 3 times on a side stream, captured once with
torch.cuda.graph, the graph replayed REPLAYS times and the step run DIRECT
times outside it, all under torch.profiler.  Prints one JSON line: pid,
replays, direct, and the kernels the profiler saw run on the GPU (name ->
runs; graph replays included, captured launches, which run nothing, not).
tests/gpu/graph_kernels.sh compares gpurec's graph-kernels with it."""
import collections, json, os, sys
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

replays, direct = int(sys.argv[1]), int(sys.argv[2])


def step(x, w):
    return (torch.relu(x @ w) * 2.0 + 1.0).sum(dim=1)


with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    x = torch.randn(64, 128, device="cuda")
    w = torch.randn(128, 128, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step(x, w)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(x, w)
    for _ in range(replays):
        g.replay()
    for _ in range(direct):
        step(x, w)
    torch.cuda.synchronize()

runs = collections.Counter(
    e.name for e in prof.events()
    if e.device_type == DeviceType.CUDA
    and not e.name.startswith(("Memcpy", "Memset")))
print(json.dumps({"pid": os.getpid(), "replays": replays, "direct": direct,
                  "kernels": dict(runs)}))
