#!/usr/bin/env python3
"""The seed of fuzz_gopclntab: a real .gopclntab (Go 1.18 layout, magic 0xfffffff0, 64-bit
little-endian) cut down to the functions [FIRST, FIRST + COUNT) of its function table, with
the names, pc-value tables, compile-unit file slices and file names they use, re-laid out
as the linker lays them (header, names, cutab, files, pc tables, function table and records).
Usage: objcopy -O binary --only-section=.gopclntab PROG IN; gopclntab_seed.py IN OUT FIRST COUNT
"""
import struct
import sys


def main():
    src = open(sys.argv[1], 'rb').read()
    first, count = int(sys.argv[3]), int(sys.argv[4])
    magic, pad, quantum, ptr = struct.unpack_from('<IHBB', src, 0)
    if magic != 0xfffffff0 or ptr != 8:
        sys.exit('not a 64-bit little-endian Go 1.18 table')
    nfunc, nfiles, text, names, cutab, filetab, pctab, pcln = struct.unpack_from('<8Q', src, 8)

    def cstr(off):
        return src[off:src.index(b'\0', off) + 1]

    def uvarint(off):
        v = shift = 0
        while True:
            b = src[off]
            off += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v, off

    def pctable(off):
        """The table's bytes and its largest value."""
        start, val, top, first_pair = pctab + off, -1, 0, True
        p = start
        while True:
            d, p = uvarint(p)
            if d == 0 and not first_pair:
                return src[start:p], top
            val += ~(d >> 1) if d & 1 else d >> 1
            top = max(top, val)
            _, p = uvarint(p)
            first_pair = False

    out_names, out_cutab, out_files, out_pc = bytearray(), [], bytearray(), bytearray(b'\0')
    file_at = {}
    recs, entries = [], []
    for i in range(first, first + count):
        entryoff, funcoff = struct.unpack_from('<II', src, pcln + 8 * i)
        rec = bytearray(src[pcln + funcoff:pcln + funcoff + 40])
        nameoff, = struct.unpack_from('<i', rec, 4)
        struct.pack_into('<i', rec, 4, len(out_names))
        out_names += cstr(names + nameoff)
        top = 0
        for field in (16, 20, 24):  # pcsp, pcfile, pcln
            off, = struct.unpack_from('<I', rec, field)
            if off:
                table, biggest = pctable(off)
                struct.pack_into('<I', rec, field, len(out_pc))
                out_pc += table
                if field == 20:
                    top = biggest
        cu, = struct.unpack_from('<I', rec, 32)
        struct.pack_into('<I', rec, 32, len(out_cutab))
        for k in range(top + 1):
            foff, = struct.unpack_from('<I', src, cutab + 4 * (cu + k))
            if foff == 0xffffffff:
                out_cutab.append(foff)
                continue
            name = cstr(filetab + foff)
            if name not in file_at:
                file_at[name] = len(out_files)
                out_files += name
            out_cutab.append(file_at[name])
        struct.pack_into('<I', rec, 28, 0)  # npcdata: the pcdata tables are left out
        rec[39] = 0  # nfuncdata: funcdata lies outside the table
        recs.append(rec)
        entries.append(entryoff)
    end, = struct.unpack_from('<I', src, pcln + 8 * (first + count))

    hdr = 8 + 8 * 8
    o_names = hdr
    o_cutab = o_names + len(out_names)
    o_files = o_cutab + 4 * len(out_cutab)
    o_pc = o_files + len(out_files)
    o_pcln = o_pc + len(out_pc)
    ftab = bytearray()
    funcoff = 8 * count + 8  # past the function table and its end entry (padded)
    for k in range(count):
        ftab += struct.pack('<II', entries[k], funcoff + 40 * k)
    ftab += struct.pack('<II', end, 0)
    out = bytearray(struct.pack('<IHBB', magic, pad, quantum, ptr))
    out += struct.pack('<8Q', count, len(file_at), text, o_names, o_cutab, o_files, o_pc, o_pcln)
    out += out_names + b''.join(struct.pack('<I', v) for v in out_cutab) + out_files + out_pc
    out += ftab + b''.join(recs)
    open(sys.argv[2], 'wb').write(out)


main()
