"""gpu_compare.py OUT PID - pairs each `gpu` row (OUT/gpu.csv) with
nvidia-smi's nearest sample (OUT/smi.csv, -lms 500) and prints the
differences; gpu_process memory of PID against torch.cuda.memory_reserved()
(OUT/work.jsonl); launches per phase.  Exits 1 if a tolerance fails.

Tolerances, and why: both read the same NVML counters, but at instants up
to 250 ms apart.  Temperature and SM clock move slowly: within 2 C and
2 %.  Utilization is NVML's average over its own sample period (1/6 s to
1 s): within 5 points on average over the steady phases.  Power: the
driver's 1 s average, within 5 %.  Memory used: equal within 64 MiB (NVML's
v1 memory info counts the driver's reserved memory as used in some
drivers; nvidia-smi's does not: the difference is reported)."""
import csv, datetime, json, sys

out, pid = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(f"{out}/gpu.csv")))
smi = []
for line in open(f"{out}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    if len(f) < 7:
        continue
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f")
    except ValueError:
        continue
    # nvidia-smi prints local time.
    ts = t.astimezone(datetime.timezone.utc).timestamp() * 1e9
    try:
        smi.append((ts, float(f[2]), float(f[3]), float(f[4]), float(f[5]),
                    float(f[6])))
    except ValueError:
        pass
smi.sort()
print(f"gpu rows {len(rows)}, nvidia-smi samples {len(smi)}")
import bisect
keys = [s[0] for s in smi]
pairs = []
for r in rows:
    ts = float(r["ts"])
    i = bisect.bisect_left(keys, ts)
    best = min((j for j in (i - 1, i) if 0 <= j < len(smi)),
               key=lambda j: abs(keys[j] - ts), default=None)
    if best is None or abs(keys[best] - ts) > 300e6:
        continue
    s = smi[best]
    pairs.append((r, s))
print(f"paired within 300 ms: {len(pairs)}")
fail = 0
def stat(name, a, b, tol, rel=False):
    global fail
    d = [abs(x - y) / (y if rel and y else 1) for x, y in zip(a, b)]
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    md = sum(d) / len(d)
    ok = md <= tol
    fail |= not ok
    unit = " (relative)" if rel else ""
    print(f"{name}: gpurec mean {mean_a:.1f}, nvidia-smi mean {mean_b:.1f}, "
          f"mean |diff| {md:.3f}{unit}, tolerance {tol} -> "
          f"{'ok' if ok else 'FAIL'}")
if pairs:
    g = lambda k: [float(r[k] or 0) for r, _ in pairs]
    stat("util %", g("util_gpu"), [s[1] for _, s in pairs], 5)
    stat("memory used MiB", [x / 2**20 for x in g("mem_used")],
         [s[2] for _, s in pairs], 64)
    stat("power W", [x / 1000 for x in g("power_mw")],
         [s[3] for _, s in pairs], 0.05, rel=True)
    stat("SM clock MHz", g("sm_clock"), [s[4] for _, s in pairs], 0.02,
         rel=True)
    stat("temperature C", g("temp_c"), [s[5] for _, s in pairs], 2)
else:
    fail = 1
# gpu_process against PyTorch's reserved memory.
work = [json.loads(l) for l in open(f"{out}/work.jsonl") if l.startswith("{")]
res = [w for w in work if "reserved" in w]
procs = [r for r in csv.DictReader(open(f"{out}/gpu_process.csv"))
         if int(r["pid"]) == pid and r["mem_used"]]
if res and procs:
    reserved = res[-1]["reserved"]
    used = sorted(int(r["mem_used"]) for r in procs)[len(procs) // 2]
    print(f"gpu_process pid {pid}: median mem_used {used / 2**20:.0f} MiB; "
          f"torch memory_reserved {reserved / 2**20:.0f} MiB; the rest "
          f"(CUDA context, cuBLAS workspace, modules) "
          f"{(used - reserved) / 2**20:.0f} MiB; rows {len(procs)}, "
          f"sm_util given in {sum(1 for r in procs if r['sm_util'])}")
    fail |= not (reserved <= used <= reserved + 2 * 2**30)
else:
    print("gpu_process: no rows for the workload"); fail = 1
done = [w for w in work if w.get("done")]
if done:
    d = done[0]
    print(f"workload: {d['work_rate']:.1f} matmuls/s working, "
          f"{d['spin_rate']:.1f} spinning ({d['work_rate'] / max(d['spin_rate'], 1e-9):.2f}x fewer)")
sys.exit(1 if fail else 0)
