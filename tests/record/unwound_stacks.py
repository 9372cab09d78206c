"""Per-sample stacks of a recording read two ways, for tests/record/unwound.test.sh.

  perf CHAINS < perf script -F tid,ip,dso          user frames of each sample as
                                                    module:address, by thread, in order
  tally CHAINS FIREFOX.json                         the same from tally export -f firefox
                                                    (native frames only: perf script
                                                    shows no inline, and kernel frames
                                                    are not what is compared)
  folded CHAINS FIREFOX.json                        every frame's name, root first (the
                                                    folded stack of each sample)
  compare A B                                       "same total percent" of samples whose
                                                    chains are equal, matched by thread
                                                    and order (both files hold the same
                                                    samples, time-ordered)
perf prints the module-relative address of each frame, tally's firefox export the same."""
import collections
import json
import os
import sys


def perf_chains(out):
    by = collections.defaultdict(list)
    cur = None
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line.strip():
            continue
        if not line.startswith("\t"):  # a sample's line (padded with spaces)
            cur = by[line.split()[0]]
            cur.append([])
            continue
        parts = line.split()
        if len(parts) < 2 or cur is None:
            continue
        dso = parts[-1].strip("()")
        if dso.startswith("[kernel") or dso == "[unknown]":
            continue
        cur[-1].append("%s:%x" % (os.path.basename(dso), int(parts[0], 16)))
    json.dump(by, open(out, "w"))


def tally_chains(out, path, names):
    d = json.load(open(path))
    sh = d["shared"]
    st, fr, fn, strs = sh["stackTable"], sh["frameTable"], sh["funcTable"], sh["stringArray"]
    libs = [os.path.basename(l["path"]) for l in d["libs"]]
    native = [c["name"] for c in d["meta"]["categories"]].index("Native")

    def frame(f):
        if names:
            return strs[fn["name"][fr["func"][f]]]
        if fr["category"][f] != native or fr["lib"][f] is None:
            return None
        return "%s:%x" % (libs[fr["lib"][f]], fr["address"][f])

    by = collections.defaultdict(list)
    for t in d["threads"]:
        s = t["samples"]
        for k in range(s["length"]):
            chain, i = [], s["stack"][k]
            while i is not None:
                f = frame(st["frame"][i])
                if f is not None:
                    chain.append(f)
                off = st["prefixOffset"][i]
                i = i - off if off else None
            by[str(t["tid"])].append((s["time"][k], chain))
    json.dump({k: [c for _, c in sorted(v, key=lambda x: x[0])] for k, v in by.items()},
              open(out, "w"))


def compare(a, b):
    ca, cb = json.load(open(a)), json.load(open(b))
    total = max(sum(map(len, ca.values())), sum(map(len, cb.values())))
    same = 0
    diffs = collections.Counter()
    for tid, va in ca.items():
        vb = cb.get(tid, [])
        for x, y in zip(va, vb):
            if x == y:
                same += 1
            else:
                diffs[(";".join(x), ";".join(y))] += 1
    print("%d %d %.2f" % (same, total, 100.0 * same / total if total else 0.0))
    for (x, y), n in diffs.most_common(3):
        print("  %d: %s\n   vs %s" % (n, x, y), file=sys.stderr)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "perf":
        perf_chains(sys.argv[2])
    elif cmd in ("tally", "folded"):
        tally_chains(sys.argv[2], sys.argv[3], cmd == "folded")
    elif cmd == "compare":
        compare(sys.argv[2], sys.argv[3])
