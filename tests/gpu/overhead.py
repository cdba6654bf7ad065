"""overhead.py MODE - times a GPU-bound training loop and a launch-bound
loop (tiny kernels), printing one line per loop: MODE name ms_per_step."""
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
    for _ in range(100):
        t = t * 1.0001 + 0.0001
for name, fn, n in (("gpu_bound", gpu_bound, 30), ("launch_bound", launch_bound, 200)):
    time.sleep(2.5)  # let gpurecd's rescans attach to this process first
    for _ in range(5): fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n): fn()
    torch.cuda.synchronize()
    print(mode, name, "%.3f" % ((time.perf_counter() - t0) * 1000 / n), flush=True)
