#!/usr/bin/env python3
"""The seeds of fuzz_python_walk: a struct py_proc_cfg (record/bpf/python_abi.h, 136 bytes)
and then a memory image mapped at 0x10000 holding what the walk follows: a runtime, an
interpreter with its GIL (held by thread 1), two thread states (the second thread 1's), a
_PyCFrame and a chain of three
frames, their code objects, names (ASCII, and one UCS-2 without cached UTF-8) and line
tables. Offsets are our own choice (the configuration carries them), laid out as CPython
3.11 lays its str objects. Variants: the chain as 3.11 walks it (chain.bin), its outermost
frame pointing back at the innermost (cycle.bin), and the same objects read as 3.10's frame
objects (objects.bin).
Usage: python_walk_seed.py OUTDIR
"""
import os
import struct
import sys

BASE = 0x10000
CFG = struct.Struct('<4Q28H4BHBBIHHI4H4x2Q')
assert CFG.size == 136


class Image:
    def __init__(self):
        self.b = bytearray()

    def alloc(self, n):
        at = BASE + len(self.b)
        self.b += bytes((n + 15) & ~15)
        return at

    def put(self, addr, fmt, *v):
        struct.pack_into('<' + fmt, self.b, addr - BASE, *v)


def ascii_str(im, text):
    data = text.encode()
    s = im.alloc(48 + len(data) + 1)
    im.put(s + 8, 'Q', im.str_type)
    im.put(s + 16, 'Q', len(data))
    im.put(s + 32, 'I', 1 << 2 | 1 << 5 | 1 << 6)  # kind 1, compact, ascii
    im.b[s - BASE + 48:s - BASE + 48 + len(data)] = data
    return s


def ucs2_str(im, text):
    s = im.alloc(72 + 2 * len(text) + 2)
    im.put(s + 8, 'Q', im.str_type)
    im.put(s + 16, 'Q', len(text))
    im.put(s + 32, 'I', 2 << 2 | 1 << 5)  # kind 2, compact
    for k, ch in enumerate(text):
        im.put(s + 72 + 2 * k, 'H', ord(ch))
    return s


def build(variant):
    im = Image()
    code_type, im.str_type, bytes_type = im.alloc(64), im.alloc(64), im.alloc(64)
    runtime, interp = im.alloc(64), im.alloc(16)
    t_other, t_ours, cframe = im.alloc(32), im.alloc(32), im.alloc(16)
    im.put(runtime + 0x10, 'Q', interp)
    im.put(interp + 8, 'Q', t_other)
    im.put(t_other + 8, 'Q', t_ours)
    im.put(t_other + 0x10, 'Q', 99)
    im.put(t_ours + 0x10, 'Q', 1)
    im.put(t_ours + 0x18, 'Q', cframe)
    im.put(runtime + 0x20, 'IIQ', 1, 0, t_ours)  # the GIL: locked, its last holder
    names = [('inner', 'app.py'), ('middle', 'app.py'), ('m\u00e9ne\u2603', 'lib/\u00fcber.py')]
    codes = []
    for k, (name, file) in enumerate(names):
        c = im.alloc(0x40 + 32)
        table = im.alloc(0x20 + 8)
        im.put(table + 8, 'QQ', bytes_type, 6)
        im.b[table - BASE + 0x20:table - BASE + 0x26] = bytes([0x80 | 13 << 3, 1, 0x80 | 13 << 3 | 7, 2, 4, 0])
        qual = ascii_str(im, name) if k < 2 else ucs2_str(im, name)
        fn = ascii_str(im, file) if k < 2 else ucs2_str(im, file)
        im.put(c + 8, 'Q', code_type)
        im.put(c + 0x10, 'QQi', qual, fn, 10 * (k + 1))
        im.put(c + 0x28, 'Q', table)
        codes.append(c)
    frames = [im.alloc(0x20) for _ in codes]
    for k, (f, c) in enumerate(zip(frames, codes)):
        nxt = frames[k + 1] if k + 1 < len(frames) else (frames[0] if variant == 'cycle' else 0)
        im.put(f, 'QQQ', c, nxt, c + 0x40 + 2 * (k + 1))
        im.put(f + 0x18, 'BB', 1 if k == len(frames) - 1 else 0, 0)
        im.put(f + 0x1c, 'i', 2 * (k + 1))  # f_lasti, read as 3.10's frame objects
    im.put(cframe + 8, 'Q', frames[0])
    objects = variant == 'objects'
    if objects:  # 3.8-3.10: tstate->frame is the innermost frame object
        im.put(t_ours + 0x18, 'Q', frames[0])
    cfg = CFG.pack(runtime, code_type, 0, 0,
                   0x10, 0x0, 0x8, 0x8, 0x10, 0x18, 0x8,  # runtime .. cframe
                   0x0, 0x8, 0x10, 0x18, 0x19, 0x20,  # frame fields, frame_size
                   0x38, 0x10, 0x18, 0x20, 0x28, 0x40, 0x30,  # code
                   0x10, 0x20,  # bytes
                   32, 16, 48, 72, 56, 48,  # str: state, length, data, utf8, utf8 length
                   2, 5, 6, 1,  # kind shift, compact bit, ascii bit, owner_generator
                   16,  # max_threads
                   (4 | 8) if objects else 1, 3,  # flags, owner_cstack
                   1, 0x1c, 2 if objects else 0,  # gen, frame_lasti, code_flags
                   0x20, 0, 0, 0, 8,  # the GIL at runtime + 0x20: locked at 0, holder at 8
                   im.str_type, bytes_type)
    return cfg + bytes(im.b)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for variant in ('chain', 'cycle', 'objects'):
        with open(os.path.join(out, variant + '.bin'), 'wb') as f:
            f.write(build(variant))


main()
