#!/usr/bin/env python3
"""Compares a symbolizer's output with an oracle's, address by address.

usage: compare.py STYLE ADDRS ORACLE_OUT TOOL_OUT [--name N] [--min PCT] [--examples K]
                  [--frames TOOL_LLVM_OUT] [--alt LLVM_OUT]

STYLE llvm: the output of `llvm-symbolizer --inlining`: per address, a (function, location)
  pair per frame and then a blank line.
STYLE gnu: ORACLE_OUT is the output of `addr2line -a -f -i` (each address's frames follow a
  line with the address) and TOOL_OUT that of --output-style=GNU, which has no separator
  between addresses: --frames FILE (the tool's default-style output for the same addresses)
  says how many frames each address has.

An address agrees when both blocks are byte-identical. It is "improved" (counted apart, not
as a difference) when the oracle prints "??" for a function that the tool names and every
other line is identical: llvm-symbolizer does not read the symbol table of a separate debug
file. In GNU style, addresses where addr2line shows one of its known defects and the tool
does not are counted apart too, each defect with its own count (see addr2line_defect). Prints one summary line, the differences by category (the first field that differs:
frame count, function, file, line, column or discriminator) and a few examples; exits 1 when
fewer than --min percent of the addresses agree, 2 when the outputs cannot be aligned.
"""
import argparse
import re
import sys



def read_lines(path):
    with open(path, "rb") as f:
        data = f.read().decode("utf-8", "surrogateescape")
    return data


def split_llvm(text):
    """Blocks of (function, location) pairs, one block per address."""
    blocks = []
    lines = text.split("\n")
    cur = []
    for line in lines:
        if line == "":
            if cur:
                blocks.append(cur)
            cur = []
        else:
            cur.append(line)
    if cur:
        blocks.append(cur)
    return [pairs(b) for b in blocks]


ADDR_LINE = re.compile(r"^0x[0-9a-f]{16}$")


def split_addr2line_a(text):
    """Blocks of `addr2line -a` output: each starts after a line holding the address."""
    blocks = []
    cur = None
    for line in nonempty_lines(text):
        if ADDR_LINE.match(line):
            if cur is not None:
                blocks.append(pairs(cur))
            cur = []
        elif cur is not None:
            cur.append(line)
    if cur is not None:
        blocks.append(pairs(cur))
    return blocks


def split_counted(text, counts):
    """GNU-style output cut into blocks of counts[i] frames (two lines each)."""
    frames = pairs(nonempty_lines(text))
    if sum(counts) != len(frames):
        return None
    blocks, i = [], 0
    for n in counts:
        blocks.append(frames[i:i + n])
        i += n
    return blocks


def nonempty_lines(text):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def pairs(lines):
    if len(lines) % 2:
        lines = lines + ["<missing location line>"]
    return [(lines[i], lines[i + 1]) for i in range(0, len(lines), 2)]


def split_location(loc):
    """file, line, column, rest for "file:line:col" or "file:line (discriminator N)"."""
    rest = ""
    if " (discriminator " in loc:
        loc, rest = loc.split(" (discriminator ", 1)
    parts = loc.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], parts[1], parts[2], rest
    parts = loc.rsplit(":", 1)
    if len(parts) == 2:
        return parts[0], parts[1], "", rest
    return loc, "", "", rest


def category(want, got):
    if len(want) != len(got):
        return "frame count (%s)" % ("tool has fewer" if len(got) < len(want) else "tool has more")
    for (wf, wl), (gf, gl) in zip(want, got):
        if wf != gf:
            return "function name"
        w, g = split_location(wl), split_location(gl)
        for field, a, b in zip(("file", "line", "column", "discriminator"), w, g):
            if a != b:
                return field
    return "identical"


def improved(want, got):
    if len(want) != len(got) or want == got:
        return False
    for (wf, wl), (gf, gl) in zip(want, got):
        if wl != gl:
            return False
        if wf != gf and (wf != "??" or gf == "??"):
            return False
    return True


DISCRIMINATOR = re.compile(r" \(discriminator [0-9]+\)$")


def addr2line_defect(want, got, alt):
    """Names the addr2line defect that explains why its block differs from the tool's, if any.

    Each is a fact about addr2line 2.40 checked with llvm-dwarfdump --lookup on the corpus and
    libc (tests/symbolize/KNOWN_DIFFERENCES.md has examples). alt is llvm-symbolizer's block for
    the address: where addr2line and the tool name different files, the tool's must be
    llvm-symbolizer's."""
    def same(wl, gl, i):
        w, g = split_location(wl), split_location(gl)
        if w[1:] != g[1:]:
            return False
        return w[0] == g[0] or (alt is not None and i < len(alt)
                                and split_location(alt[i][1])[0] == g[0])

    def frames_same(ws, gs):
        return len(ws) == len(gs) and all(
            wf == gf and same(wl, gl, i) for i, ((wf, wl), (gf, gl)) in enumerate(zip(ws, gs)))

    if len(want) == len(got) > 1 and not any(DISCRIMINATOR.search(l) for _, l in got[1:]) \
            and any(DISCRIMINATOR.search(l) for _, l in want[1:]) \
            and frames_same(want[:1] + [(f, DISCRIMINATOR.sub("", l)) for f, l in want[1:]], got):
        return "addr2line repeats the innermost row's discriminator on the callers' frames"
    if frames_same(want, got):
        return "addr2line names the including .c file where the code comes from a header"
    if 0 < len(want) < len(got) and same(want[0][1], got[0][1], 0) and want[-1][0] == got[-1][0] \
            and is_subsequence([f for f, _ in want], [f for f, _ in got]):
        return ("addr2line drops inline frames (DW_AT_ranges in rnglistx form) and prints the "
                "outer function with the innermost row's file")
    if len(want) == len(got) > 1 and want[0][0] != got[0][0] and same(want[0][1], got[0][1], 0) \
            and frames_same(want[1:], got[1:]) and alt is not None and len(alt) == len(got) \
            and alt[0][0] == got[0][0]:
        # BFD (dwarf2.c) takes a C++ DIE's DW_AT_name for no linkage name and, without a
        # DW_AT_linkage_name, names the innermost frame from the symbol table instead:
        # the enclosing function's symbol.
        return ("addr2line names the innermost inlined C++ frame after the enclosing "
                "function's symbol (no DW_AT_linkage_name on the inlined function)")
    if len(want) == len(got) == 1 and got[0][0] == "??" and want[0][0] != "??" \
            and (same(want[0][1], got[0][1], 0)
                 or (got[0][1] == "??:?" and want[0][1].endswith(":?"))):
        return ("addr2line ignores symbol sizes: it names the padding after a function "
                "(no DWARF subprogram there) as that function")
    return None


def is_subsequence(short, long):
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def show(block):
    return "\n".join("      %s\n      %s" % fr for fr in block) or "      (nothing)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("style", choices=("llvm", "gnu"))
    ap.add_argument("addrs")
    ap.add_argument("oracle")
    ap.add_argument("tool")
    ap.add_argument("--name", default="")
    ap.add_argument("--min", type=float, default=99.9)
    ap.add_argument("--examples", type=int, default=4)
    ap.add_argument("--frames", help="gnu: the tool's default-style output, for frame counts")
    ap.add_argument("--alt", help="gnu: llvm-symbolizer's default-style output, which says "
                    "which file is right where addr2line and the tool disagree")
    a = ap.parse_args()

    with open(a.addrs) as f:
        addrs = [l.strip() for l in f if l.strip()]
    name = a.name or a.tool
    alt = None
    if a.style == "llvm":
        want = split_llvm(read_lines(a.oracle))
        got = split_llvm(read_lines(a.tool))
    else:
        want = split_addr2line_a(read_lines(a.oracle))
        counts = [len(b) for b in split_llvm(read_lines(a.frames))]
        got = split_counted(read_lines(a.tool), counts)
        alt = split_llvm(read_lines(a.alt)) if a.alt else None
        if alt is not None and len(alt) != len(addrs):
            alt = None
        if got is None:
            print("%s: cannot align: GNU-style output does not hold the %d frames of the "
                  "default-style output" % (name, sum(counts)))
            return 2
    if len(want) != len(addrs) or len(got) != len(addrs):
        print("%s: cannot align: %d addresses, oracle printed %d blocks, tool %d"
              % (name, len(addrs), len(want), len(got)))
        for i in range(min(len(addrs), len(want), len(got))):
            if want[i] != got[i]:
                print("  first difference at address %s (index %d):\n    oracle:\n%s\n    tool:\n%s"
                      % (addrs[i], i, show(want[i]), show(got[i])))
                break
        return 2

    agree = better = 0
    cats, apart = {}, {}
    for i, (addr, w, g) in enumerate(zip(addrs, want, got)):
        defect = None
        if a.style == "gnu" and w != g:
            defect = addr2line_defect(w, g, alt[i] if alt else None)
        if w == g:
            agree += 1
        elif improved(w, g):
            better += 1
        elif defect:
            better += 1
            apart.setdefault(defect, []).append((addr, w, g))
        else:
            cats.setdefault(category(w, g), []).append((addr, w, g))
    total = len(addrs)
    differ = total - agree - better
    pct = 100.0 * (agree + better) / total if total else 100.0
    print("%s: agree %d, improved %d, differ %d, total %d (%.3f%% agree or improved)"
          % (name, agree, better, differ, total, pct))
    for defect, items in sorted(apart.items(), key=lambda kv: -len(kv[1])):
        print("  counted apart: %s: %d" % (defect, len(items)))
        for addr, w, g in items[:1]:
            print("    %s\n    oracle:\n%s\n    tool:\n%s" % (addr, show(w), show(g)))
    for cat, items in sorted(cats.items(), key=lambda kv: -len(kv[1])):
        print("  differ by %s: %d" % (cat, len(items)))
        for addr, w, g in items[: a.examples]:
            print("    %s\n    oracle:\n%s\n    tool:\n%s" % (addr, show(w), show(g)))
    return 0 if pct >= a.min else 1


if __name__ == "__main__":
    sys.exit(main())
