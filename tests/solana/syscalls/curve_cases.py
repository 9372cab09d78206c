"""Instruction data for tests/solana/syscalls/curve_calls.c, one case a line: NAME HEX.
The inputs only: what each call returns is whatever LiteSVM returns (the test compares).
Edwards points are made here (affine arithmetic on -x^2 + y^2 = 1 + d x^2 y^2): the base
point, its multiples, the torsion points (orders 1, 2, 4, 8), a point with a torsion part,
encodings that are not canonical (y >= p, x = 0 with the sign bit) and ys off the curve.
Ristretto points come from libsodium through ctypes (crypto_core_ristretto255_from_hash,
crypto_scalarmult_ristretto255_base) plus hand-made bad encodings."""
import ctypes
import struct

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)


def enc_y(y, sign=0):
    return (y | sign << 255).to_bytes(32, 'little')


def x_of(y):
    """The root of x^2 = (y^2 - 1) / (d y^2 + 1) with x even, or None off the curve."""
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    xx = u * pow(v, P - 2, P) % P
    x = pow(xx, (P + 3) // 8, P)
    if x * x % P != xx:
        x = x * SQRT_M1 % P
    if x * x % P != xx:
        return None
    return P - x if x & 1 else x


def add(a, b):
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    return ((x1 * y2 + x2 * y1) * pow(1 + t, P - 2, P) % P,
            (y1 * y2 + x1 * x2) * pow(1 - t, P - 2, P) % P)


def mul(k, pt):
    acc = (0, 1)
    while k:
        if k & 1:
            acc = add(acc, pt)
        pt, k = add(pt, pt), k >> 1
    return acc


def enc(pt):
    return enc_y(pt[1], pt[0] & 1)


BASE = (x_of(4 * pow(5, P - 2, P) % P), 4 * pow(5, P - 2, P) % P)
# A point of order 8: y^2 with y a root of d y^4 + 2 y^2 - 1... found by halving (0, -1).
ORDER4 = (SQRT_M1, 0)
ORDER8 = next(p for p in ((x_of(y), y) for y in range(2, 2000) if x_of(y) is not None)
              if mul(L, p) != (0, 1) and mul(4, mul(L, p)) != (0, 1))
ORDER8 = mul(L, ORDER8)
assert mul(8, ORDER8) == (0, 1) and mul(4, ORDER8) != (0, 1)
OFF_CURVE = next(y for y in range(2, 100) if x_of(y) is None)

ED_POINTS = {
    'base': enc(BASE),
    'b7': enc(mul(7, BASE)),
    'b12345': enc(mul(12345, BASE)),
    'identity': enc((0, 1)),
    'identity_signbit': enc_y(1, 1),
    'identity_y_p1': enc_y(P + 1),
    'y_p': enc_y(P),
    'order2': enc((0, P - 1)),
    'order4': enc(ORDER4),
    'order4_neg': enc(((P - SQRT_M1) % P, 0)),
    'order8': enc(ORDER8),
    'base_plus_order8': enc(add(BASE, ORDER8)),
    'base_signflip': enc_y(BASE[1], 1 - (BASE[0] & 1)),
    'off_curve': enc_y(OFF_CURVE),
    'all_ff': b'\xff' * 32,
    'zero': bytes(32),
}

SODIUM = ctypes.CDLL('libsodium.so.23')
assert SODIUM.sodium_init() >= 0


def rist_from_hash(seed):
    out = ctypes.create_string_buffer(32)
    SODIUM.crypto_core_ristretto255_from_hash(out, (seed * 64)[:64])
    return out.raw


def rist_base_mul(k):
    out = ctypes.create_string_buffer(32)
    SODIUM.crypto_scalarmult_ristretto255_base(out, k.to_bytes(32, 'little'))
    return out.raw


RIST_BASE = rist_base_mul(1)
RIST_POINTS = {
    'base': RIST_BASE,
    'b9': rist_base_mul(9),
    'hash_a': rist_from_hash(b'a'),
    'hash_b': rist_from_hash(b'tally'),
    'identity': bytes(32),
    # s = p - s' for the base's s: the negative root, not canonical
    'base_negated_s': ((P - int.from_bytes(RIST_BASE, 'little')) % P).to_bytes(32, 'little'),
    's_is_p': P.to_bytes(32, 'little'),
    's_odd': (1).to_bytes(32, 'little'),
    'edwards_base': ED_POINTS['base'],
    'all_ff': b'\xff' * 32,
    'top_bit': (int.from_bytes(RIST_BASE, 'little') | 1 << 255).to_bytes(32, 'little'),
}

SCALARS = {
    'zero': 0, 'one': 1, 'two': 2, 'eight': 8, 'big': 0x1234567890abcdef1234567890abcdef1234567890abcdef123456789 % L,
    'l_minus_1': L - 1, 'l': L, 'l_plus_1': L + 1, 'top_bit': 1 << 255 | 5, 'all_ff': 2**256 - 1,
}


def sc(k):
    return k.to_bytes(32, 'little')


CURVES = (('edwards', 0, ED_POINTS), ('ristretto', 1, RIST_POINTS))


def cases():
    for cname, cid, pts in CURVES:
        for name, p in pts.items():
            yield f'{cname}_validate_{name}', bytes([0, cid]) + p
        names = list(pts)
        for i, a in enumerate(names):
            for b in names[i:i + 4]:
                for op, opname in ((0, 'add'), (1, 'sub')):
                    yield f'{cname}_{opname}_{a}_{b}', bytes([1, cid, op]) + pts[a] + pts[b]
        for sname, k in SCALARS.items():
            for pname in (('base', 'identity', 'order8', 'order4', 'base_plus_order8', 'identity_y_p1',
                           'off_curve') if cid == 0 else ('base', 'identity', 'hash_a', 's_odd', 'top_bit')):
                yield f'{cname}_mul_{sname}_{pname}', bytes([1, cid, 2]) + sc(k) + pts[pname]
        yield f'{cname}_op3', bytes([1, cid, 3]) + pts['base'] * 2
        yield f'{cname}_op_big', bytes([1, cid, 0xff]) + pts['base'] * 2
        yield f'{cname}_add_result_read_only', bytes([3, cid, 0]) + pts['base'] * 2
        bad = 'off_curve' if cid == 0 else 's_odd'
        yield f'{cname}_add_bad_result_read_only', bytes([3, cid, 0]) + pts[bad] * 2
        yield f'{cname}_validate_null', bytes([4, cid])
        yield f'{cname}_add_left_unmapped', bytes([5, cid, 0]) + pts['base'] * 2
        # multiscalar multiplication: n pairs, the scalars then the points
        msm = [
            ('empty', [], []),
            ('one', [SCALARS['big']], ['base']),
            ('two', [3, 5], ['base', 'b7' if cid == 0 else 'b9']),
            ('four', [1, L - 1, 0, 7], ['base', 'base', 'identity', 'hash_a' if cid else 'order8']),
            ('zeros', [0, 0], ['base', 'base']),
            ('bad_point', [1, 2], ['base', bad]),
            ('bad_scalar', [1, L], ['base', 'base']),
            ('top_bit_scalar', [1 << 255 | 1], ['base']),
        ]
        for mname, ks, ps in msm:
            body = b''.join(sc(k) for k in ks) + b''.join(pts[p] for p in ps)
            yield f'{cname}_msm_{mname}', bytes([2, cid]) + struct.pack('<H', len(ks)) + body
        body = sc(1) * 12 + pts['base'] * 12
        yield f'{cname}_msm_twelve', bytes([2, cid]) + struct.pack('<H', 12) + body
        yield f'{cname}_msm_513', bytes([2, cid]) + struct.pack('<H', 513) + sc(1) + pts['base']
        yield f'{cname}_msm_512_short', bytes([2, cid]) + struct.pack('<H', 512) + sc(1) + pts['base']
        yield f'{cname}_msm_claims_40', bytes([2, cid]) + struct.pack('<H', 40) + sc(1) + pts['base']
    # budgets that end inside a syscall (the fixture's compute_budget is the name's tail)
    yield 'edwards_mul_budget_2200', bytes([1, 0, 2]) + sc(5) + ED_POINTS['base']
    yield 'ristretto_msm_budget_3000', bytes([2, 1]) + struct.pack('<H', 2) + sc(1) * 2 + RIST_POINTS['base'] * 2
    yield 'edwards_validate_budget_200', bytes([0, 0]) + ED_POINTS['base']
    # unknown curves; 4 is BLS12-381's pairing id, 5 and 6 its G1 and G2 (msm has none)
    for cid in (2, 3, 4, 0x84, 0xff, 5, 6, 0x85, 0x86):
        if cid in (5, 6, 0x85, 0x86):
            yield f'bls_curve{cid}_validate', bytes([0, cid]) + ED_POINTS['base'] * 6
            yield f'bls_curve{cid}_add', bytes([1, cid, 0]) + ED_POINTS['base'] * 12
        else:
            yield f'curve{cid}_validate', bytes([0, cid]) + ED_POINTS['base']
            yield f'curve{cid}_add', bytes([1, cid, 0]) + ED_POINTS['base'] * 2
        yield f'curve{cid}_msm', bytes([2, cid]) + struct.pack('<H', 1) + sc(1) + ED_POINTS['base']


if __name__ == '__main__':
    for name, data in cases():
        print(name, data.hex())
