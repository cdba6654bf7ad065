"""nccl_job.py - torch.distributed over NCCL, for tests/gpu/nccl.sh.

Usage: torchrun --nproc-per-node N nccl_job.py ITERS DELAY_MS LATE_RANK
(or plain python3 for one rank).  With more ranks than GPUs, every rank
uses GPU 0 and names a host of its own (NCCL_HOSTID), so NCCL, which
refuses two ranks of one host on one GPU, joins them over its socket
transport on the loopback: two "hosts" on one GPU.  Each rank makes ITERS all-reduces of
1 Mi float32 (4 MiB) and, every 10th iteration, one broadcast of 256 Ki
float32 from rank 0 (PyTorch calls ncclBcast); LATE_RANK sleeps DELAY_MS
before every 10th all-reduce.  Each iteration ends with a device sync, as
a training step's loss.item() does, so a rank cannot run ahead and the
late rank's lateness is the delay at every 10th collective.  Prints one JSON line per rank: what it issued, its pid, and
the window's ns bounds.
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist

iters, delay_ms, late = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
local = int(os.environ.get("LOCAL_RANK", rank))
if world > torch.cuda.device_count():
    local = 0
    os.environ["NCCL_HOSTID"] = "gr-sim-host-%d" % rank
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
    os.environ.setdefault("NCCL_NET", "Socket")
torch.cuda.set_device(local)
dist.init_process_group("nccl", rank=rank, world_size=world,
                        device_id=torch.device("cuda", local))
x = torch.ones(1 << 20, device="cuda")
b = torch.ones(1 << 18, device="cuda")
dist.all_reduce(x)  # warm-up: the communicator is made lazily
torch.cuda.synchronize()
t0 = time.time_ns()
allreduce = bcast = 0
for i in range(iters):
    if i % 10 == 0 and rank == late and delay_ms > 0:
        time.sleep(delay_ms / 1e3)
    dist.all_reduce(x)
    allreduce += 1
    if i % 10 == 0:
        dist.broadcast(b, src=0)
        bcast += 1
    torch.cuda.synchronize()
torch.cuda.synchronize()
t1 = time.time_ns()
dist.barrier()
dist.destroy_process_group()
# The warm-up all-reduce, the loop's, and the barrier's (PyTorch's NCCL
# barrier is an all-reduce of one element: 4 bytes).
print(json.dumps({"rank": rank, "world": world, "pid": os.getpid(),
                  "allreduce": allreduce + 2, "broadcast": bcast,
                  "allreduce_bytes": (allreduce + 1) * (4 << 20) + 4,
                  "broadcast_bytes": bcast * (1 << 20),
                  "t0": t0, "t1": t1}), flush=True)
