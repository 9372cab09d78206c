# The seeds of fuzz/fuzz_cpython_thread_names.c (fuzz/corpus/cpython_thread_names/), written
# again by: python3 fuzz/make_cpython_thread_names_seeds.py fuzz/corpus/cpython_thread_names
# Each is a version index (its first byte: 3.8 ... 3.13) and the memory of a process as
# tally's walk sees it, starting at BASE with _PyRuntime: an interpreter whose sys.modules
# holds threading, whose _active holds two Threads (tids 4242 and 4243, named worker-1 and
# c-hash) with their attributes where that version keeps them (3.8-3.10: a dict at
# tp_dictoffset; 3.11: values 32 bytes before the object; 3.12: tagged values 24 before;
# 3.13: inline values after it); one more with no threads. Offsets: the table's of each
# version (VERS: minor, interpreters.head, interp->modules, sizeof(PyASCIIObject),
# ht_cached_keys).
import struct, sys
BASE = 0x100000
DICT_T, MOD_T, STR_T, INT_T = 0x7000, 0x7200, 0x7300, 0x7400  # type objects: never read
VERS = [(0x0308, 32, 56, 48, 872), (0x0309, 32, 856, 48, 864), (0x030a, 32, 856, 48, 872),
        (0x030b, 40, 888, 48, 872), (0x030c, 40, 944, 40, 880), (0x030d, 40, 944, 40, 880)]

class Mem:
    def __init__(s): s.b = bytearray()
    def alloc(s, n, pre=0):
        n = (n + pre + 7) // 8 * 8
        at = len(s.b); s.b += bytes(n)
        return BASE + at + pre
    def put(s, addr, fmt, *v):
        o = addr - BASE; d = struct.pack('<' + fmt, *v); s.b[o:o+len(d)] = d

def build(vi, names, rename=None):
    minor, ihead, imods, ascii_size, cached = VERS[vi]
    new = minor >= 0x030b
    m = Mem()
    runtime = m.alloc(64)
    interp = m.alloc(8192)
    m.put(runtime + ihead, 'Q', interp)
    def s(text):
        t = text.encode()
        a = m.alloc(ascii_size + len(t) + 1)
        m.put(a + 8, 'Q', STR_T); m.put(a + 16, 'q', len(t))
        m.put(a + 32, 'B', (1 << 2) | (1 << 5) | (1 << 6) | (0 if minor >= 0x030c else 1 << 7))
        m.b[a - BASE + ascii_size:a - BASE + ascii_size + len(t)] = t
        return a
    def i(v):
        a = m.alloc(32); m.put(a + 8, 'Q', INT_T)
        m.put(a + 16, 'q', (1 << 3) if minor >= 0x030c else 1); m.put(a + 24, 'I', v)
        return a
    def keys(items, kind):
        n = len(items)
        k = m.alloc(48 + 8 + 24 * 8)
        if new:
            m.put(k + 8, 'BBB', 3, 3, kind); m.put(k + 24, 'q', n)
            at, size = k + 32 + 8, (24 if kind == 0 else 16)
        else:
            m.put(k + 8, 'q', 8); m.put(k + 32, 'q', n)
            at, size = k + 40 + 8, 24
        for j, (key, val) in enumerate(items):
            if size == 24: m.put(at + 24 * j, 'QQQ', 0, key, val)
            else: m.put(at + 16 * j, 'QQ', key, val)
        return k
    def d(items, kind):
        a = m.alloc(48); m.put(a + 8, 'Q', DICT_T); m.put(a + 32, 'Q', keys(items, kind))
        return a
    ttype = m.alloc(1024)
    flags = 0
    if minor >= 0x030b: flags |= 1 << 4
    if minor >= 0x030d: flags |= 1 << 2
    m.put(ttype + 32, 'q', 16); m.put(ttype + 168, 'Q', flags)
    m.put(ttype + 288, 'q', 16 if not new else -1)
    k_name, k_nid = s("_name"), s("_native_id")
    shared = keys([(s("_target"), 0), (k_name, 0), (k_nid, 0)], 2)
    m.put(ttype + cached, 'Q', shared)
    threads = []
    for tid, name in names:
        nm, nid = s(name), i(tid)
        obj = m.alloc(64, pre=32)
        m.put(obj + 8, 'Q', ttype)
        if not new:
            m.put(obj + 16, 'Q', d([(s("_target"), nid), (k_name, nm), (k_nid, nid)], 0))
        else:
            vals = m.alloc(8 + 24)
            vp = vals + (8 if minor >= 0x030d else 0)
            m.put(vp, 'QQQ', nid, nm, nid)
            if minor == 0x030b: m.put(obj - 32, 'Q', vals)
            elif minor == 0x030c: m.put(obj - 24, 'Q', vals - 1)
            else:
                m.put(obj + 16, 'BBBB', 3, 3, 1, 1); m.put(obj + 24, 'QQQ', nid, nm, nid)
        threads.append((i(tid + 1000), obj))
    active = d(threads, 0)
    mdict = d([(s("_limbo"), active), (s("_active"), active)], 1 if new else 0)
    mod = m.alloc(56); m.put(mod + 8, 'Q', MOD_T); m.put(mod + 16, 'Q', mdict)
    modules = d([(s("sys"), mod), (s("threading"), mod)], 1 if new else 0)
    m.put(interp + imods, 'Q', modules)
    return bytes([vi]) + bytes(m.b)

out = sys.argv[1]
for vi in range(6):
    v = VERS[vi][0]
    name = "%d.%d" % (v >> 8, v & 255)
    open("%s/python%s_two_threads" % (out, name), "wb").write(build(vi, [(4242, "worker-1"), (4243, "c-hash")]))
open("%s/python3.12_no_threads" % out, "wb").write(build(4, []))
