#!/usr/bin/env python3
"""The seeds of fuzz_lua_payload: Lua records as perf/interp_records.h lays them out (a
64-byte packed proto head, then source, lineinfo, abslineinfo, code and names; a 24-byte
stack head and 16-byte frames). proto.bin: the main chunk of `local t = string; t.rep("x",
3); f()`-like code: GETTABUP/GETFIELD/MOVE/CALL with its constants, a local and _ENV;
stack.bin: a stack of a C function, two Lua frames and a failed one.
Usage: lua_payload_seed.py OUTDIR
"""
import os
import struct
import sys

MAGIC = 0x3141554c


def ins(op, a=0, b=0, c=0, k=0):
    return op | a << 7 | k << 15 | b << 16 | c << 24


def proto():
    code = [ins(11, 0, 0, 0),        # GETTABUP R0 _ENV "string"
            ins(14, 1, 0, 1),        # GETFIELD R1 R0 "rep"
            ins(0, 2, 1),            # MOVE R2 R1
            ins(68, 2, 1, 1),        # CALL R2
            ins(11, 3, 0, 2),        # GETTABUP R3 _ENV "f"
            ins(56) | (0xffffff + 1) << 7,  # JMP +1
            ins(68, 3, 1, 1),        # CALL R3
            ins(20, 4, 0, 1, 1),     # SELF R4 R0 "rep"
            ins(68, 4, 2, 1),        # CALL R4
            ins(76, 5),              # TFORCALL
            ins(46, 0, 0, 6)]        # MMBIN __add
    source = b'@t.lua'
    lineinfo = bytes([0x80] + [1] * (len(code) - 1))
    absl = struct.pack('<ii', 0, 1)
    names = b''
    for i, s in enumerate([b'string', b'rep', b'f']):
        names += struct.pack('<IB', i, len(s)) + s
    names += struct.pack('<iiB', 0, 11, 1) + b't'
    names += struct.pack('<B', 4) + b'_ENV'
    head = struct.pack('<IHHIIQiiIHHIIIIHHHH', MAGIC, 2, 0, 7, 0, 0x7f0000001000, 0, 0,
                       len(code), len(source), 0, len(lineinfo), 1, len(code), len(names),
                       3, 1, 1, 0)
    assert len(head) == 64
    return head + source + lineinfo + absl + struct.pack('<%dI' % len(code), *code) + names


def stack():
    frames = [(0x401000, -1, 1), (0x7f0000001000, 3, 4), (0x7f0000002000, 1, 8), (0, -1, 16)]
    head = struct.pack('<IHHIIII', MAGIC, 1, 2, 7, 8, len(frames), 4)
    return head + b''.join(struct.pack('<QiI', *f) for f in frames)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, b in (('proto', proto()), ('stack', stack())):
        with open(os.path.join(out, name + '.bin'), 'wb') as f:
            f.write(b)


main()
