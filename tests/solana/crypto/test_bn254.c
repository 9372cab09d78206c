/*
 * BN254's arithmetic (solana/crypto/bn254.c) on properties nobody here chose: the
 * generators (EIP-196/197's G1 (1, 2) and G2) are on their curves and G2's has order r;
 * 2 G1 is the published point; the pairing is bilinear (e(aP, bQ) e(-ab P, Q) = 1) and
 * non-degenerate (e(P, Q) != 1), and e(P, Q) e(-P, Q) = 1; compression round-trips, for
 * both roots. Encodings are arkworks' little-endian ones (bn254.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "solana/crypto/bn254.h"

enum { G1 = SOL_BN254_G1_BYTES, G2 = SOL_BN254_G2_BYTES };

/* r, the group order, little-endian */
static const char R_HEX[] = "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001";

static const char *const G2_HEX[4] = {
	"1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed", /* x.c0 */
	"198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2", /* x.c1 */
	"12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa", /* y.c0 */
	"090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b", /* y.c1 */
};

/* 64 hex digits, most significant first, as 32 little-endian bytes */
static void le32(uint8_t out[32], const char *hex)
{
	for (int i = 0; i < 32; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * (31 - i), "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void scalar(uint8_t out[32], uint64_t k)
{
	memset(out, 0, 32);
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(k >> (8 * i));
}

/* r - k for k < r */
static void minus(uint8_t out[32], uint64_t k)
{
	uint8_t r[32];
	le32(r, R_HEX);
	unsigned borrow = 0;
	for (int i = 0; i < 32; i++) {
		unsigned sub = (unsigned)(i < 8 ? (uint8_t)(k >> (8 * i)) : 0) + borrow;
		borrow = r[i] < sub;
		out[i] = (uint8_t)(r[i] - sub);
	}
}

static void g1_gen(uint8_t p[G1])
{
	memset(p, 0, G1);
	p[0] = 1;
	p[32] = 2;
}

static void g2_gen(uint8_t q[G2])
{
	for (int i = 0; i < 4; i++)
		le32(q + 32 * i, G2_HEX[i]);
}

static void g1_times(uint8_t r[G1], const uint8_t k[32])
{
	uint8_t g[G1];
	g1_gen(g);
	assert_int_equal(sol_bn254_g1_mul(r, g, k), 0);
}

static void g2_times(uint8_t r[G2], const uint8_t k[32])
{
	uint8_t g[G2];
	g2_gen(g);
	assert_int_equal(sol_bn254_g2_mul(r, g, k), 0);
}

static void generators_are_on_their_curves(void **state)
{
	uint8_t g[G1], zero1[G1] = { 0 }, r1[G1];
	uint8_t q[G2], zero2[G2] = { 0 }, r2[G2], k[32];
	g1_gen(g);
	assert_int_equal(sol_bn254_g1_add(r1, g, zero1), 0);
	assert_memory_equal(r1, g, sizeof(g));
	g2_gen(q);
	assert_int_equal(sol_bn254_g2_add(r2, zero2, q), 0);
	assert_memory_equal(r2, q, sizeof(q));
	/* r G = infinity in both groups */
	le32(k, R_HEX);
	assert_int_equal(sol_bn254_g1_mul(r1, g, k), 0);
	assert_memory_equal(r1, zero1, sizeof(zero1));
	assert_int_equal(sol_bn254_g2_mul(r2, q, k), 0);
	assert_memory_equal(r2, zero2, sizeof(zero2));
	/* (1, 3) is not on the curve, nor G2 with y.c0 + 1 */
	g[32] = 3;
	assert_int_equal(sol_bn254_g1_add(r1, g, zero1), -1);
	q[64]++;
	assert_int_equal(sol_bn254_g2_add(r2, q, zero2), -1);
	assert_int_equal(sol_bn254_g2_mul(r2, q, k), -1);
}

static void doubling_gives_the_published_point(void **state)
{
	uint8_t g[G1], sum[G1], prod[G1], want[G1];
	uint8_t k[32];
	le32(want, "030644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd3");
	le32(want + 32, "15ed738c0e0a7c92e7845f96b2ae9c0a68a6a449e3538fc7ff3ebf7a5a18a2c4");
	g1_gen(g);
	assert_int_equal(sol_bn254_g1_add(sum, g, g), 0);
	assert_memory_equal(sum, want, sizeof(want));
	scalar(k, 2);
	assert_int_equal(sol_bn254_g1_mul(prod, g, k), 0);
	assert_memory_equal(prod, want, sizeof(want));
}

static bool pairing_of(const uint8_t *g1s[], const uint8_t *g2s[], size_t n)
{
	uint8_t pairs[4 * SOL_BN254_PAIR_BYTES];
	bool one = false;
	for (size_t i = 0; i < n; i++) {
		memcpy(pairs + i * SOL_BN254_PAIR_BYTES, g1s[i], G1);
		memcpy(pairs + i * SOL_BN254_PAIR_BYTES + G1, g2s[i], G2);
	}
	assert_int_equal(sol_bn254_pairing_is_one(pairs, n, &one), 0);
	return one;
}

static void the_pairing_is_bilinear_and_not_degenerate(void **state)
{
	const uint64_t a = 1234567, b = 89101;
	uint8_t k[32], p[G1], q[G2], neg_p[G1];
	uint8_t ap[G1], bq[G2], neg_abp[G1], abp[G1];
	g1_gen(p);
	g2_gen(q);
	minus(k, 1);
	g1_times(neg_p, k);
	scalar(k, a);
	g1_times(ap, k);
	scalar(k, b);
	g2_times(bq, k);
	scalar(k, a * b);
	g1_times(abp, k);
	minus(k, a * b);
	g1_times(neg_abp, k);

	assert_true(pairing_of(NULL, NULL, 0));
	assert_false(pairing_of((const uint8_t *[]){ p }, (const uint8_t *[]){ q }, 1));
	assert_true(pairing_of((const uint8_t *[]){ p, neg_p }, (const uint8_t *[]){ q, q }, 2));
	assert_true(pairing_of((const uint8_t *[]){ ap, neg_abp }, (const uint8_t *[]){ bq, q }, 2));
	assert_false(pairing_of((const uint8_t *[]){ ap, abp }, (const uint8_t *[]){ bq, q }, 2));
	/* e(aP, bQ) e(abP, -Q) = 1 on the G2 side too, and with e(P, Q) e(-P, Q) still one */
	minus(k, 1);
	uint8_t neg_q[G2];
	g2_times(neg_q, k);
	assert_true(pairing_of((const uint8_t *[]){ ap, abp, p, neg_p },
			       (const uint8_t *[]){ bq, neg_q, q, q }, 4));
	assert_false(pairing_of((const uint8_t *[]){ ap, abp, p }, (const uint8_t *[]){ bq, neg_q, q },
				3));
}

static void compression_round_trips(void **state)
{
	for (uint64_t i = 1; i < 6; i++) {
		uint8_t k[32], p[G1], c1[32], d1[G1];
		uint8_t q[G2], c2[64], d2[G2];
		/* i G and -i G: the two roots */
		for (int sign = 0; sign < 2; sign++) {
			if (sign)
				minus(k, i);
			else
				scalar(k, i);
			g1_times(p, k);
			assert_int_equal(sol_bn254_g1_compress(c1, p), 0);
			assert_memory_equal(c1, p, 31);
			assert_int_equal(sol_bn254_g1_decompress(d1, c1), 0);
			assert_memory_equal(d1, p, sizeof(p));
			g2_times(q, k);
			assert_int_equal(sol_bn254_g2_compress(c2, q), 0);
			assert_int_equal(sol_bn254_g2_decompress(d2, c2), 0);
			assert_memory_equal(d2, q, sizeof(q));
		}
	}
	uint8_t zero[G2] = { 0 }, out[G2];
	assert_int_equal(sol_bn254_g2_decompress(out, zero), 0);
	assert_memory_equal(out, zero, sizeof(zero));
	/* x = 4 has no y in Fp (4^3 + 3 = 67 is no square), though it has one in Fp2 */
	uint8_t x[32] = { 4 };
	assert_int_equal(sol_bn254_g1_decompress(out, x), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(generators_are_on_their_curves),
		cmocka_unit_test(doubling_gives_the_published_point),
		cmocka_unit_test(the_pairing_is_bilinear_and_not_degenerate),
		cmocka_unit_test(compression_round_trips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
