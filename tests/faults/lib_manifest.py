#!/usr/bin/env python3
"""lib_manifest.py - what an attacker with root does to a MANIFEST: edit
lines, then re-chain every lh= after the edit so the line chain itself
holds (the checks under test must catch the change some other way).

usage: lib_manifest.py MANIFEST OP [ARGS]
  set N KEY VALUE     line N (1-based): KEY=VALUE
  drop N...           remove lines N...
  swap N M            exchange lines N and M
  insert N TEXT       insert TEXT (no lh=) before line N (0: append)
  rechain             only recompute lh=
  raw-edit N OLD NEW  replace OLD with NEW on line N, no re-chain
  ... --retag FSSKEY  after the edit, re-tag every tagged line with the
                      key in FSSKEY (the host's current key: all an
                      attacker who is root now has), keeping its epoch=
"""
import hashlib, hmac, re, sys

path, op, args = sys.argv[1], sys.argv[2], sys.argv[3:]
key = None
if "--retag" in args:
    i = args.index("--retag")
    kf = open(args[i + 1]).read()
    key = bytes.fromhex(re.search(r"key=([0-9a-f]{64})", kf).group(1))
    args = args[:i] + args[i + 2:]
lines = open(path, "rb").read().decode().splitlines(keepends=True)
rechain = True
if op == "set":
    n, k, v = int(args[0]), args[1], args[2]
    lines[n - 1] = re.sub(r"(^| )%s=[^ \n]*" % k, r"\g<1>%s=%s" % (k, v),
                          lines[n - 1], count=1)
elif op == "drop":
    for n in sorted(map(int, args), reverse=True):
        del lines[n - 1]
elif op == "swap":
    a, b = int(args[0]) - 1, int(args[1]) - 1
    lines[a], lines[b] = lines[b], lines[a]
elif op == "insert":
    n, text = int(args[0]), args[1] + " lh=-\n"
    lines.insert(n - 1 if n else len(lines), text)
elif op == "raw-edit":
    n = int(args[0])
    lines[n - 1] = lines[n - 1].replace(args[1], args[2], 1)
    rechain = False
elif op != "rechain":
    sys.exit("bad op " + op)
if rechain:
    prev = "-"
    for i, l in enumerate(lines):
        if " lh=" in l:
            l = re.sub(r" lh=[^ \n]*", " lh=" + prev, l)
            if key is not None and " tag=" in l:
                body = l[:l.index(" tag=")]
                tag = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
                l = body + " tag=" + tag + "\n"
            lines[i] = l
        prev = hashlib.sha256(l.encode()).hexdigest()
open(path, "w").write("".join(lines))
