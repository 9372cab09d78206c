#!/usr/bin/env python3
"""The seeds of fuzz_lua_walk: the release byte (4: Lua 5.4.4), padding, a struct
user_regs_struct (27 words; rsp points into the image's stack, rbx holds nothing of Lua's)
and then a memory image mapped at 0x10000 holding a global_State whose mainthread is a
lua_State with a chain of CallInfos: a light C function at the bottom, a Lua function (the
main chunk), a Lua function and a C closure on top, with their closures, prototypes
(lineinfo and abslineinfo) and source strings, laid out as Lua 5.4.4 lays them out
(src/lua/layout.c). The stack holds the state's address. Variants: the chain (chain.bin),
the outermost CallInfo pointing back at the innermost (cycle.bin), and a source string
claiming 2^40 bytes (badstring.bin).
Usage: lua_walk_seed.py OUTDIR
"""
import os
import struct
import sys

BASE = 0x10000


class Image:
    def __init__(self):
        self.b = bytearray()

    def alloc(self, n):
        at = BASE + len(self.b)
        self.b += bytes((n + 15) & ~15)
        return at

    def put(self, addr, fmt, *v):
        struct.pack_into('<' + fmt, self.b, addr - BASE, *v)


def build(variant):
    im = Image()
    g = im.alloc(1024)
    L = im.alloc(200)
    im.put(g + 264, 'Q', L)                      # mainthread
    im.put(L + 8, 'B', 0x08)                     # tt: LUA_VTHREAD
    im.put(L + 10, 'B', 0)                       # status LUA_OK
    im.put(L + 24, 'Q', g)                       # l_G
    stack = im.alloc(16 * 8)                     # Lua stack: the functions' TValues

    def string(text, long=False):
        s = im.alloc(24 + len(text) + 1)
        im.put(s + 8, 'B', 0x14 if long else 0x04)
        if long:
            im.put(s + 16, 'Q', 1 << 40 if variant == 'badstring' else len(text))
        else:
            im.put(s + 11, 'B', len(text))
        im.b[s - BASE + 24:s - BASE + 24 + len(text)] = text
        return s

    def proto(linedefined, lines):
        p = im.alloc(128)
        code = im.alloc(4 * len(lines))
        li = im.alloc(len(lines))
        ab = im.alloc(8)
        im.put(p + 8, 'B', 0x0a)
        im.put(p + 24, 'i', len(lines))          # sizecode
        im.put(p + 28, 'i', len(lines))          # sizelineinfo
        im.put(p + 40, 'i', 1)                   # sizeabslineinfo
        im.put(p + 44, 'ii', linedefined, linedefined + len(lines))
        im.put(p + 64, 'Q', code)
        im.put(p + 88, 'Q', li)
        im.put(p + 96, 'Q', ab)
        im.put(ab, 'ii', 0, lines[0])
        im.b[li - BASE] = 0x80
        for k in range(1, len(lines)):
            im.put(li + k, 'b', lines[k] - lines[k - 1])
        im.put(p + 112, 'Q', string(b'@chain.lua', long=(linedefined == 0)))
        return p, code

    def lclosure(p):
        c = im.alloc(32)
        im.put(c + 8, 'B', 0x06)
        im.put(c + 24, 'Q', p)
        return c

    def ccl(f):
        c = im.alloc(32)
        im.put(c + 8, 'B', 0x26)
        im.put(c + 24, 'Q', f)
        return c

    main_p, main_code = proto(0, [1, 2, 3, 9, 10])
    f_p, f_code = proto(4, [5, 6, 7])
    funcs = [(0x16, 0x401000, None), (0x46, lclosure(main_p), main_code + 16),
             (0x46, lclosure(f_p), f_code + 8), (0x66, ccl(0x402000), None)]
    base_ci = L + 96
    prev = base_ci
    cis = []
    for k, (tag, value, savedpc) in enumerate(funcs):
        ci = im.alloc(64)
        im.put(stack + 16 * k, 'QB', value, tag)
        im.put(ci + 0, 'Q', stack + 16 * k)
        im.put(ci + 16, 'Q', prev)
        if savedpc:
            im.put(ci + 32, 'Q', savedpc)
        im.put(ci + 62, 'H', 2 if tag in (0x16, 0x66) else 0)
        cis.append(ci)
        prev = ci
    if variant == 'cycle':
        im.put(cis[0] + 16, 'Q', cis[-1])
    im.put(L + 32, 'Q', cis[-1])                 # ci
    native = im.alloc(256)                       # the thread's native stack
    im.put(native + 40, 'Q', L)
    regs = [0] * 27
    regs[19] = native                            # rsp (struct user_regs_struct's 20th)
    im.b += bytes(0x2000 - len(im.b))           # the stack page read whole
    return bytes([4]) + bytes(7) + struct.pack("<27Q", *regs) + bytes(im.b)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for v in ('chain', 'cycle', 'badstring'):
        with open(os.path.join(out, v + '.bin'), 'wb') as f:
            f.write(build(v))


main()
