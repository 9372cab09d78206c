"""Instruction data for tests/solana/syscalls/poseidon_calls.c, one case a line: NAME HEX.
The inputs only: what each call returns is whatever LiteSVM returns (the test compares).
Every width (1 to 12 inputs) in both byte orders on small and on large field elements, the
modulus and values past it, no inputs and 13, parameter sets and endiannesses that do not
exist, inputs that are not 32 bytes, pointers the program may not use, and budgets that run
out at the call. A name ending in _budget_N runs with a compute budget of N."""
import hashlib
import struct

R = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001
RO_RESULT, LIST_AT_8, LIST_MISALIGNED = 1, 2, 4
BAD_SLICE = 0xff


def element(v, little):
    return v.to_bytes(32, 'little' if little else 'big')


def data(slices, params=0, endian=0, n=None, flags=0):
    """slices: bytes, or None for a slice at address 8."""
    n = len(slices) if n is None else n
    lens = bytes(BAD_SLICE if s is None else len(s) for s in slices)
    body = b''.join(s for s in slices if s is not None)
    return (bytes([flags]) + struct.pack('<QQQ', params, endian, n) + bytes([len(slices)]) +
            lens + body).hex()


def large(i, k):
    """A large field element, different for every i and k."""
    return int.from_bytes(hashlib.sha256(b'poseidon %d %d' % (i, k)).digest(), 'big') % R


def cases():
    for little, order in ((False, 'be'), (True, 'le')):
        for n in range(1, 13):
            yield f'w{n}_{order}_small', data([element(i + 1, little) for i in range(n)], endian=little)
            yield f'w{n}_{order}_large', data([element(large(n, i), little) for i in range(n)],
                                            endian=little)
        yield f'w3_{order}_zeroes', data([element(0, little)] * 3, endian=little)
        yield f'w2_{order}_r_minus_1', data([element(R - 1, little)] * 2, endian=little)
        yield f'w1_{order}_r', data([element(R, little)], endian=little)
        yield f'w3_{order}_last_r', data([element(1, little), element(2, little),
                                          element(R, little)], endian=little)
        yield f'w2_{order}_all_ff', data([b'\xff' * 32, element(1, little)], endian=little)
    one = element(1, False)
    yield 'ones_be', data([b'\x01' * 32])
    yield 'w1_be_one', data([one])
    yield 'w12_be_ones', data([one] * 12)
    # R in big-endian read as little-endian is below R: the byte order is the syscall's
    yield 'r_be_bytes_as_le', data([element(R, False)], endian=1)
    yield 'no_inputs', data([])
    yield 'no_inputs_list_at_8', data([], flags=LIST_AT_8)
    yield 'n13', data([one] * 13)
    yield 'n13_claimed', data([one] * 2, n=13)
    yield 'n_max', data([one], n=2**64 - 1)
    yield 'params_1', data([one], params=1)
    yield 'params_max', data([one], params=2**64 - 1)
    yield 'endian_2', data([one], endian=2)
    yield 'endian_max', data([one], endian=2**64 - 1)
    yield 'params_1_n13', data([one] * 13, params=1)
    yield 'len_0', data([b''])
    yield 'len_1', data([b'\x01'])
    yield 'len_31', data([one[1:]])
    yield 'len_33', data([b'\x00' + one])
    yield 'len_31_second', data([one, one[1:]])
    yield 'result_read_only', data([one, one], flags=RO_RESULT)
    yield 'result_read_only_bad_input', data([element(R, False)], flags=RO_RESULT)
    yield 'result_read_only_n13', data([one] * 13, flags=RO_RESULT)
    yield 'list_at_8', data([one, one], flags=LIST_AT_8)
    yield 'list_misaligned', data([one, one], flags=LIST_MISALIGNED)
    yield 'input_at_8', data([one, None])
    yield 'input_at_8_not_read', data([one, None], n=1)
    yield 'input_at_8_after_r', data([element(R, False), None])
    for budget in (200, 600, 1200, 1500, 1700, 2000):
        yield f'w3_budget_{budget}', data([one] * 3)
    for budget in (1000, 9000, 9500):
        yield f'w12_budget_{budget}', data([one] * 12)


for name, hexdata in cases():
    print(name, hexdata)
