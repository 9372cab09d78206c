"""Checks the Ruby frames read from the chain workload (rb/chain.rb) against what Ruby
itself said at the same points (its caller_locations, in ORACLE): every stack of the main
thread TID that the driver (src/rb_check.c) or tally printed as "S"/"F"/"C" lines.
  - the whole chain in order, each frame's label, path and line equal to Ruby's, in at
    least 98% of the samples;
  - of the samples inside Array#sort (the innermost frame a C frame named "sort"), at
    least 98% with the whole calling chain under it, the C frame carrying its caller's
    path and line as Ruby's own backtrace gives them;
  - enough samples of each phase to mean something.
With --traces, SAMPLES is `go tool pprof -traces -lines` of tally's pprof instead (TID
unused): its Ruby frames are those at a .rb path (a C method's frame has its caller's),
and its samples those with a frame of the script (the samples whose Ruby frames were not
spliced are counted by tally's report: record.test.sh bounds them).
Usage: chain_check.py ORACLE SAMPLES TID NAME [--traces]"""
import re
import sys

SEP = re.compile(r'^-+\+-+$')
LOC = re.compile(r'^(?P<func>.*?)(?: (?P<file>\S+?)(?::(?P<line>\d+))?)?(?: \(inline\))?$')


def oracles(path):
    kinds, cur = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("kind "):
            cur = kinds.setdefault(line[5:], [])
        elif cur is not None:
            cur.append(tuple(line.split("\t")))
    return kinds


def samples(path, tid):
    out, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("S "):
            cur = [] if line.split()[1] == tid else None
            if cur is not None:
                out.append(cur)
        elif cur is not None and line[:2] in ("F ", "C "):
            f = line[2:].split("\t")
            cur.append((f[0], f[1], f[2]))
        elif cur is not None and line.startswith("?"):
            cur.append(("?", "", ""))
    return out


def traces(path):
    """Each trace's Ruby frames, innermost first, once per sample it counts: the traces of
    the workload's script alone (Ruby's start-up, rubygems, is not the chain's)."""
    out, cur, count = [], None, 0
    for raw in open(path, encoding="utf-8", errors="replace"):
        line = raw.rstrip("\n")
        if SEP.match(line):
            if cur:
                out += [cur] * count
            cur = []
            continue
        if cur is None or not line.strip():
            continue
        text = line.strip()
        if not cur and count >= 0 and line[:12].strip().isdigit():
            n, text = text.split(None, 1)
            count = int(n)
        m = LOC.match(text)
        if (m.group("file") or "").endswith(".rb"):
            cur.append((m.group("func"), m.group("file"), m.group("line") or "0"))
    if cur:
        out += [cur] * count
    return [t for t in out if any(f[1].endswith("chain.rb") for f in t)]


def main():
    oracle_path, samples_path, tid, name = sys.argv[1:5]
    kinds = oracles(oracle_path)
    if set(kinds) != {"bytecode", "sort"}:
        print(f"FAIL: {name}: the workload's oracle has kinds {sorted(kinds)}")
        return 1
    got = traces(samples_path) if sys.argv[5:] == ["--traces"] else samples(samples_path, tid)
    byte, sort = kinds["bytecode"], kinds["sort"]
    whole = in_c = c_whole = in_byte = 0
    bad = []
    for s in got:
        if s and s[0][0] == "sort":
            in_c += 1
            ok = s[1:] == sort and s[0][1:] == sort[0][1:]
            c_whole += ok
        else:
            ok = s == byte or s == sort
            in_byte += s == byte
        whole += ok
        if not ok and len(bad) < 3:
            bad.append(s)
    n = len(got)
    print(f"{name}: {n} samples, {whole} with the whole chain; {in_c} in Array#sort, "
          f"{c_whole} of them under the calling chain; {in_byte} in the bytecode leaf")
    if n < 100 or in_c < 20 or in_byte < 20:
        print(f"FAIL: {name}: too few samples ({n}, {in_c} in sort, {in_byte} in bytecode)")
        return 1
    if whole < 0.98 * n or c_whole < 0.98 * in_c:
        print(f"FAIL: {name}: chain whole in {whole}/{n}, under sort's caller in "
              f"{c_whole}/{in_c}; e.g. {bad}; oracle {kinds}")
        return 1
    print(f"PASS: {name}")
    return 0


sys.exit(main())
