"""Instruction data for tests/solana/syscalls/bn254_calls.c, one case a line: NAME HEX.
The inputs only: what each call returns is whatever LiteSVM returns (the test compares).
Points are made here with affine arithmetic over Fp and Fp2 = Fp[i]/(i^2 + 1): G1's
generator (1, 2) and its multiples, G2's generator (EIP-197's) and its multiples, points on
the twist outside G2's subgroup, points off the curves, coordinates not below p, the flag
bits arkworks reads in a point's last byte, scalars not below r, and bad lengths. Encodings
are EIP-197's big-endian ones (G2: x1, x0, y1, y0) for ops without 0x80 and arkworks'
little-endian ones (x0, x1, y0, y1) with it."""
import hashlib

P = 21888242871839275222246405745257275088696311157297823662689037894645226208583
R = 21888242871839275222246405745257275088548364400416034343698204186575808495617


class F2:
    """a + b i"""
    def __init__(self, a, b=0):
        self.a, self.b = a % P, b % P

    def __add__(s, o): return F2(s.a + o.a, s.b + o.b)
    def __sub__(s, o): return F2(s.a - o.a, s.b - o.b)
    def __neg__(s): return F2(-s.a, -s.b)
    def __mul__(s, o): return F2(s.a * o.a - s.b * o.b, s.a * o.b + s.b * o.a)
    def __eq__(s, o): return s.a == o.a and s.b == o.b

    def inv(s):
        n = pow(s.a * s.a + s.b * s.b, P - 2, P)
        return F2(s.a * n, -s.b * n)


B1 = F2(3)
B2 = F2(3) * F2(9, 1).inv()


def on_curve(pt, b):
    x, y = pt
    return y * y == x * x * x + b


def add(p, q):
    if p is None:
        return q
    if q is None:
        return p
    (x1, y1), (x2, y2) = p, q
    if x1 == x2:
        if not y1 == y2 or y1 == F2(0):
            return None
        lam = F2(3) * x1 * x1 * (y1 + y1).inv()
    else:
        lam = (y2 - y1) * (x2 - x1).inv()
    x3 = lam * lam - x1 - x2
    return (x3, lam * (x1 - x3) - y1)


def mul(k, pt):
    acc = None
    while k:
        if k & 1:
            acc = add(acc, pt)
        pt, k = add(pt, pt), k >> 1
    return acc


def neg(pt):
    return (pt[0], -pt[1])


def sqrt_f(a):
    s = pow(a, (P + 1) // 4, P)
    return s if s * s % P == a % P else None


def twist_point(x):
    """A point of y^2 = x^3 + 3/(9 + i) with x = x + i, or None: the root by brute force
    over the norm method (p = 3 mod 4)."""
    xx = F2(x, 1)
    rhs = xx * xx * xx + B2
    a, b = rhs.a, rhs.b
    n = sqrt_f(a * a + b * b)
    if n is None:
        return None
    for d in ((a + n) * pow(2, P - 2, P) % P, (a - n) * pow(2, P - 2, P) % P):
        x0 = sqrt_f(d)
        if x0:
            y = F2(x0, b * pow(2 * x0, P - 2, P))
            if y * y == rhs:
                return (xx, y)
    return None


G1 = (F2(1), F2(2))
G2 = (F2(10857046999023057135944570762232829481370756359578518086990519993285655852781,
         11559732032986387107991004021392285783925812861821192530917403151452391805634),
      F2(8495653923123431417604973247489272438418190587263600148770280649306958101930,
         4082367875863433681332203403145435568316851327593401208105741076214120093531))
assert on_curve(G1, B1) and on_curve(G2, B2) and mul(R, G2) is None
# On the twist, outside G2 (the twist's order is r (2p - r), and r q is not infinity).
TWIST = next(q for q in (twist_point(x) for x in range(1, 50)) if q and mul(R, q) is not None)
OFF1 = (F2(1), F2(3))
OFF2 = (G2[0], G2[1] + F2(1))


def be(v): return (v % 2**256).to_bytes(32, 'big')
def le(v): return (v % 2**256).to_bytes(32, 'little')


def g1(pt, little=False):
    if pt is None:
        return bytes(64)
    f = le if little else be
    return f(pt[0].a) + f(pt[1].a)


def g2(pt, little=False):
    if pt is None:
        return bytes(128)
    x, y = pt
    if little:
        return le(x.a) + le(x.b) + le(y.a) + le(y.b)
    return be(x.b) + be(x.a) + be(y.b) + be(y.a)


def op(case, code, data):
    return bytes([case, code]) + data


def group(code, data): return op(0, code, data)
def comp(code, data): return op(1, code, data)


def flagged(enc, byte_at, bits):
    b = bytearray(enc)
    b[byte_at] |= bits
    return bytes(b)


def cases():
    p2, p3 = mul(2, G1), mul(3, G1)
    q2 = mul(2, G2)
    # G1 addition, big-endian (0) and little-endian (0x80)
    yield 'g1_add_g_2g', group(0, g1(G1) + g1(p2))
    yield 'g1_add_doubling', group(0, g1(G1) + g1(G1))
    yield 'g1_add_inverse', group(0, g1(G1) + g1(neg(G1)))
    yield 'g1_add_zero_left', group(0, g1(None) + g1(p3))
    yield 'g1_add_zeros', group(0, bytes(128))
    yield 'g1_add_empty', group(0, b'')
    yield 'g1_add_short_64', group(0, g1(p2))
    yield 'g1_add_short_100', group(0, (g1(G1) + g1(p2))[:100])
    yield 'g1_add_long_129', group(0, g1(G1) + g1(p2) + b'\0')
    yield 'g1_add_off_curve', group(0, g1(OFF1) + g1(G1))
    yield 'g1_add_x_is_p', group(0, be(P) + be(2) + g1(G1))
    yield 'g1_add_y_plus_p', group(0, be(1) + be(2 + P) + g1(G1))
    yield 'g1_add_flag_infinity', group(0, flagged(g1(p2), 32, 0x40) + g1(G1))
    yield 'g1_add_flag_negative', group(0, flagged(g1(p2), 32, 0x80) + g1(G1))
    yield 'g1_add_flag_both', group(0, flagged(g1(p2), 32, 0xc0) + g1(G1))
    yield 'g1_add_flag_in_x', group(0, flagged(g1(p2), 0, 0x40) + g1(G1))
    yield 'g1_add_le', group(0x80, g1(G1, True) + g1(p2, True))
    yield 'g1_add_le_short', group(0x80, g1(G1, True))
    yield 'g1_add_le_flag_infinity', group(0x80, flagged(g1(p2, True), 63, 0x40) + g1(G1, True))
    # subtraction is not an op of this syscall
    yield 'g1_sub', group(1, g1(p3) + g1(G1))
    yield 'g1_sub_le', group(0x81, g1(p3, True) + g1(G1, True))
    # G1 multiplication
    yield 'g1_mul_7', group(2, g1(G1) + be(7))
    yield 'g1_mul_big', group(2, g1(p3) + be(2**256 - 12345))
    yield 'g1_mul_r', group(2, g1(G1) + be(R))
    yield 'g1_mul_r_plus_5', group(2, g1(p2) + be(R + 5))
    yield 'g1_mul_zero_scalar', group(2, g1(G1) + be(0))
    yield 'g1_mul_zero_point', group(2, g1(None) + be(9))
    yield 'g1_mul_short_64', group(2, g1(p2))
    yield 'g1_mul_short_80', group(2, (g1(p2) + be(2**200 + 3))[:80])
    yield 'g1_mul_128', group(2, g1(p2) + be(5) + bytes(32))
    yield 'g1_mul_97', group(2, g1(p2) + be(5) + b'\0')
    yield 'g1_mul_off_curve', group(2, g1(OFF1) + be(5))
    yield 'g1_mul_le', group(0x82, g1(p2, True) + le(11))
    yield 'g1_mul_le_short', group(0x82, g1(p2, True) + le(11)[:31])
    # G2 addition and multiplication (SIMD-0302)
    yield 'g2_add_g_2g', group(4, g2(G2) + g2(q2))
    yield 'g2_add_doubling', group(4, g2(G2) + g2(G2))
    yield 'g2_add_inverse', group(4, g2(G2) + g2(neg(G2)))
    yield 'g2_add_zero', group(4, g2(None) + g2(q2))
    yield 'g2_add_not_subgroup', group(4, g2(TWIST) + g2(G2))
    yield 'g2_add_off_curve', group(4, g2(OFF2) + g2(G2))
    yield 'g2_add_short', group(4, g2(G2) + g2(q2)[:127])
    yield 'g2_add_le', group(0x84, g2(G2, True) + g2(q2, True))
    yield 'g2_add_flag_infinity', group(4, flagged(g2(q2), 64, 0x40) + g2(G2))
    yield 'g2_sub', group(5, g2(q2) + g2(G2))
    yield 'g2_mul_5', group(6, g2(G2) + be(5))
    yield 'g2_mul_big', group(6, g2(q2) + be(2**256 - 1))
    yield 'g2_mul_not_subgroup', group(6, g2(TWIST) + be(3))
    yield 'g2_mul_zero', group(6, g2(None) + be(3))
    yield 'g2_mul_short', group(6, g2(G2) + be(5)[:31])
    yield 'g2_mul_le', group(0x86, g2(q2, True) + le(2**255 + 1))
    yield 'g2_mul_x_is_p', group(6, be(0) + be(P) + g2(G2)[64:] + be(1))
    # pairings: e(a P, b Q) e(-ab P, Q) = 1; e(P, Q) alone is not
    a, b = 1234567, 7654321
    yield 'pairing_empty', group(3, b'')
    yield 'pairing_one', group(3, g1(G1) + g2(G2))
    yield 'pairing_two_cancel', group(3, g1(mul(a, G1)) + g2(mul(b, G2)) +
                                     g1(neg(mul(a * b, G1))) + g2(G2))
    yield 'pairing_two_not', group(3, g1(mul(a, G1)) + g2(mul(b, G2)) +
                                  g1(mul(a * b, G1)) + g2(G2))
    yield 'pairing_three', group(3, g1(G1) + g2(G2) + g1(neg(G1)) + g2(q2) + g1(G1) + g2(G2))
    yield 'pairing_four', group(3, g1(p2) + g2(G2) + g1(G1) + g2(neg(q2)) +
                               g1(p3) + g2(q2) + g1(neg(mul(6, G1))) + g2(G2))
    yield 'pairing_zero_points', group(3, g1(None) + g2(G2) + g1(G1) + g2(None))
    yield 'pairing_not_subgroup', group(3, g1(G1) + g2(TWIST))
    yield 'pairing_off_curve_g1', group(3, g1(OFF1) + g2(G2))
    yield 'pairing_off_curve_g2', group(3, g1(G1) + g2(OFF2))
    yield 'pairing_short', group(3, (g1(G1) + g2(G2))[:191])
    yield 'pairing_extra_byte', group(3, g1(G1) + g2(G2) + b'\0')
    yield 'pairing_le_cancel', group(0x83, g1(G1, True) + g2(q2, True) +
                                    g1(neg(p2), True) + g2(G2, True))
    yield 'pairing_le_one', group(0x83, g1(G1, True) + g2(G2, True))
    # unknown ops
    yield 'group_op_7', group(7, g1(G1) + g1(G1))
    yield 'group_op_0x40', group(0x40, g1(G1) + g1(G1))
    # compression: G1 (0 compress, 1 decompress), G2 (2, 3)
    for name, pt in (('g', G1), ('2g', p2), ('3g', p3), ('neg_g', neg(G1))):
        yield f'g1_compress_{name}', comp(0, g1(pt))
        yield f'g1_compress_le_{name}', comp(0x80, g1(pt, True))
    yield 'g1_compress_zero', comp(0, bytes(64))
    yield 'g1_compress_off_curve', comp(0, g1(OFF1))
    yield 'g1_compress_x_is_p', comp(0, be(P) + be(2))
    yield 'g1_compress_flag_infinity', comp(0, flagged(g1(p2), 32, 0x40))
    yield 'g1_compress_short', comp(0, g1(G1)[:63])
    x2 = be(p2[0].a)
    yield 'g1_decompress_2g', comp(1, x2)
    yield 'g1_decompress_2g_neg', comp(1, flagged(x2, 0, 0x80))
    yield 'g1_decompress_le_2g_neg', comp(0x81, flagged(le(p2[0].a), 31, 0x80))
    yield 'g1_decompress_zero', comp(1, bytes(32))
    yield 'g1_decompress_infinity', comp(1, flagged(be(5), 0, 0x40))
    yield 'g1_decompress_both_flags', comp(1, flagged(x2, 0, 0xc0))
    yield 'g1_decompress_no_root', comp(1, be(next(x for x in range(1, 50)
                                                   if sqrt_f(x**3 + 3) is None)))
    yield 'g1_decompress_x_is_p', comp(1, be(P))
    yield 'g1_decompress_long', comp(1, x2 + b'\0')
    for name, pt in (('g', G2), ('2g', q2), ('neg_2g', neg(q2)), ('twist', TWIST)):
        yield f'g2_compress_{name}', comp(2, g2(pt))
        yield f'g2_compress_le_{name}', comp(0x82, g2(pt, True))
        yield f'g2_decompress_{name}', comp(3, (g2(pt)[:64]))
        yield f'g2_decompress_neg_{name}', comp(3, flagged(g2(pt)[:64], 0, 0x80))
        yield f'g2_decompress_le_neg_{name}', comp(0x83, flagged(g2(pt, True)[:64], 63, 0x80))
    yield 'g2_compress_zero', comp(2, bytes(128))
    yield 'g2_compress_off_curve', comp(2, g2(OFF2))
    yield 'g2_compress_flag_both', comp(2, flagged(g2(G2), 64, 0xc0))
    yield 'g2_decompress_zero', comp(3, bytes(64))
    yield 'g2_decompress_infinity', comp(3, flagged(bytes(64), 0, 0x40))
    yield 'g2_decompress_x1_is_p', comp(3, be(P) + be(1))
    yield 'g2_decompress_short', comp(3, g2(G2)[:63])
    yield 'compression_op_4', comp(4, g1(G1))
    yield 'compression_op_0x84', comp(0x84, g1(G1))
    # pseudo-random scalars (fixed seeds): products, their compressions (about half of them
    # the larger root), and pairings e(kP, Q) e(-P, kQ) = 1
    for i in range(6):
        k = int.from_bytes(hashlib.sha256(b'bn254 %d' % i).digest(), 'big')
        kp, kq = mul(k, G1), mul(k, G2)
        yield f'g1_mul_random_{i}', group(2, g1(p3) + be(k))
        yield f'g2_mul_random_{i}', group(0x86, g2(q2, True) + le(k))
        yield f'g1_compress_random_{i}', comp(0, g1(kp))
        yield f'g2_compress_random_{i}', comp(2, g2(kq))
        yield f'pairing_random_{i}', group(3, g1(kp) + g2(G2) + g1(neg(G1)) + g2(kq))
    # the result in read-only memory; the input at an unmapped address; input past the data
    yield 'ro_result_g1_add', op(2, 0, g1(G1) + g1(p2))
    yield 'ro_result_failed_add', op(2, 0, g1(OFF1) + g1(p2))
    yield 'ro_result_compress', op(3, 0, g1(G1))
    yield 'input_unmapped', op(4, 0, g1(G1) + g1(p2))
    yield 'input_past_data', op(5, 2, g1(G1) + be(3))
    # budgets that end inside a call (the fixture's compute_budget is the name's tail)
    yield 'g1_mul_budget_3000', group(2, g1(G1) + be(7))
    yield 'pairing_budget_40000', group(3, g1(G1) + g2(G2))
    yield 'g2_decompress_budget_10000', comp(3, g2(G2)[:64])
    yield 'g1_compress_budget_200', comp(0, g1(G1))


if __name__ == '__main__':
    for name, data in cases():
        print(name, data.hex())
