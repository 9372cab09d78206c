#!/usr/bin/env python3
"""Writes one hostile input for tests/reliability/hostile_inputs.test.sh.

usage: hostile.py KIND OUT [ARGS]. Every input is built here, at test time, from the
formats' specifications (profile.proto, the ELF and perf.data headers), so no large file
is committed. Kinds:
  pprof-types N      a pprof with N distinct sample types and one sample of N values
  pprof-deep N       a pprof whose one sample's stack is N frames (one function, recursive)
  pprof-name N       a pprof whose one function's name is N bytes
  gzip-bomb N        a gzip member of about N zero bytes (its size: about N / 160)
  folded-deep N      one folded line of N frames
  folded-name N      one folded line whose frame is N bytes
  elf-shdrs          a 64-byte ELF header claiming 65,535 section headers past its end
  perf-sizes F BASE  BASE (a perf.data) with F (attrs, data, features) sized 2^62
  perf-grow MB BASE  BASE (a perf.data) with its samples repeated to MB megabytes
  nested-json N      a fixture whose "accounts" is nested N arrays deep
  ix-accounts N ELF  a fixture running ELF whose instruction lists N accounts
"""
import gzip
import struct
import sys
import zlib


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def packed(num, values):
    return field_bytes(num, b"".join(varint(v) for v in values))


def profile(strings, sample_types, samples, locations, functions):
    """profile.proto: 1 sample_type, 2 sample, 4 location, 5 function, 6 string_table."""
    out = bytearray()
    for t, u in sample_types:
        out += field_bytes(1, field_varint(1, t) + field_varint(2, u))
    for locs, values in samples:
        out += field_bytes(2, packed(1, locs) + packed(2, values))
    for lid, fid in locations:
        out += field_bytes(4, field_varint(1, lid) + field_bytes(4, field_varint(1, fid)))
    for fid, name in functions:
        out += field_bytes(5, field_varint(1, fid) + field_varint(2, name))
    for s in strings:
        out += field_bytes(6, s)
    return bytes(out)


def pprof_types(n):
    strings = [b"", b"count"] + [b"t%d" % i for i in range(n)] + [b"main"]
    types = [(2 + i, 1) for i in range(n)]
    main = len(strings) - 1
    return profile(strings, types, [([1], [1] * n)], [(1, 1)], [(1, main)])


def pprof_deep(n):
    strings = [b"", b"samples", b"count", b"recurse"]
    return profile(strings, [(1, 2)], [([1] * n, [7])], [(1, 1)], [(1, 3)])


def pprof_name(n):
    strings = [b"", b"samples", b"count", b"f" * n]
    return profile(strings, [(1, 2)], [([1], [3])], [(1, 1)], [(1, 3)])


class Bits:
    """A DEFLATE bit stream: fields LSB first, Huffman codes most significant bit first."""

    def __init__(self):
        self.v, self.n = 0, 0

    def put(self, value, width):
        self.v |= value << self.n
        self.n += width

    def code(self, code, width):
        self.put(int(format(code, "0%db" % width)[::-1], 2), width)

    def bytes(self):
        return self.v.to_bytes((self.n + 7) // 8, "little")


def deflate_zeros(copies):
    """One fixed-Huffman block (RFC 1951 3.2.6): literal 0, then `copies` times
    <length 258, distance 1>, then end of block: 1 + 258 * copies zero bytes."""
    b = Bits()
    b.put(1, 1)  # BFINAL
    b.put(1, 2)  # BTYPE 01, fixed codes
    b.code(0x30, 8)  # literal 0
    for _ in range(copies):
        b.code(0xC5, 8)  # length code 285: 258, no extra bits
        b.code(0, 5)  # distance code 0: 1
    b.code(0, 7)  # end of block
    return b.bytes()


def gzip_bomb(n):
    # The copies all spell the same 13 bits, so from its third byte on the stream repeats
    # every 13 bytes (eight copies): a short stream is written bit by bit and widened by
    # whole periods, which is instant where compressing n bytes takes a minute.
    copies = max(16, (n - 1) // 258)
    extra = (copies - 16) // 8
    short = deflate_zeros(copies - 8 * extra)
    stream = short[:2] + short[2:15] * extra + short[2:]
    size = 1 + 258 * copies
    crc, left, zeros = 0, size, bytes(1 << 24)
    while left:
        crc = zlib.crc32(zeros[:min(left, len(zeros))], crc)
        left -= min(left, len(zeros))
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + stream +
            struct.pack("<II", crc, size & 0xFFFFFFFF))


def elf_shdrs():
    # ELF64 little-endian x86-64 executable; e_shoff at 64 (just past the header, which
    # is the whole file), 65,535 entries of 64 bytes, e_shstrndx 1.
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x401000, 0, 64, 0, 64, 56, 0,
                               64, 65535, 1)


def perf_sizes(field, base):
    """base (a real perf.data) with one header field made absurd: attrs, data, or the
    feature sections' table (every entry's offset and size)."""
    data = bytearray(open(base, "rb").read())
    huge = 1 << 62
    if field == "attrs":
        struct.pack_into("<Q", data, 32, huge)  # attrs.size
    elif field == "data":
        struct.pack_into("<Q", data, 48, huge)  # data.size
    elif field == "features":
        offset, size = struct.unpack_from("<QQ", data, 40)
        table = offset + size  # the feature table follows the data section
        bits = int.from_bytes(data[72:104], "little")
        for i in range(bin(bits).count("1")):
            struct.pack_into("<QQ", data, table + 16 * i, huge - 16 * i, huge)
    return bytes(data)


def perf_grow(base, megabytes):
    """base (a perf.data file, not a pipe) with its sample records repeated until its data
    section holds `megabytes` MB: the records are copied whole, every offset past the data
    (the attributes, their ids, the feature sections) moved by what was added. Yields the
    file in pieces: it is written as it is made."""
    data = bytearray(open(base, "rb").read())
    attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<5Q", data, 16)
    end = data_off + data_size
    samples, at = bytearray(), data_off
    while at + 8 <= end:
        kind, _, size = struct.unpack_from("<IHH", data, at)
        if size < 8:
            break
        if kind == 9:  # PERF_RECORD_SAMPLE
            samples += data[at:at + size]
        at += size
    copies = max(0, (megabytes << 20) - data_size) // max(1, len(samples))
    delta = copies * len(samples)

    def moved(off):
        return off + delta if off >= end else off

    head, tail = bytearray(data[:end]), bytearray(data[end:])
    struct.pack_into("<QQ", head, 40, data_off, data_size + delta)
    def move_u64(at):  # the offset stored at file offset `at` (before or after the data)
        buf, at = (head, at) if at < end else (tail, at - end)
        struct.pack_into("<Q", buf, at, moved(struct.unpack_from("<Q", buf, at)[0]))

    move_u64(24)
    for i in range(attrs_size // attr_size):  # each attribute ends with its ids' section
        move_u64(attrs_off + i * attr_size + attr_size - 16)
    bits = int.from_bytes(data[72:104], "little")
    for i in range(bin(bits).count("1")):  # the feature table, right after the data
        off = struct.unpack_from("<Q", tail, 16 * i)[0]
        struct.pack_into("<Q", tail, 16 * i, moved(off))
    yield bytes(head)
    for _ in range(copies):
        yield bytes(samples)
    yield bytes(tail)


def fixture(accounts_json, ix_accounts_json, elf="none.so"):
    prog = "42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5"
    return ('{"programs": [{"id": "%s", "elf": "%s"}], "accounts": %s, '
            '"instruction": {"program_id": "%s", "data": "", "accounts": %s}, '
            '"expect": {"result": "success"}}' % (prog, elf, accounts_json, prog,
                                                  ix_accounts_json)).encode()


def nested_json(n):
    return fixture("[" * n + "]" * n, "[]")


def ix_accounts(n, elf):
    key = "SysvarRent111111111111111111111111111111111"
    one = '{"pubkey": "%s", "is_signer": false, "is_writable": false}' % key
    return fixture("[]", "[" + ", ".join([one] * n) + "]", elf)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 0
    elf = sys.argv[4] if len(sys.argv) > 4 else "none.so"
    makers = {
        "pprof-types": lambda: pprof_types(n),
        "pprof-deep": lambda: pprof_deep(n),
        "pprof-name": lambda: pprof_name(n),
        "gzip-bomb": lambda: gzip_bomb(n),
        "folded-deep": lambda: b"main" + b";f" * n + b" 5\n",
        "folded-name": lambda: b"main;" + b"n" * n + b" 5\n",
        "elf-shdrs": elf_shdrs,
        "perf-sizes": lambda: perf_sizes(sys.argv[3], sys.argv[4]),
        "nested-json": lambda: nested_json(n),
        "perf-grow": lambda: perf_grow(sys.argv[4], n),
        "ix-accounts": lambda: ix_accounts(n, elf),
    }
    made = makers[kind]()
    with open(out, "wb") as f:
        for chunk in [made] if isinstance(made, bytes) else made:
            f.write(chunk)


if __name__ == "__main__":
    main()
