"""sol_secp256k1_recover's test inputs: ECDSA signatures over secp256k1 made here from fixed
private keys (RFC 6979 is not needed: any nonce works), each printed as
`NAME DATA PUBKEY` where DATA is runtime_calls.c case 8's instruction data and PUBKEY the
signer's uncompressed key (x, y) or `-` for inputs no key is recovered from."""
import hashlib
import struct

P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        m = 3 * a[0] * a[0] * pow(2 * a[1], -1, P)
    else:
        m = (b[1] - a[1]) * pow(b[0] - a[0], -1, P)
    x = (m * m - a[0] - b[0]) % P
    return (x, (m * (a[0] - x) - a[1]) % P)


def mul(k, pt):
    r = None
    while k:
        if k & 1:
            r = add(r, pt)
        pt = add(pt, pt)
        k >>= 1
    return r


def sign(priv, h, nonce):
    R = mul(nonce, G)
    r = R[0] % N
    s = pow(nonce, -1, N) * (int.from_bytes(h, 'big') + r * priv) % N
    recid = (R[1] & 1) | (2 if R[0] >= N else 0)
    return r, s, recid


def data(h, recid, r, s):
    return ('08' + h.hex() + struct.pack('<Q', recid).hex() + r.to_bytes(32, 'big').hex() +
            s.to_bytes(32, 'big').hex())


def key(priv):
    Q = mul(priv, G)
    return Q[0].to_bytes(32, 'big').hex() + Q[1].to_bytes(32, 'big').hex()


for i in range(4):
    priv = int.from_bytes(hashlib.sha256(b'tally secp256k1 key %d' % i).digest(), 'big') % N
    h = hashlib.sha256(b'message %d' % i).digest()
    nonce = int.from_bytes(hashlib.sha256(b'nonce %d' % i).digest(), 'big') % N
    r, s, recid = sign(priv, h, nonce)
    print(f'valid_{i}', data(h, recid, r, s), key(priv))
    # (r, n - s) signs the same hash with the other recovery parity: high-s is accepted
    print(f'high_s_{i}', data(h, recid ^ 1, r, N - s), key(priv))
priv = 12345
h = hashlib.sha256(b'edge').digest()
r, s, recid = sign(priv, h, 777)
print('wrong_recid', data(h, recid ^ 1, r, s), '-')
print('recid_4', data(h, 4, r, s), '-')
print('recid_2', data(h, 2, r, s), '-')
print('recid_huge', data(h, 2**40, r, s), '-')
print('r_is_n', data(h, recid, N, s), '-')
print('s_is_n', data(h, recid, r, N), '-')
print('r_zero', data(h, recid, 0, s), '-')
print('s_zero', data(h, recid, r, 0), '-')
print('hash_is_n', data(N.to_bytes(32, 'big'), recid, r, s), '-')
