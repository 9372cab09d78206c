#!/usr/bin/env python3
"""DWARF of a program linked by `tally sbpf link`, checked against oracles nobody here wrote.

usage: dwarf_check.py TALLY PROGRAM.so OBJECT.o...   (the objects in link order, each with
one executable section .text)

For every instruction of every object: llvm-symbolizer's lines (every inline frame's
file:line:column) on the linked file at the instruction's linked address must equal its
lines on the object at the instruction's offset (llvm-symbolizer applies the object's
relocations itself), and `tally symbolize` on the linked file must print what
`llvm-symbolizer --inlines` prints. Exit 1 with the differences.
"""
import struct
import subprocess
import sys


def sections(path):
    b = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 40)
    shnum, shstrndx = struct.unpack_from('<HH', b, 60)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + 64 * i) for i in range(shnum)]
    strs = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name = b[strs + h[0]:b.index(b'\0', strs + h[0])].decode()
        out.setdefault(name, (h[3], h[5]))  # first of a name: (address, size)
    return out


def frames(cmd, addrs):
    """Each address's answer from an llvm-symbolizer-like CMD: its (name, file:line:column)
    lines, innermost frame first (answers end in an empty line; a name may be empty)."""
    out = subprocess.run(cmd + ['%#x' % a for a in addrs], capture_output=True, text=True,
                         check=True).stdout.split('\n')
    answers, i = [], 0
    while i + 1 < len(out):
        answers.append([])
        while i + 1 < len(out):
            answers[-1] += out[i:i + 2]
            i += 2
            if i < len(out) and out[i] == '':
                i += 1
                break
    if len(answers) != len(addrs):
        sys.exit('%s: %d answers for %d addresses' % (cmd[0], len(answers), len(addrs)))
    return answers


def lines(answer):
    return answer[1::2]


def main():
    tally, so, objs = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = sections(so)['.text'][0]
    bad, base, checked = [], 0, 0
    linked_addrs = []
    for obj in objs:
        size = sections(obj)['.text'][1]
        offs = list(range(0, size, 8))
        addrs = [text + base + x for x in offs]
        linked = frames(['llvm-symbolizer', '--inlines', '-e', so], addrs)
        truth = frames(['llvm-symbolizer', '--inlines', '-e', obj], offs)
        for a, x, l, t in zip(addrs, offs, linked, truth):
            if lines(l) != lines(t):
                bad.append('%s+%#x at %#x: linked %s, object %s' % (obj, x, a, lines(l), lines(t)))
        checked += len(addrs)
        linked_addrs += addrs
        base += size
    ours = frames([tally, 'symbolize', '-e', so], linked_addrs)
    theirs = frames(['llvm-symbolizer', '--inlines', '-e', so], linked_addrs)
    for a, o, t in zip(linked_addrs, ours, theirs):
        if o != t:
            bad.append('%#x: tally %r, llvm-symbolizer %r' % (a, o, t))
    inlined = sum(len(lines(t)) > 1 for t in theirs)
    if bad or not inlined:
        print('\n'.join(bad[:20]) or 'no inline frames at all: the check proves nothing')
        sys.exit(1)
    print('%d instructions, %d with inline frames' % (checked, inlined))


if __name__ == '__main__':
    main()
