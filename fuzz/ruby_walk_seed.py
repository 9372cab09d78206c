#!/usr/bin/env python3
"""The seeds of fuzz_ruby_walk: the 48-byte head (TLS model: dynamic; ruby_current_ec's
GOT pair; its offset in the block; global_symbols; the FS base) and a memory image mapped at
0x10000, laid out as Ruby 3.1 lays it (src/ruby/layout.c): a TCB whose dtv names the
module's TLS block, the execution context, a VM stack whose control frames are <main>
(FINISH), Chain#leaf at a pc, and Array#sort (a C frame with its method entry and
definition), two iseqs with embedded and heap labels, a [path, realpath] array, line tables
(one with positions, one as a succinct table), and a symbol table naming "sort".
Variants: chain.bin, and lying.bin (the context's cfp outside its VM stack).
Usage: ruby_walk_seed.py OUTDIR
"""
import os
import struct
import sys

BASE = 0x10000
T_STRING, T_ARRAY, T_IMEMO = 0x05, 0x07, 0x1a


class Image:
    def __init__(self):
        self.b = bytearray()

    def alloc(self, n):
        at = BASE + len(self.b)
        self.b += bytes((n + 15) & ~15)
        return at

    def put(self, at, fmt, *v):
        struct.pack_into(fmt, self.b, at - BASE, *v)


def string(im, s):
    b = s.encode()
    o = im.alloc(40)
    if len(b) <= 23:
        im.put(o, '<Q', T_STRING | len(b) << 14)
        im.b[o - BASE + 16:o - BASE + 16 + len(b)] = b
    else:
        p = im.alloc(len(b) + 1)
        im.b[p - BASE:p - BASE + len(b)] = b
        im.put(o, '<QQqQ', T_STRING | 1 << 13, 0, len(b), p)
    return o


def array(im, items):
    o = im.alloc(40)
    if len(items) <= 3:
        im.put(o, '<QQ', T_ARRAY | 1 << 13 | len(items) << 15, 0)
        for i, v in enumerate(items):
            im.put(o + 16 + 8 * i, '<Q', v)
    else:
        p = im.alloc(8 * len(items))
        for i, v in enumerate(items):
            im.put(p + 8 * i, '<Q', v)
        im.put(o, '<QQqQQ', T_ARRAY, 0, len(items), 0, p)
    return o


def iseq(im, label, path, first, lines, succinct):
    body = im.alloc(160)
    enc = im.alloc(8 * 64)
    im.put(body, '<IIQ', 1, 64, enc)
    im.put(body + 64, '<Q', path)
    im.put(body + 80, '<Q', string(im, label))
    im.put(body + 88, '<Q', first << 1 | 1)
    entries = im.alloc(12 * len(lines))
    for i, (_, line) in enumerate(lines):
        im.put(entries + 12 * i, '<iiI', line, 0, 0)
    im.put(body + 120, '<Q', entries)
    im.put(body + 136, '<I', len(lines))
    if succinct:
        # 64 words: six immediate words (ranks of positions 0-53), one block for 54-565
        tbl = im.alloc(48 + 80)
        rank = 0
        for w in range(6):
            v = 0
            for i in range(9):
                if any(p == w * 9 + i for p, _ in lines):
                    rank += 1
                v |= rank << (7 * i)
            im.put(tbl + 8 * w, '<Q', v)
        bits = 0
        for p, _ in lines:
            if p >= 54:
                bits |= 1 << (p - 54)
        im.put(tbl + 48 + 16, '<Q', bits & (1 << 64) - 1)
        im.put(body + 144, '<Q', tbl)
    else:
        pos = im.alloc(4 * len(lines))
        for i, (p, _) in enumerate(lines):
            im.put(pos + 4 * i, '<I', p)
        im.put(body + 128, '<Q', pos)
    o = im.alloc(40)
    im.put(o, '<QQQ', T_IMEMO | 7 << 12, 0, body)
    return o, enc


def build(lying):
    im = Image()
    got = im.alloc(16)
    tls = im.alloc(16)
    tcb = im.alloc(16)
    dtv = im.alloc(48)
    im.put(got, '<QQ', 2, 8)
    im.put(dtv + 2 * 16, '<Q', tls)
    im.put(tcb + 8, '<Q', dtv)
    ec = im.alloc(64)
    im.put(tls + 8, '<Q', ec)
    path = array(im, [string(im, '/w/chain.rb'), string(im, '/w/real/chain.rb')])
    main, main_enc = iseq(im, '<main>', path, 1, [(0, 1), (5, 40)], False)
    leaf, leaf_enc = iseq(im, 'leaf_with_a_label_longer_than_23', path, 30,
                          [(0, 30), (3, 31), (60, 32)], True)
    sort_id = 11 << 4 | 1  # serial 11, a local id above tLAST_OP_ID
    names = [8] * 32  # two VALUEs an id: its String, its Symbol
    names[22] = string(im, 'sort')
    entry = array(im, names)
    ids = array(im, [entry])
    syms = im.alloc(24)
    im.put(syms, '<IIQQ', 100, 0, 0, ids)
    func = 0x7f0000001000
    defn = im.alloc(48)
    im.put(defn, '<IIQQIIQ', 1, 0, func, 0, 0, 0, sort_id)
    me = im.alloc(40)
    im.put(me, '<QQQ', T_IMEMO | 6 << 12, 0, defn)
    nvals = 64
    stack = im.alloc(8 * nvals)
    end = stack + 8 * nvals
    frames = [  # innermost first: pc, iseq, ep flags, me
        (0, 0, 0x55550001 | 0x80 | 0x2, me),
        (leaf_enc + 8 * 4, leaf, 0x11110001, 0),
        (main_enc + 8 * 6, main, 0x77770001 | 0x20, 0),
        (0, 0, 0x79990001 | 0x20, 0),
    ]
    cfp = end - 64 * len(frames)
    for i, (pc, iq, flags, m) in enumerate(frames):
        env = im.alloc(24)
        im.put(env, '<QQQ', m, 0, flags)
        im.put(cfp + 64 * i, '<QQQQQ', pc, 0, iq, 0, env + 16)
    im.put(ec, '<QQQ', stack, nvals, cfp if not lying else end + 64)
    head = struct.pack('<6Q', 1, got, 8, syms, tcb, 0)
    return head, bytes(im.b)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, lying in (('chain.bin', False), ('lying.bin', True)):
        head, image = build(lying)
        with open(os.path.join(out, name), 'wb') as f:
            f.write(head + image)


main()
