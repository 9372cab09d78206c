#!/usr/bin/env python3
"""The seeds of fuzz_ruby_payload: chunks (u8 kind, u16 length, bytes) of Ruby records
(perf/interp_records.h's TRB1 section) and samples, as the target reads them: an iseq
record (<main>), another (leaf) with its line table, a C method's record (sort), a stack
(sort; leaf and <main>, each entered from C) and a sample of pid 7, tid 7 whose native
frames are two inside rb_vm_exec (odd bytes) with libruby frames between (even bytes);
a second seed is the stack record alone (stack.bin), parsed whole.
Usage: ruby_payload_seed.py OUTDIR
"""
import os
import struct
import sys

MAGIC = 0x31425254


def iseq(addr, label, path, first, lines):
    lb, pb = label.encode(), path.encode()
    head = struct.pack('<IHHIIQiHHI', MAGIC, 2, 0, 7, 0, addr, first, len(lb), len(pb), len(lines))
    return head + lb + pb + b''.join(struct.pack('<Ii', p, l) for p, l in lines)


def cfunc(me, func, name):
    nb = name.encode()
    return struct.pack('<IHHIIQQHHI', MAGIC, 3, 0, 7, 0, me, func, len(nb), 0, 0) + nb


def stack(frames):
    head = struct.pack('<IHHIIII', MAGIC, 1, 0, 7, 7, len(frames), 0)
    return head + b''.join(struct.pack('<QiI', a, pc, fl) for a, pc, fl in frames)


def chunk(kind, b):
    return struct.pack('<BH', kind, len(b)) + b


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    st = stack([(0x3000, -1, 2), (0x2000, 5, 1), (0x1000, 3, 1)])
    seq = (chunk(0, iseq(0x1000, '<main>', '/w/chain.rb', 1, [(0, 1), (2, 45)]))
           + chunk(0, iseq(0x2000, 'leaf', '/w/chain.rb', 30, [(0, 30), (4, 33)]))
           + chunk(0, cfunc(0x3000, 0x7f0000048fb0, 'sort'))
           + chunk(0, st)
           + chunk(3, struct.pack('<II', 7, 7) + bytes([0x10, 0x12, 0x21, 0x14, 0x33, 0x16])))
    with open(os.path.join(out, 'splice.bin'), 'wb') as f:
        f.write(seq)
    with open(os.path.join(out, 'stack.bin'), 'wb') as f:
        f.write(st)


main()
