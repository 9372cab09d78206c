"""Compares tally symbolize --json with a Go program's own traceback (SIGQUIT with
GOTRACEBACK=system): the runtime reading its own tables is the oracle.

usage: go_traceback.py TRACE ADDRS
       go_traceback.py TRACE ADDRS JSON

With two arguments, writes to ADDRS the address to look up for each frame the traceback
gives a pc (the pc less one: a caller's pc is a return address, and Go looks up the
instruction before it, as tally must). With three, reads tally's JSON (one line per
address, in that order) and prints "frames N inlined M", or the first differences and
exits 1. Each physical frame's expected frames are the inlined calls Go printed above it
(their lines end "(...)" and carry no pc), innermost first, then the frame itself: name,
file and line each. Left out: the innermost frame of the goroutine the signal stopped, and
any frame whose pc is the one the signal interrupted ("PC=0x..." at the top: the thread that
took SIGQUIT may be on a system stack, whose goroutine is not marked running); such a pc is
the interrupted instruction, not a return address. Also left out: "created by" lines.
"""
import json
import re
import sys

FRAME = re.compile(r'^(\S.*)\((.*)\)$')
SIGNAL_PC = re.compile(r'^PC=0x([0-9a-f]+) ')
WHERE = re.compile(r'^\t(\S+):(\d+)(?: \+0x([0-9a-f]+))?(?: .*pc=0x([0-9a-f]+))?')


def frames(trace):
    """[(pc, [(name, file, line), ...innermost first])] of the physical frames."""
    out, pending, first, running, name = [], [], False, False, None
    signal_pc = None
    for line in open(trace, errors='replace'):
        line = line.rstrip('\n')
        m = SIGNAL_PC.match(line)
        if m:
            signal_pc = int(m.group(1), 16)
            continue
        if line.startswith('goroutine '):
            pending, first, running, name = [], True, '[running' in line, None
            continue
        if line.startswith('created by '):
            name = None
            continue
        m = FRAME.match(line)
        if m and not line.startswith('\t'):
            name = m.group(1)
            continue
        m = WHERE.match(line)
        if not m or name is None:
            continue
        entry = (name, m.group(1), int(m.group(2)))
        name = None
        if m.group(4) is None:  # an inlined call: no pc of its own
            pending.append(entry)
            continue
        pc, off = int(m.group(4), 16), int(m.group(3) or '0', 16)
        skip = (first and running) or off == 0 or pc == signal_pc
        if not skip:
            out.append((pc, pending + [entry]))
        pending, first = [], False
    return out


def main():
    want = frames(sys.argv[1])
    if len(sys.argv) == 3:
        with open(sys.argv[2], 'w') as f:
            for pc, _ in want:
                f.write('0x%x\n' % (pc - 1))
        return 0
    got = [json.loads(l) for l in open(sys.argv[3])]
    if len(got) != len(want):
        print('%d answers for %d addresses' % (len(got), len(want)))
        return 1
    bad, inlined = [], 0
    for (pc, w), g in zip(want, got):
        have = [(f['function'], f['file'], f['line']) for f in g['frames']]
        inlined += len(w) - 1
        if have != w:
            bad.append('pc 0x%x: Go %s, tally %s' % (pc, w, have))
    if bad or not want:
        print('%d of %d frames differ: %s' % (len(bad), len(want), ' | '.join(bad[:3])))
        return 1
    print('frames %d inlined %d' % (len(want), inlined))
    return 0


sys.exit(main())
