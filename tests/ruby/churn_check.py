"""Checks the Ruby frames read from the churn workload (rb/churn.rb): every stack of every
thread, outermost first as "label@line" (C frames by name alone), must be one the program
can have at some instant: a prefix of one of its call chains (the thread's block, its
method, until_stop's block, a recursion of any depth, the innermost block, spin), then
C frames and Ruby's own core methods (<internal:...>) only. Each of the four threads must be read, the fiber's own stacks too (its
frames are its execution context's, apart from the thread's). At most 10% empty stacks
(a thread before its first Ruby frame or after its last).
Usage: churn_check.py SAMPLES PID NAME"""
import re
import sys


def opt(*parts):
    """parts in order, each present only when the ones before it are."""
    out = ""
    for p in reversed(parts):
        out = f"(?:{p}{out})?"
    return out


REC = r"(?:;rec@13)*"
C_TAIL = r"(?:;[^@;]+)*$"
CHAINS = [
    r"^<main>@4[0-2](?:;each)?(?:;join)?",
    r"^block in <main>@40;t_recurse@22;until_stop@1[78]"
    + opt(";block in t_recurse@22", REC, r";block \(2 levels\) in t_recurse@22", ";spin@9"),
    r"^block in <main>@40;t_fiber@2[67];until_stop@1[78]" + opt(";block in t_fiber@27", ";spin@9"),
    r"^block in t_fiber@26;loop"
    + opt(r";block \(2 levels\) in t_fiber@26", REC, r";block \(3 levels\) in t_fiber@26", ";spin@9"),
    r"^block in <main>@40;t_raise@31;until_stop@1[78]"
    + opt(";block in t_raise@3[2-6]", REC, r";block \(2 levels\) in t_raise@33", ";spin@9"),
    # the rescue clause: at 34 while it matches the exception, at 35 in spin
    r"^block in <main>@40;t_raise@31;until_stop@1[78];block in t_raise@3[2-6];"
    r"rescue in block in t_raise@3[4-6](?:;spin@9)?",
]
VALID = [re.compile(c + C_TAIL) for c in CHAINS]


def main():
    path, pid, name = sys.argv[1:4]
    stacks, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("S "):
            cur = [line.split()[1], int(line.split()[2]), []]
            stacks.append(cur)
        elif cur and line[:2] in ("F ", "C "):
            f = line[2:].split("\t")
            # Ruby's core methods written in Ruby (<internal:numeric>'s Integer#zero?) are
            # the C frames' kin: callees at the tail, by name.
            ruby = line[0] == "F" and not f[1].startswith("<internal:")
            cur[2].append(f[0] + ("@" + f[2] if ruby else ""))
    tids, empty, bad, fiber = {}, 0, [], 0
    for tid, flags, frames in stacks:
        if not frames:
            empty += 1
            continue
        s = ";".join(reversed(frames))
        tids[tid] = tids.get(tid, 0) + 1
        fiber += s.startswith("block in t_fiber@26")
        if flags or not any(v.match(s) for v in VALID):
            bad.append((tid, flags, s))
    n = len(stacks)
    print(f"{name}: {n} stacks, {empty} empty, {len(bad)} not the program's; "
          f"threads {sorted(tids.values())}, {fiber} in the fiber")
    if bad or len(tids) != 4 or min(tids.values()) < 10 or fiber < 5 or empty > 0.1 * n:
        print(f"FAIL: {name}: {len(bad)} stacks the program cannot have, e.g. {bad[:2]}; "
              f"{len(tids)} threads read, {fiber} fiber stacks, {empty}/{n} empty")
        return 1
    print(f"PASS: {name}")
    return 0


sys.exit(main())
