"""Public keys for the sBPF tests' fixtures: base58 as Solana writes them (each leading
zero byte a '1'), and a fixed 32-byte key per name."""
import hashlib

ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'


def b58(b):
    v, s = int.from_bytes(b, 'big'), ''
    while v:
        v, r = divmod(v, 58)
        s = ALPHABET[r] + s
    return '1' * (len(b) - len(b.lstrip(b'\0'))) + s


def name_key(name):
    return hashlib.sha256(name.encode()).digest()
