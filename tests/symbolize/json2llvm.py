#!/usr/bin/env python3
"""Turns `tally symbolize --json` output back into llvm-symbolizer's text layout, so the JSON
can be compared with llvm-symbolizer by compare.py like the default style.

usage: json2llvm.py ADDRS JSON_OUT > TEXT

Checks on the way, exiting 1 with the first problem: one JSON object per line and per
address, in order; "address" is the input address; every frame has function, file, line,
column and inlined; every frame but the last is inlined. null function or file print as
"??", as llvm-symbolizer does; so does a function named from the unwind tables
("function_from": "cfi"), which llvm-symbolizer does not name.
"""
import json
import sys


def frame_text(fr, where):
    for key in ("function", "file", "line", "column", "inlined"):
        if key not in fr:
            raise ValueError("%s: frame without %r" % (where, key))
    if not isinstance(fr["line"], int) or not isinstance(fr["column"], int):
        raise ValueError("%s: line and column must be integers" % where)
    fn = "??" if fr["function"] is None or fr.get("function_from") == "cfi" else fr["function"]
    file = "??" if fr["file"] is None else fr["file"]
    return "%s\n%s:%d:%d\n" % (fn, file, fr["line"], fr["column"])


def main():
    with open(sys.argv[1]) as f:
        addrs = [l.strip() for l in f if l.strip()]
    with open(sys.argv[2]) as f:
        lines = f.read().splitlines()
    if len(lines) != len(addrs):
        sys.exit("json2llvm: %d addresses, %d JSON lines" % (len(addrs), len(lines)))
    out = []
    try:
        for n, (addr, line) in enumerate(zip(addrs, lines), 1):
            where = "line %d (%s)" % (n, addr)
            obj = json.loads(line)
            if int(obj["address"], 16) != int(addr, 16):
                raise ValueError("%s: address %r" % (where, obj["address"]))
            frames = obj["frames"]
            if not frames:
                raise ValueError("%s: no frames" % where)
            flags = [fr.get("inlined") for fr in frames]
            if flags != [True] * (len(frames) - 1) + [False]:
                raise ValueError("%s: inlined flags %r" % (where, flags))
            out.append("".join(frame_text(fr, where) for fr in frames) + "\n")
    except (ValueError, KeyError, TypeError) as e:
        sys.exit("json2llvm: %s" % e)
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
