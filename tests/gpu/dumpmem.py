"""dumpmem.py PID ADDR... - what lies at a kernel handle gpurecd could not
name: 512 bytes at each address of process PID as 8-byte words, each
labelled with the mapping it points into (path and file offset) and, where
it points at text, the string there; one pointer further for heap words.
Run as root while PID lives (tests/gpu/naming.sh)."""
import sys

pid = int(sys.argv[1])
maps = []
for line in open("/proc/%d/maps" % pid):
    f = line.split(None, 5)
    a, b = (int(x, 16) for x in f[0].split("-"))
    maps.append((a, b, f[1], int(f[2], 16), f[5].strip() if len(f) > 5 else ""))
mem = open("/proc/%d/mem" % pid, "rb", 0)

def where(v):
    for a, b, perm, off, path in maps:
        if a <= v < b:
            return a, perm, off, path
    return None

def read(v, n):
    try:
        mem.seek(v)
        return mem.read(n)
    except OSError:
        return None

def label(v):
    w = where(v)
    if not w:
        return ""
    a, perm, off, path = w
    s = read(v, 96) or b""
    txt = s.split(b"\0")[0]
    t = txt.decode("ascii", "replace") if len(txt) >= 4 and all(32 <= c < 127 for c in txt) else ""
    return "%s %s+0x%x %s" % (perm, path or "[anon]", v - a + off, repr(t) if t else "")

def dump(addr, n, depth):
    data = read(addr, n)
    if data is None:
        print("  " * depth + "unreadable 0x%x" % addr)
        return
    for i in range(0, len(data), 8):
        v = int.from_bytes(data[i:i + 8], "little")
        lab = label(v)
        if v and (lab or depth == 0):
            print("  " * depth + "+0x%03x 0x%016x %s" % (i, v, lab))
            w = where(v)
            if depth == 0 and w and ("[heap]" in w[3] or w[3] == "") and "x" not in w[1]:
                dump(v, 128, depth + 1)

for a in sys.argv[2:]:
    a = int(a, 16)
    print("== 0x%x: %s" % (a, label(a)))
    dump(a, 512, 0)
