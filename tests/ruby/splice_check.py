"""Checks replay's splice of Ruby frames into native stacks (rb_splice's output, one file per
stop of the chain workload, native stacks as gdb unwound them) against Ruby's own
caller_locations (ORACLE, rb/chain.rb):
  - the Ruby frames, outermost first, are the chain Ruby gave at that loop, with its labels,
    paths and lines (the innermost, in the sort phase, may be Array#sort's C frame at its
    caller's path and line);
  - Array#each's native frames (rb_ary_each, rb_yield) and nothing else between its Ruby
    frame and the block it runs: the VM's own frames (rb_vm_exec and the one inside it)
    are gone;
  - in the sort phase, the C frame's native code (rb_ary_sort first) above it; no
    rb_vm_exec left anywhere (in the bytecode phase, what an instruction called natively
    stays above the leaf: gdb caught one such frame in 6 stops);
  - the source's counters: one sample with Ruby frames, none inconsistent or unknown.
Usage: splice_check.py ORACLE NAME OUT..."""
import sys


def oracles(path):
    kinds, cur = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("kind "):
            cur = kinds.setdefault(line[5:], [])
        elif cur is not None:
            cur.append(tuple(line.split("\t")))
    return kinds


def check(out, kinds):
    frames, counters = [], {}
    for line in open(out, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("N "):
            k, v = line[2:].rsplit(" ", 1)
            counters[k] = int(v)
        elif line.startswith("E "):
            return line
        else:
            frames.append(tuple(line.split("\t")))
    if counters.get("ruby: samples with Ruby frames") != 1 or \
            counters.get("ruby: stacks inconsistent") or counters.get("ruby: iseq or method unknown"):
        return f"counters {counters}"
    ruby = [i for i, f in enumerate(frames) if f[0] == "ruby"]
    got = [f[1:] for f in frames if f[0] == "ruby"]
    inner = got[-1][0]
    kind = "sort" if any(f[0] == "leaf" and f[2] == kinds["sort"][0][2] for f in got) else "bytecode"
    want = list(reversed(kinds[kind]))
    if inner == "sort":
        want.append(("sort",) + want[-1][1:])
    if got != want:
        return f"Ruby frames {got}, Ruby says {want}"
    each = next(i for i, f in enumerate(frames) if f[:2] == ("ruby", "each"))
    block = next(i for i, f in enumerate(frames) if f[:2] == ("ruby", "block in middle"))
    between = [f[1] for f in frames[each + 1:block]]
    if between != ["rb_ary_each", "rb_yield"]:
        return f"between each and its block: {between}"
    above = [f[1] for f in frames[ruby[-1] + 1:]]
    if inner == "sort" and (not above or above[0] != "rb_ary_sort"):
        return f"above Array#sort's frame: {above[:3]}"
    if "rb_vm_exec" in [f[1] for f in frames]:
        return "rb_vm_exec left in the stack"
    if ruby != list(range(ruby[0], ruby[0] + 5)) + list(range(block, block + len(ruby) - 5)):
        return f"Ruby frames not in two runs: {ruby}"
    return kind + (" in Array#sort" if inner == "sort" else "")


def main():
    oracle, name = sys.argv[1:3]
    kinds = oracles(oracle)
    results = [check(o, kinds) for o in sys.argv[3:]]
    good = [r for r in results if r in ("bytecode", "sort", "sort in Array#sort")]
    print(f"{name}: {results}")
    if len(good) != len(results) or len(results) < 4 or \
            not any(r == "bytecode" for r in good) or not any("sort" in r for r in good):
        print(f"FAIL: {name}: {len(good)} of {len(results)} stops spliced right: {results}")
        return 1
    print(f"PASS: {name}")
    return 0


sys.exit(main())
