#!/usr/bin/env python3
"""check_trace.py - what a Chrome/Perfetto JSON trace from `gpurec export
--format perfetto` holds, as lines of facts for the test scripts to compare
with exact values (tests/cli/run.sh, tests/cuda/run.sh).

usage: check_trace.py TRACE.json [BASE_NS]

Times in the trace are µs after its start, otherData.start_ns (a string
of ns since the epoch); every sum below is of absolute ns, start_ns + the
exact decimal text * 1000, so it compares with the recording's columns.

Prints, in this order:
  format OK|<what is wrong>   the file is strict UTF-8 JSON, an object with
                              displayTimeUnit first, no raw control byte in
                              any string (Perfetto refuses them, DEL too),
                              otherData with start_ns and start (the same
                              time in ISO 8601), and no ts before 0
  X CAT N SUM_TS SUM_DUR      complete events per category: count, sums of
                              ts - BASE_NS (default 0) and of dur in ns, from
                              the exact decimal text; a slice cut to nest
                              counts with its args.recorded_dur
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
  cut N                       slices cut to nest (args.recorded_dur), whose
                              dur ends them at the end of the slice they
                              start in
  missing-fields N            events without a field Chrome DevTools' trace
                              model reads: ph, cat, name, ts on every event;
                              pid, tid on X and M (but process_name: pid);
                              dur on X
  float-loss N                ts and dur values that a reader parsing them
                              as doubles (JavaScript, DevTools) does not get
                              back to the ns
  float-overlaps N            thread-overlaps as such a reader computes them,
                              rounding each double to the ns
"""
import collections
import datetime
import decimal
import json
import sys

PSEUDO = 1 << 22
STRIDE = 10000000


def ns(text):
    """Exact ns from a JSON number of µs."""
    return int(decimal.Decimal(text) * 1000)


def iso(t):
    """ns since the epoch as 2026-11-25T12:59:04.000000000Z."""
    s, frac = divmod(t, 10**9)
    when = datetime.datetime.fromtimestamp(s, datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % frac


def overlaps(evs):
    """Slices of one thread, (ts, dur) in any unit, that do not nest in
    the slice open before them."""
    bad, stack = 0, []
    for ts, dur in sorted(evs, key=lambda e: (e[0], -e[1])):
        while stack and stack[-1] <= ts:
            stack.pop()
        if stack and ts + dur > stack[-1]:
            bad += 1
            continue
        stack.append(ts + dur)
    return bad


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
    other = d.get("otherData", {})
    start = int(other.get("start_ns", "0"))
    if problem == "OK" and other.get("start") != iso(start):
        problem = "otherData start %r is not start_ns %d" % (
            other.get("start"), start)
    if problem == "OK" and any(ns(e["ts"]) < 0 for e in d["traceEvents"]
                               if "ts" in e):
        problem = "a ts before the start"
    print("format", problem)
    base -= start

    x = collections.defaultdict(lambda: [0, 0, 0])
    inst, meta, other = (collections.Counter() for _ in range(3))
    tracks = collections.defaultdict(list)  # (pid, tid) -> [(ts, dur)]
    pids = set()
    blocks = collections.defaultdict(list)  # lane group -> [(ts, end)]
    pnames, tnames = collections.Counter(), collections.Counter()
    floats = collections.defaultdict(list)  # (pid, tid) -> [(ts, dur)]
    cut = missing = float_loss = 0
    for e in d["traceEvents"]:
        ph = e.get("ph")
        need = ["ph", "cat", "name", "ts"]
        if ph == "X":
            need += ["pid", "tid", "dur"]
        elif ph == "M":
            need += ["pid"] + (["tid"] if e.get("name") != "process_name" else [])
        missing += any(k not in e or e[k] is None for k in need)
        for k in ("ts", "dur"):
            if k in e and round(float(e[k]) * 1000) != ns(e[k]):
                float_loss += 1
        if ph == "X":
            ts, dur = ns(e["ts"]), ns(e["dur"])
            c = x[e["cat"]]
            c[0] += 1
            c[1] += ts - base
            if "recorded_dur" in e["args"]:
                cut += 1
                c[2] += int(e["args"]["recorded_dur"])
            else:
                c[2] += dur
            key = (int(e["pid"]), int(e["tid"]))
            tracks[key].append((ts, dur))
            floats[key].append((round(float(e["ts"]) * 1000),
                                round(float(e["dur"]) * 1000)))
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

    thread_bad = lane_bad = lanes = float_bad = 0
    for (pid, tid), evs in tracks.items():
        lane = tid % STRIDE >= PSEUDO
        lanes += lane
        if not lane:
            thread_bad += overlaps(evs)
            float_bad += overlaps(floats[(pid, tid)])
            continue
        end = None
        for ts, dur in sorted(evs):
            if end is not None and ts < end:
                lane_bad += 1
            end = ts + dur if end is None else max(end, ts + dur)
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
    print("cut", cut)
    print("missing-fields", missing)
    print("float-loss", float_loss)
    print("float-overlaps", float_bad)


main()
