#!/usr/bin/env python3
"""check_trace.py - what a Chrome/Perfetto JSON trace from `gpurec export
--format perfetto` holds, as lines of facts for the test scripts to compare
with exact values (tests/cli/run.sh, tests/cuda/run.sh).

usage: check_trace.py TRACE.json [BASE_NS]

Prints, in this order:
  format OK|<what is wrong>   the file is strict UTF-8 JSON, an object with
                              displayTimeUnit first, no raw control byte in
                              any string (Perfetto refuses them, DEL too)
  X CAT N SUM_TS SUM_DUR      complete events per category: count, sums of
                              ts - BASE_NS (default 0) and of dur in ns, from
                              the exact decimal text
  i CAT N                     instant events per category
  M NAME N                    metadata events per name
  other N                     events of any other phase
  unnamed N                   tracks (pid, tid) of X events without exactly
                              one thread_name, and pids without exactly one
                              process_name
  idle-names N                names of tracks that have no X event
  thread-overlaps N           X events on a thread (tid < 2^22) that do not
                              nest in the one open before them (Perfetto
                              drops those)
  lanes N DEPTH               pseudo-threads (tid >= 2^22), and the sum over
                              their groups of the most block requests in
                              flight at once (equal: as few lanes as can be)
  lane-overlaps N             events overlapping on one lane
"""
import collections
import decimal
import json
import sys

PSEUDO = 1 << 22
STRIDE = 10000000


def ns(text):
    """Exact ns from a JSON number of µs."""
    return int(decimal.Decimal(text) * 1000)


def main():
    raw = open(sys.argv[1], "rb").read()
    base = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    problem = "OK"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        problem = "not UTF-8: %s" % e
        text = raw.decode("utf-8", "replace")
    bad = [b for b in set(raw) if (b < 0x20 and b != 0x0a) or b == 0x7f]
    if bad and problem == "OK":
        problem = "raw control bytes %s" % sorted(bad)
    if not text.startswith('{"displayTimeUnit":"ns","traceEvents":['):
        problem = "starts %r" % text[:60]
    d = json.loads(text, parse_float=str, parse_int=str)
    print("format", problem)

    x = collections.defaultdict(lambda: [0, 0, 0])
    inst, meta, other = (collections.Counter() for _ in range(3))
    tracks = collections.defaultdict(list)  # (pid, tid) -> [(ts, dur)]
    pids = set()
    blocks = collections.defaultdict(list)  # lane group -> [(ts, end)]
    pnames, tnames = collections.Counter(), collections.Counter()
    for e in d["traceEvents"]:
        ph = e["ph"]
        if ph == "X":
            ts, dur = ns(e["ts"]), ns(e["dur"])
            c = x[e["cat"]]
            c[0] += 1
            c[1] += ts - base
            c[2] += dur
            key = (int(e["pid"]), int(e["tid"]))
            tracks[key].append((ts, dur))
            pids.add(key[0])
            if e["cat"] == "block_io":
                a = e["args"]
                group = (key[0], a.get("dev") if "pid" not in a else None)
                blocks[group].append((ts, ts + dur))
        elif ph == "i":
            inst[e["cat"]] += 1
        elif ph == "M":
            meta[e["name"]] += 1
            if e["name"] == "process_name":
                pnames[int(e["pid"])] += 1
            else:
                tnames[(int(e["pid"]), int(e["tid"]))] += 1
        else:
            other[ph] += 1
    for cat in sorted(x):
        print("X", cat, *x[cat])
    for cat in sorted(inst):
        print("i", cat, inst[cat])
    for name in sorted(meta):
        print("M", name, meta[name])
    print("other", sum(other.values()))
    print("unnamed", sum(tnames[t] != 1 for t in tracks) +
          sum(pnames[p] != 1 for p in pids))
    print("idle-names", sum(t not in tracks for t in tnames) +
          sum(p not in pids for p in pnames))

    thread_bad = lane_bad = lanes = 0
    for (pid, tid), evs in tracks.items():
        lane = tid % STRIDE >= PSEUDO
        lanes += lane
        stack = []
        for ts, dur in sorted(evs, key=lambda e: (e[0], -e[1])):
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and (lane or ts + dur > stack[-1]):
                if lane:
                    lane_bad += 1
                else:
                    thread_bad += 1
                continue
            stack.append(ts + dur)
    depth = 0
    for evs in blocks.values():
        edges = sorted([(t, 1) for t, _ in evs] + [(t, -1) for _, t in evs])
        cur = most = 0
        for _, step in edges:  # ends sort before starts at one time
            cur += step
            most = max(most, cur)
        depth += most
    print("thread-overlaps", thread_bad)
    print("lanes", lanes, depth)
    print("lane-overlaps", lane_bad)


main()
