"""dataloader.py - a training loop starved by a slow dataset, for checking
what gpurecd's offcpu and runq tables say about the main thread
(tests/gpu/host.sh).

The dataset sleeps per item (a slow disk or decoder); DataLoader workers
(separate processes) fetch batches while the main thread trains on the
GPU and waits for the next batch.  The script times those waits itself
(time.perf_counter around next()) so the recording can be compared with
them.  Prints one JSON line: pid, the main thread's tid, the window (ns
since the epoch), batches, and the seconds the main thread spent waiting
for batches.  Usage: python3 dataloader.py [batches] [workers] [item_ms]
"""
import json, os, sys, threading, time
import torch
from torch.utils.data import DataLoader, Dataset

batches = int(sys.argv[1]) if len(sys.argv) > 1 else 40
workers = int(sys.argv[2]) if len(sys.argv) > 2 else 4
item_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
batch = 8


class Slow(Dataset):
    def __len__(self):
        return batches * batch

    def __getitem__(self, i):
        time.sleep(item_ms / 1000.0)
        return torch.full((1024,), float(i)), torch.tensor(i % 10)


dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
loader = DataLoader(Slow(), batch_size=batch, num_workers=workers,
                    persistent_workers=False)
# Warm up CUDA outside the window.
x = torch.randn(batch, 1024, device=dev)
model(x).sum().backward()
torch.cuda.synchronize()
time.sleep(float(os.environ.get("GR_SETTLE", "1")))  # gpurecd traces us

waited = 0.0
n = 0
t0 = time.time_ns()
it = iter(loader)
while True:
    w0 = time.perf_counter()
    try:
        xb, yb = next(it)
    except StopIteration:
        waited += time.perf_counter() - w0
        break
    waited += time.perf_counter() - w0
    xb, yb = xb.to(dev, non_blocking=True), yb.to(dev, non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    n += 1
torch.cuda.synchronize()
t1 = time.time_ns()
print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(),
                  "t0": t0, "t1": t1, "batches": n, "workers": workers,
                  "item_ms": item_ms, "wait_s": round(waited, 4),
                  "window_s": round((t1 - t0) / 1e9, 4)}))
