"""handles.py - where does this libcuda keep a kernel handle's name?

Loads a PTX module and a library with known kernels through the driver API
(ctypes), takes CUfunction and CUkernel handles, and looks in the memory
each handle points to for a pointer to the kernel's name (directly, or one
pointer further).  Prints one JSON line per handle with the offsets found,
checked against cuFuncGetName.  A process that predates gpurecd launches
through handles whose load gpurecd never saw; if the offsets are the same
for every handle of one libcuda, gpurecd can read names from them.
Usage: python3 handles.py
"""
import ctypes as C, json

cu = C.CDLL("libcuda.so.1")
def ok(r, what):
    if r != 0:
        raise SystemExit("%s failed: %d" % (what, r))

ok(cu.cuInit(0), "cuInit")
dev = C.c_int(); ok(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
ctx = C.c_void_p(); ok(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "retain")
ok(cu.cuCtxSetCurrent(ctx), "setcurrent")

names = [b"gr_alpha", b"_Z13gr_beta_kernelPfi", b"_ZN2ns5gammaILi4EEEvPKfPfi"]
ptx = b".version 7.0\n.target sm_80\n.address_size 64\n" + b"".join(
    b".visible .entry %s(.param .u64 p0)\n{\n ret;\n}\n" % n for n in names) + b"\0"

ranges = []
for line in open("/proc/self/maps"):
    f = line.split()
    if "r" in f[1]:
        a, b = (int(x, 16) for x in f[0].split("-"))
        ranges.append((a, b))
def readable(p, n):
    return any(a <= p and p + n <= b for a, b in ranges)
def u64(p):
    return C.c_uint64.from_address(p).value
def cstr(p, n):
    return C.string_at(p, n)

def find(h, name, span=1024, span2=256):
    hits = []
    if not readable(h, span):
        return hits
    want = name + b"\0"
    inline = cstr(h, span).find(want)
    if inline >= 0:
        hits.append(["inline", inline])
    for off in range(0, span, 8):
        v = u64(h + off)
        if readable(v, len(want)) and cstr(v, len(want)) == want:
            hits.append([off])
        if readable(v, span2):
            inline = cstr(v, span2).find(want)
            if inline >= 0:
                hits.append([off, "inline", inline])
            for off2 in range(0, span2, 8):
                w = u64(v + off2)
                if readable(w, len(want)) and cstr(w, len(want)) == want:
                    hits.append([off, off2])
    return hits

def paths(h, name, depth=3, span=512):
    """Pointer paths [off1, off2, ...] from h to the name, breadth first."""
    want, out, seen = name + b"\0", [], {h}
    level = [(h, [])]
    for _ in range(depth):
        nxt = []
        for p, path in level:
            if not readable(p, span):
                continue
            for off in range(0, span, 8):
                v = u64(p + off)
                if v in seen or not readable(v, len(want)):
                    continue
                seen.add(v)
                if cstr(v, len(want)) == want:
                    out.append(path + [off])
                nxt.append((v, path + [off]))
        level = nxt
    return out

mod = C.c_void_p(); ok(cu.cuModuleLoadData(C.byref(mod), ptx), "cuModuleLoadData")
lib = C.c_void_p()
ok(cu.cuLibraryLoadData(C.byref(lib), ptx, None, None, 0, None, None, 0), "cuLibraryLoadData")
drv = C.c_int(); cu.cuDriverGetVersion(C.byref(drv))
for n in names:
    f = C.c_void_p(); ok(cu.cuModuleGetFunction(C.byref(f), mod, n), "cuModuleGetFunction")
    k = C.c_void_p(); ok(cu.cuLibraryGetKernel(C.byref(k), lib, n), "cuLibraryGetKernel")
    kf = C.c_void_p(); ok(cu.cuKernelGetFunction(C.byref(kf), k), "cuKernelGetFunction")
    for kind, h in (("module_function", f), ("library_kernel", k), ("kernel_function", kf)):
        got = C.c_char_p()
        r = cu.cuFuncGetName(C.byref(got), h)
        print(json.dumps({"driver": drv.value, "name": n.decode(), "kind": kind,
                          "handle": hex(h.value), "cuFuncGetName": [r, (got.value or b"").decode()],
                          "word0": u64(h.value) if readable(h.value, 8) else None,
                          "offsets": find(h.value, n), "paths": paths(h.value, n)[:6]}))
