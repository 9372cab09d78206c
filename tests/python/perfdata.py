# A writer of perf.data files shaped like tally record's Python recordings: a CPU-clock
# event with frame-pointer callchains and a bpf-output event (PERF_SAMPLE_RAW) carrying the
# payloads of docs/python.md, both with PERF_SAMPLE_IDENTIFIER, times in CLOCK_MONOTONIC.
# Written from the kernel's and perf's layouts (linux/perf_event.h, tools/perf/util/header.h)
# so that the replay can be tested before and apart from the recorder. The code records
# are real code objects of this interpreter: their co_linetable and the lines Python
# itself gives (co_lines) are what the tests compare tally with.
import struct

PERF_TYPE_SOFTWARE = 1
SW_CPU_CLOCK, SW_BPF_OUTPUT = 0, 10
S_IP, S_TID, S_TIME, S_CPU, S_PERIOD, S_CALLCHAIN, S_RAW, S_IDENTIFIER = (
    1 << 0, 1 << 1, 1 << 2, 1 << 7, 1 << 8, 1 << 5, 1 << 10, 1 << 16)
REC_MMAP2, REC_COMM, REC_EXIT, REC_SAMPLE = 10, 3, 4, 9
CONTEXT_USER = (1 << 64) - 512
MAGIC = 0x31595054
ENTRY = 1

CPU_TYPE = S_IDENTIFIER | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_CALLCHAIN
BPF_TYPE = S_IDENTIFIER | S_TID | S_TIME | S_CPU | S_RAW
CPU_ID, BPF_ID = 1, 2


def attr(config, sample_type, period):
    """struct perf_event_attr as far as PERF_ATTR_SIZE_VER5 (112 bytes)."""
    a = bytearray(112)
    struct.pack_into('<IIQQQ', a, 0, PERF_TYPE_SOFTWARE, 112, config, period, sample_type)
    struct.pack_into('<Q', a, 40, 1 << 18 | 1 << 25)  # sample_id_all, use_clockid
    struct.pack_into('<i', a, 92, 1)  # clockid: CLOCK_MONOTONIC
    return bytes(a)


def trailer(pid, tid, time):
    # sample_id_all: TID, TIME, CPU, IDENTIFIER (the CPU event's)
    return struct.pack('<IIQIIQ', pid, tid, time, 0, 0, CPU_ID)


def record(kind, body, misc=0):
    body += b'\0' * (-len(body) % 8)
    return struct.pack('<IHH', kind, misc, 8 + len(body)) + body


class Recording:
    def __init__(self):
        self.recs = []

    def comm(self, pid, tid, name, time, exec_=False):
        body = struct.pack('<II', pid, tid) + name.encode() + b'\0'
        body += b'\0' * (-len(body) % 8)
        self.recs.append(record(REC_COMM, body + trailer(pid, tid, time),
                                0x2000 if exec_ else 0))

    def mmap(self, pid, start, length, pgoff, path, time):
        body = struct.pack('<IIQQQIIQQII', pid, pid, start, length, pgoff, 0, 0, 0, 0, 5, 2)
        name = path.encode() + b'\0'
        name += b'\0' * (-len(name) % 8)
        self.recs.append(record(REC_MMAP2, body + name + trailer(pid, pid, time)))

    def exit(self, pid, tid, time):
        body = struct.pack('<IIIIQ', pid, pid, tid, tid, time)
        self.recs.append(record(REC_EXIT, body + trailer(pid, tid, time)))

    def sample(self, pid, tid, time, pcs, period=1000000):
        """pcs innermost first: the sampled ip, then return addresses."""
        chain = [CONTEXT_USER] + list(pcs)
        body = struct.pack('<QQIIQIIQQ', CPU_ID, pcs[0], pid, tid, time, 0, 0, period,
                           len(chain))
        body += b''.join(struct.pack('<Q', x) for x in chain)
        self.recs.append(record(REC_SAMPLE, body))

    def raw(self, pid, tid, time, payload):
        size = len(payload) + (-(len(payload) + 4) % 8)
        body = struct.pack('<QIIQIII', BPF_ID, pid, tid, time, 0, 0, size)
        body += payload.ljust(size, b'\0')
        self.recs.append(record(REC_SAMPLE, body))

    def stack(self, pid, tid, time, frames, flags=0):
        """frames innermost first: (code address, lasti, is_entry)."""
        p = struct.pack('<IHHIIII', MAGIC, 1, flags, pid, tid, len(frames), 0)
        for code, lasti, entry in frames:
            p += struct.pack('<QiI', code, lasti, ENTRY if entry else 0)
        self.raw(pid, tid, time, p)

    def code(self, pid, time, addr, co):
        q, f, t = co.co_qualname.encode(), co.co_filename.encode(), co.co_linetable
        p = struct.pack('<IHHIIQiHHI', MAGIC, 2, 0, pid, 0, addr, co.co_firstlineno, len(q),
                        len(f), len(t)) + q + f + t
        self.raw(pid, 0, time, p)

    def write(self, path):
        data = b''.join(self.recs)
        attrs = [(attr(SW_CPU_CLOCK, CPU_TYPE, 1000000), CPU_ID),
                 (attr(SW_BPF_OUTPUT, BPF_TYPE, 1), BPF_ID)]
        hdr = 104
        ids_off = hdr
        attrs_off = ids_off + 8 * len(attrs)
        attr_size = 112 + 16
        data_off = attrs_off + attr_size * len(attrs)
        out = bytearray(struct.pack('<8sQQQQQQQQ', b'PERFILE2', hdr, attr_size, attrs_off,
                                    attr_size * len(attrs), data_off, len(data), 0, 0))
        out += b'\0' * (hdr - len(out))  # features: none
        for _, i in attrs:
            out += struct.pack('<Q', i)
        for n, (a, _) in enumerate(attrs):
            out += a + struct.pack('<QQ', ids_off + 8 * n, 8)
        out += data
        with open(path, 'wb') as fh:
            fh.write(out)


def line_at(co, lasti):
    """The line Python gives the instruction at code unit lasti (what f_lineno reads)."""
    for start, end, line in co.co_lines():
        if start <= 2 * lasti < end:
            return line
    return None
