#!/usr/bin/env python3
"""Prints the Python payloads of a tally perf.data, read with nothing of tally's: the
perf.data layout (tools/perf/Documentation/perf.data-file-format.txt) and the payload of
docs/python.md. One line per record, in file order:
  sample TIME PID TID                      a CPU sample (the first attribute)
  stack TIME PID TID FLAGS N CODE:LASTI:ENTRY...   (innermost first, CODE in hex)
  code TIME PID CODE FLAGS FIRSTLINE QUALNAME FILENAME LINETABLE_HEX
Exits 1 with a message on anything malformed."""
import struct
import sys

S_IP, S_TID, S_TIME, S_ID, S_CPU, S_PERIOD, S_RAW, S_IDENT = 1, 2, 4, 64, 128, 256, 1024, 1 << 16


def fail(msg):
    sys.exit("pydata.py: " + msg)


def main(path):
    data = open(path, "rb").read()
    if data[:8] != b"PERFILE2":
        fail("not a perf.data file")
    _, attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<6Q", data, 8)
    attrs = []
    for at in range(attrs_off, attrs_off + attrs_size, attr_size):
        sample_type = struct.unpack_from("<Q", data, at + 24)[0]
        ids_off, ids_size = struct.unpack_from("<QQ", data, at + attr_size - 16)
        ids = struct.unpack_from("<%dQ" % (ids_size // 8), data, ids_off)
        attrs.append((sample_type, set(ids)))
    if len(attrs) < 2:
        fail("one event attribute: no bpf-output events")
    by_id = {}
    for n, (st, ids) in enumerate(attrs):
        if not st & S_IDENT:
            fail("attribute %d lacks PERF_SAMPLE_IDENTIFIER" % n)
        for i in ids:
            by_id[i] = n
    at, end = data_off, data_off + data_size
    while at + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", data, at)
        if size < 8 or at + size > end:
            fail("record at %d runs past the data" % at)
        if typ == 9:
            sample(data[at + 8:at + size], attrs, by_id)
        at += size


def sample(body, attrs, by_id):
    ident = struct.unpack_from("<Q", body, 0)[0]
    n = by_id.get(ident, 0)
    st = attrs[n][0]
    at = 8 + (8 if st & S_IP else 0)
    pid, tid = struct.unpack_from("<II", body, at)
    time = struct.unpack_from("<Q", body, at + 8)[0]
    if n == 0:
        print("sample %d %d %d" % (time, pid, tid))
        return
    at += 16 + (8 if st & S_CPU else 0)
    raw_size = struct.unpack_from("<I", body, at)[0]
    raw = body[at + 4:at + 4 + raw_size]
    if len(raw) != raw_size or raw_size < 8:
        fail("bpf-output sample with a short raw part")
    magic, typ, flags = struct.unpack_from("<IHH", raw, 0)
    if magic != 0x31595054:
        fail("payload magic %#x" % magic)
    if typ == 1:
        ppid, ptid, nframes, _ = struct.unpack_from("<IIII", raw, 8)
        if 24 + 16 * nframes > raw_size:
            fail("stack of %d frames in %d bytes" % (nframes, raw_size))
        frames = []
        for i in range(nframes):
            code, lasti, ff = struct.unpack_from("<QiI", raw, 24 + 16 * i)
            frames.append("%x:%d:%d" % (code, lasti, ff & 1))
        print("stack %d %d %d %d %d %s" % (time, ppid, ptid, flags, nframes, " ".join(frames)))
    elif typ == 2:
        ppid, _, code, first, qlen, flen, llen = struct.unpack_from("<IIQiHHI", raw, 8)
        at = 36
        if at + qlen + flen + llen > raw_size:
            fail("code record's strings run past its %d bytes" % raw_size)
        q = raw[at:at + qlen].decode(errors="backslashreplace")
        f = raw[at + qlen:at + qlen + flen].decode(errors="backslashreplace")
        lt = raw[at + qlen + flen:at + qlen + flen + llen]
        print("code %d %d %x %d %d %s %s %s" % (time, ppid, code, flags, first, q, f,
                                                 lt.hex() or "-"))
    else:
        fail("payload type %d" % typ)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: pydata.py FILE")
    main(sys.argv[1])
