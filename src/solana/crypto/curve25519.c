/*
 * curve25519 by curve25519-dalek's rules, which the runtime's syscalls follow.
 *
 * The on-curve test, which program-derived addresses must fail: the 32 bytes decompress as an Edwards point iff (y^2 - 1) / (d y^2 + 1) is a
 * square mod p = 2^255 - 19 (y is the low 255 bits, not reduced: curve25519-dalek's
 * CompressedEdwardsY::decompress, which checks neither canonical encoding nor subgroup, so
 * libsodium's stricter point validation cannot stand in for it). Computed with Euler's
 * criterion in radix-2^51 arithmetic.
 *
 * The group operations are libsodium's. Its Edwards addition decodes as dalek decompresses
 * (any y below 2^255, read modulo p, and x = 0 with the sign bit set, are points; no subgroup
 * check). Its scalar multiplication refuses small-order points, points outside the
 * prime-order subgroup and non-canonical encodings, all of which dalek multiplies: for
 * those sol_edwards_mul splits the point into its prime-order and torsion parts (see
 * there). Its Ristretto decoder ignores bit 255, which dalek's refuses.
 */
#include "solana/crypto/curve25519.h"

#include <sodium.h>
#include <string.h>

typedef unsigned __int128 u128;
typedef uint64_t fe[5];

#define MASK51 ((1ull << 51) - 1)

static void fe_carry(fe h)
{
	for (int k = 0; k < 2; k++) {
		uint64_t c;
		for (int i = 0; i < 4; i++) {
			c = h[i] >> 51;
			h[i] &= MASK51;
			h[i + 1] += c;
		}
		c = h[4] >> 51;
		h[4] &= MASK51;
		h[0] += 19 * c;
	}
}

static void fe_from_bytes(fe h, const uint8_t s[32])
{
	uint64_t w[4];
	memcpy(w, s, 32); /* little-endian host: see the check in sol_on_curve */
	h[0] = w[0] & MASK51;
	h[1] = (w[0] >> 51 | w[1] << 13) & MASK51;
	h[2] = (w[1] >> 38 | w[2] << 26) & MASK51;
	h[3] = (w[2] >> 25 | w[3] << 39) & MASK51;
	h[4] = (w[3] >> 12) & MASK51;
}

static void fe_mul(fe r, const fe a, const fe b)
{
	u128 t[5];
	uint64_t b19[5];
	for (int i = 1; i < 5; i++)
		b19[i] = 19 * b[i];
	t[0] = (u128)a[0] * b[0] + (u128)a[1] * b19[4] + (u128)a[2] * b19[3] + (u128)a[3] * b19[2] + (u128)a[4] * b19[1];
	t[1] = (u128)a[0] * b[1] + (u128)a[1] * b[0] + (u128)a[2] * b19[4] + (u128)a[3] * b19[3] + (u128)a[4] * b19[2];
	t[2] = (u128)a[0] * b[2] + (u128)a[1] * b[1] + (u128)a[2] * b[0] + (u128)a[3] * b19[4] + (u128)a[4] * b19[3];
	t[3] = (u128)a[0] * b[3] + (u128)a[1] * b[2] + (u128)a[2] * b[1] + (u128)a[3] * b[0] + (u128)a[4] * b19[4];
	t[4] = (u128)a[0] * b[4] + (u128)a[1] * b[3] + (u128)a[2] * b[2] + (u128)a[3] * b[1] + (u128)a[4] * b[0];
	for (int i = 0; i < 4; i++) {
		t[i + 1] += (uint64_t)(t[i] >> 51);
		t[i] &= MASK51;
	}
	uint64_t c = (uint64_t)(t[4] >> 51);
	t[4] &= MASK51;
	for (int i = 0; i < 5; i++)
		r[i] = (uint64_t)t[i];
	r[0] += 19 * c;
	fe_carry(r);
}

/* a - b, kept positive by adding 2p first */
static void fe_sub(fe r, const fe a, const fe b)
{
	static const uint64_t two_p[5] = { 0xfffffffffffdaull, 0xffffffffffffeull, 0xffffffffffffeull,
					   0xffffffffffffeull, 0xffffffffffffeull };
	for (int i = 0; i < 5; i++)
		r[i] = a[i] + two_p[i] - b[i];
	fe_carry(r);
}

static void fe_add(fe r, const fe a, const fe b)
{
	for (int i = 0; i < 5; i++)
		r[i] = a[i] + b[i];
	fe_carry(r);
}

/* The unique representative in [0, p). */
static void fe_canon(fe h)
{
	fe_carry(h);
	uint64_t q = (h[0] + 19) >> 51;
	for (int i = 1; i < 5; i++)
		q = (h[i] + q) >> 51;
	h[0] += 19 * q;
	for (int i = 0; i < 4; i++) {
		h[i + 1] += h[i] >> 51;
		h[i] &= MASK51;
	}
	h[4] &= MASK51;
}

bool sol_on_curve(const uint8_t bytes[32])
{
	/* d = -121665/121666 mod p, in radix 2^51 */
	static const fe d = { 929955233495203ull, 466365720129213ull, 1662059464998953ull,
			      2033849074728123ull, 1442794654840575ull };
	static const fe one = { 1, 0, 0, 0, 0 };
	const uint16_t probe = 1;
	if (*(const uint8_t *)&probe != 1)
		return false; /* fe_from_bytes assumes a little-endian host */
	fe y, yy, u, v, uv, acc;
	fe_from_bytes(y, bytes);
	fe_mul(yy, y, y);
	fe_sub(u, yy, one);
	fe_mul(v, yy, d);
	fe_add(v, v, one);
	fe_mul(uv, u, v);
	/* uv^((p-1)/2), with (p-1)/2 = 2^254 - 10: bytes f6 ff .. ff 3f, little-endian */
	memcpy(acc, one, sizeof(fe));
	for (int bit = 253; bit >= 0; bit--) {
		fe_mul(acc, acc, acc);
		int byte = bit / 8, set;
		uint8_t e = byte == 0 ? 0xf6 : byte == 31 ? 0x3f : 0xff;
		set = (e >> (bit % 8)) & 1;
		if (set)
			fe_mul(acc, acc, uv);
	}
	fe_canon(acc);
	/* Euler: 0 when uv = 0 (x = 0), 1 for a square, p - 1 for a non-square */
	bool minus_one = acc[0] == 0x7ffffffffffecull && acc[1] == MASK51 && acc[2] == MASK51 &&
			 acc[3] == MASK51 && acc[4] == MASK51;
	return !minus_one;
}

/* Reducing k as a 512-bit number leaves it unchanged exactly when k < l. */
bool sol_scalar_canonical(const uint8_t k[32])
{
	uint8_t wide[64] = { 0 }, reduced[32];
	memcpy(wide, k, 32);
	crypto_core_ed25519_scalar_reduce(reduced, wide);
	return memcmp(reduced, k, 32) == 0;
}

const uint8_t sol_edwards_identity[32] = { 1 };
const uint8_t sol_ristretto_identity[32] = { 0 };

int sol_edwards_add(uint8_t r[32], const uint8_t p[32], const uint8_t q[32])
{
	return crypto_core_ed25519_add(r, p, q);
}

int sol_edwards_sub(uint8_t r[32], const uint8_t p[32], const uint8_t q[32])
{
	return crypto_core_ed25519_sub(r, p, q);
}

/* n P for n <= 8, by repeated addition (P is a point; r is not p). */
static void edwards_mul_small(uint8_t r[32], unsigned n, const uint8_t p[32])
{
	memcpy(r, sol_edwards_identity, 32);
	while (n--)
		crypto_core_ed25519_add(r, r, p);
}

/* Any point is P = Q + T with Q in the prime-order subgroup and T of order dividing 8:
 * 8 P = 8 Q, so Q = (8^-1 mod l)(8 P) and T = P - Q, and k P = k Q + (k mod 8) T. 8 P as
 * libsodium's addition encodes it is canonical; when it is the identity, P is T alone.
 * libsodium also fails a product that is the identity (k = 0). */
int sol_edwards_mul(uint8_t r[32], const uint8_t k[32], const uint8_t p[32])
{
	static const uint8_t eight[32] = { 8 };
	uint8_t p8[32], inv8[32], q[32], t[32], kq[32];
	if (!sol_on_curve(p))
		return -1;
	if (crypto_scalarmult_ed25519_noclamp(r, k, p) == 0)
		return 0;
	edwards_mul_small(p8, 8, p);
	if (memcmp(p8, sol_edwards_identity, 32) == 0) {
		edwards_mul_small(r, k[0] % 8, p);
		return 0;
	}
	crypto_core_ed25519_scalar_invert(inv8, eight);
	if (crypto_scalarmult_ed25519_noclamp(q, inv8, p8) || crypto_core_ed25519_sub(t, p, q))
		return -1;
	if (sodium_is_zero(k, 32))
		memcpy(kq, sol_edwards_identity, 32);
	else if (crypto_scalarmult_ed25519_noclamp(kq, k, q))
		return -1;
	edwards_mul_small(r, k[0] % 8, t);
	return crypto_core_ed25519_add(r, kq, r);
}

bool sol_ristretto_valid(const uint8_t p[32])
{
	return !(p[31] & 0x80) && crypto_core_ristretto255_is_valid_point(p) == 1;
}

int sol_ristretto_add(uint8_t r[32], const uint8_t p[32], const uint8_t q[32])
{
	return sol_ristretto_valid(p) && sol_ristretto_valid(q) ? crypto_core_ristretto255_add(r, p, q) : -1;
}

int sol_ristretto_sub(uint8_t r[32], const uint8_t p[32], const uint8_t q[32])
{
	return sol_ristretto_valid(p) && sol_ristretto_valid(q) ? crypto_core_ristretto255_sub(r, p, q) : -1;
}

/* libsodium reports an identity product as a failure, having written its encoding (all
 * zeroes); for a valid point that is the answer. */
int sol_ristretto_mul(uint8_t r[32], const uint8_t k[32], const uint8_t p[32])
{
	if (!sol_ristretto_valid(p))
		return -1;
	if (crypto_scalarmult_ristretto255(r, k, p) && !sodium_is_zero(r, 32))
		return -1;
	return 0;
}
