/*
 * Solana's "is this address on the ed25519 curve" test, which program-derived addresses
 * must fail: the 32 bytes decompress as an Edwards point iff (y^2 - 1) / (d y^2 + 1) is a
 * square mod p = 2^255 - 19 (y is the low 255 bits, not reduced: curve25519-dalek's
 * CompressedEdwardsY::decompress, which checks neither canonical encoding nor subgroup, so
 * libsodium's stricter point validation cannot stand in for it). Computed with Euler's
 * criterion in radix-2^51 arithmetic.
 */
#include "solana/curve25519.h"

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
