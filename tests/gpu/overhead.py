"""overhead.py MODE - times a GPU-bound training loop (ms per step, synced)
and the CPU side of a launch-bound one: 200 tiny kernels enqueued per step,
fewer than the launch queue holds, timed up to the last launch returning
and synced outside the timing, so the GPU never paces it.  Prints one line
per loop: MODE name ms_per_step."""
import sys, time, torch
mode = sys.argv[1] if len(sys.argv) > 1 else "?"
dev = torch.device("cuda")
big = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(),
                          torch.nn.Linear(8192, 4096)).to(dev)
opt = torch.optim.SGD(big.parameters(), lr=1e-3)
x = torch.randn(2048, 4096, device=dev)
tiny = torch.randn(256, device=dev)
def gpu_bound():
    opt.zero_grad(); big(x).square().mean().backward(); opt.step()
def launch_bound():
    t = tiny
    for _ in range(100):  # 2 kernels each
        t = t * 1.0001 + 0.0001
def timed(fn, n, sync_each):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    total = 0.0
    if not sync_each:
        t0 = time.perf_counter()
        for _ in range(n): fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        total += time.perf_counter() - t0
        torch.cuda.synchronize()
    return total / n
for name, fn, n, each in (("gpu_bound", gpu_bound, 30, False),
                          ("launch_bound", launch_bound, 300, True)):
    time.sleep(2.5)  # let gpurecd's rescans attach to this process first
    print(mode, name, "%.3f" % (timed(fn, n, each) * 1000), flush=True)
