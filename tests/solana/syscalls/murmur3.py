"""Rewrites the one static syscall call of a v3 program to call another name: the call's
immediate is murmur3-32 of the syscall's name (seed 0), as the runtime keys syscalls.
Usage: murmur3.py IN.so OUT.so OLD_NAME NEW_NAME"""
import struct
import sys


def murmur3(data, seed=0):
    def mix(k):
        k = (k * 0xcc9e2d51) & 0xffffffff
        k = ((k << 15) | (k >> 17)) & 0xffffffff
        return (k * 0x1b873593) & 0xffffffff
    h, n = seed, len(data)
    for i in range(0, n - n % 4, 4):
        h ^= mix(struct.unpack('<I', data[i:i + 4])[0])
        h = ((h << 13) | (h >> 19)) & 0xffffffff
        h = (h * 5 + 0xe6546b64) & 0xffffffff
    tail = data[n - n % 4:]
    if tail:
        h ^= mix(int.from_bytes(tail, 'little'))
    h ^= n
    h ^= h >> 16
    h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & 0xffffffff
    return h ^ (h >> 16)


def main():
    src, dst, old, new = sys.argv[1:5]
    elf = bytearray(open(src, 'rb').read())
    old_imm = struct.pack('<I', murmur3(old.encode()))
    if elf.count(old_imm) != 1:
        sys.exit(f'{src}: {old} occurs {elf.count(old_imm)} times, not once')
    open(dst, 'wb').write(elf.replace(old_imm, struct.pack('<I', murmur3(new.encode()))))


main()
