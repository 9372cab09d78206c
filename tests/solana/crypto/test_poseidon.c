/*
 * Poseidon on BN254 (src/solana/crypto/poseidon.c). Oracles: the hashes solana-poseidon's
 * own tests publish (which are circomlib's: Poseidon([1]) is 0x29176100...0133), the
 * paper's shape of the constants ((R_F + R_P) * t round constants below the modulus, a
 * Cauchy matrix 1 / (x_i + y_j) with distinct x's), and properties of any permutation
 * (distinct states map to distinct states, deterministically). Every width against LiteSVM:
 * tests/solana/poseidon.test.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gmp.h>

#include "solana/crypto/poseidon.h"

static const char MODULUS_HEX[] =
	"30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001";

static void hex32(const char *hex, uint8_t out[32])
{
	for (size_t i = 0; i < 32; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void reverse32(const uint8_t in[32], uint8_t out[32])
{
	for (size_t i = 0; i < 32; i++)
		out[i] = in[31 - i];
}

static void be_element(uint64_t v, uint8_t out[32])
{
	memset(out, 0, 32);
	for (size_t i = 0; i < 8; i++)
		out[31 - i] = (uint8_t)(v >> (8 * i));
}

/* solana-poseidon's test_poseidon_input_one: n inputs of 1 (big-endian), n = 1, 2, 3, 12 */
static void published_hashes_of_ones(void **state)
{
	static const struct {
		size_t n;
		const char *hash;
	} want[] = {
		{ 1, "29176100eaa962bdc1fe6c654d6a3c130e96a4d1168b33848b897dc502820133" },
		{ 2, "007af346e2d304279e79e0a9f3023f771294a78acb70e73f90afe27cad401e81" },
		{ 3, "02c0066e10a72abd2b33c3b214cb3e81bcb1b6e30961cd23c202b18673bf2543" },
		{ 12, "14390be0baef249bd47c65ddac65c2e52e8513c081c1cd72c98006098e9a8fbe" },
	};
	uint8_t one[32], got[32], expect[32];
	be_element(1, one);
	struct sol_poseidon_input in[SOL_POSEIDON_MAX_INPUTS];
	for (size_t i = 0; i < SOL_POSEIDON_MAX_INPUTS; i++)
		in[i] = (struct sol_poseidon_input){ one, 32 };
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		hex32(want[k].hash, expect);
		assert_int_equal(sol_poseidon_hash(got, in, want[k].n, false), 0);
		assert_memory_equal(got, expect, 32);
	}
}

/* solana-poseidon's tests on [1; 32] and [2; 32]: little-endian is the same hash with every
 * input and the result byte-reversed */
static void published_hashes_both_byte_orders(void **state)
{
	uint8_t ones[32], twos[32], got[32], expect[32], le[32];
	memset(ones, 1, 32);
	memset(twos, 2, 32);
	struct sol_poseidon_input in[2] = { { ones, 32 }, { twos, 32 } };
	hex32("05bface581ee6177cc19c6c56363a68882f11e8407ac639db991e0d27f1b75e6", expect);
	assert_int_equal(sol_poseidon_hash(got, in, 1, false), 0);
	assert_memory_equal(got, expect, 32);
	assert_int_equal(sol_poseidon_hash(got, in, 1, true), 0);
	reverse32(expect, le);
	assert_memory_equal(got, le, 32);
	hex32("0d54e1938f8a8c1c7deb5e0355f26319207b84fe9ca2ce1b26e735c829821990", expect);
	assert_int_equal(sol_poseidon_hash(got, in, 2, false), 0);
	assert_memory_equal(got, expect, 32);
	assert_int_equal(sol_poseidon_hash(got, in, 2, true), 0);
	reverse32(expect, le);
	assert_memory_equal(got, le, 32);
}

static void refuses_what_hashv_refuses(void **state)
{
	uint8_t r[32], r_le[32], one[32], got[32];
	hex32(MODULUS_HEX, r);
	reverse32(r, r_le);
	be_element(1, one);
	struct sol_poseidon_input in[SOL_POSEIDON_MAX_INPUTS + 1];
	for (size_t i = 0; i <= SOL_POSEIDON_MAX_INPUTS; i++)
		in[i] = (struct sol_poseidon_input){ one, 32 };
	memset(got, 0xaa, 32);
	assert_int_equal(sol_poseidon_hash(got, in, 0, false), -EINVAL);
	assert_int_equal(sol_poseidon_hash(got, in, SOL_POSEIDON_MAX_INPUTS + 1, false), -EINVAL);
	in[1].len = 31;
	assert_int_equal(sol_poseidon_hash(got, in, 2, false), -EINVAL);
	in[1].len = 33;
	assert_int_equal(sol_poseidon_hash(got, in, 2, false), -EINVAL);
	in[1] = (struct sol_poseidon_input){ r, 32 };
	assert_int_equal(sol_poseidon_hash(got, in, 2, false), -ERANGE);
	in[1].bytes = r_le;
	assert_int_equal(sol_poseidon_hash(got, in, 2, true), -ERANGE);
	for (size_t i = 0; i < 32; i++)
		assert_int_equal(got[i], 0xaa); /* a refused hash leaves the result alone */
	/* the modulus's big-endian bytes read little-endian are a smaller number */
	in[1].bytes = r;
	assert_int_equal(sol_poseidon_hash(got, in, 2, true), 0);
	uint8_t st[3 * 32] = { 0 };
	memcpy(st + 32, r, 32);
	assert_int_equal(sol_poseidon_permute(st, 3), -ERANGE);
	assert_int_equal(sol_poseidon_permute(st, 1), -EINVAL);
	assert_int_equal(sol_poseidon_permute(st, 14), -EINVAL);
}

static void mpz_from(mpz_t x, const uint8_t be[32])
{
	mpz_import(x, 32, 1, 1, 1, 0, be);
}

/* (R_F + R_P) * t round constants, each below the modulus; a t x t MDS matrix. */
static void constants_count(void **state)
{
	static const unsigned circomlib_rp[] = { 56, 57, 56, 60, 60, 63, 64, 63, 60, 66, 60, 65 };
	uint8_t c[32];
	mpz_t r, x;
	mpz_init_set_str(r, MODULUS_HEX, 16);
	mpz_init(x);
	for (size_t t = 2; t <= 13; t++) {
		size_t n = (SOL_POSEIDON_FULL_ROUNDS + circomlib_rp[t - 2]) * t;
		assert_int_equal(sol_poseidon_partial_rounds(t), circomlib_rp[t - 2]);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(sol_poseidon_round_constant(t, i, c), 0);
			mpz_from(x, c);
			assert_true(mpz_cmp(x, r) < 0);
		}
		assert_int_equal(sol_poseidon_round_constant(t, n, c), -EINVAL);
		assert_int_equal(sol_poseidon_mds(t, t - 1, t - 1, c), 0);
		assert_int_equal(sol_poseidon_mds(t, t, 0, c), -EINVAL);
		assert_int_equal(sol_poseidon_mds(t, 0, t, c), -EINVAL);
	}
	assert_int_equal(sol_poseidon_partial_rounds(1), 0);
	assert_int_equal(sol_poseidon_partial_rounds(14), 0);
	assert_int_equal(sol_poseidon_round_constant(1, 0, c), -EINVAL);
	assert_int_equal(sol_poseidon_round_constant(14, 0, c), -EINVAL);
	mpz_clear(x);
	mpz_clear(r);
}

/* 1 / M[i][j] = x_i + y_j: 1/M[i][j] - 1/M[0][j] = x_i - x_0 is the same for every column,
 * and nonzero for i > 0 (the x's are distinct). */
static void mds_is_a_cauchy_matrix(void **state)
{
	uint8_t c[32];
	mpz_t r, d0, d, inv, inv0;
	mpz_init_set_str(r, MODULUS_HEX, 16);
	mpz_inits(d0, d, inv, inv0, NULL);
	for (size_t t = 2; t <= 13; t++)
		for (size_t i = 1; i < t; i++)
			for (size_t j = 0; j < t; j++) {
				assert_int_equal(sol_poseidon_mds(t, i, j, c), 0);
				mpz_from(inv, c);
				assert_true(mpz_invert(inv, inv, r));
				assert_int_equal(sol_poseidon_mds(t, 0, j, c), 0);
				mpz_from(inv0, c);
				assert_true(mpz_invert(inv0, inv0, r));
				mpz_sub(d, inv, inv0);
				mpz_mod(d, d, r);
				if (j == 0)
					mpz_set(d0, d);
				assert_true(mpz_sgn(d) != 0);
				assert_true(mpz_cmp(d, d0) == 0);
			}
	mpz_clears(d0, d, inv, inv0, NULL);
	mpz_clear(r);
}

static int cmp_states(const void *a, const void *b)
{
	return memcmp(a, b, 3 * 32);
}

/* 256 distinct width-3 states stay distinct, none is fixed, and the same state permutes the
 * same way twice. */
static void permutation_is_injective_and_deterministic(void **state)
{
	enum { N = 256, W = 3 * 32 };
	static uint8_t out[N][W];
	for (size_t k = 0; k < N; k++) {
		uint8_t in[W] = { 0 };
		in[31] = (uint8_t)(k & 15);
		in[63] = (uint8_t)(k >> 4);
		memcpy(out[k], in, W);
		assert_int_equal(sol_poseidon_permute(out[k], 3), 0);
		assert_memory_not_equal(out[k], in, W);
		uint8_t again[W];
		memcpy(again, in, W);
		assert_int_equal(sol_poseidon_permute(again, 3), 0);
		assert_memory_equal(again, out[k], W);
	}
	qsort(out, N, W, cmp_states);
	for (size_t k = 1; k < N; k++)
		assert_true(memcmp(out[k - 1], out[k], W) != 0);
}

/* The hash is the permutation's first element on (0, inputs), at every width. */
static void hash_is_the_permutation_of_zero_then_inputs(void **state)
{
	uint8_t st[13 * 32], got[32], in_bytes[12][32];
	struct sol_poseidon_input in[12];
	for (size_t n = 1; n <= 12; n++) {
		memset(st, 0, sizeof(st));
		for (size_t i = 0; i < n; i++) {
			be_element(1000 * n + i, in_bytes[i]);
			in[i] = (struct sol_poseidon_input){ in_bytes[i], 32 };
			memcpy(st + 32 * (i + 1), in_bytes[i], 32);
		}
		assert_int_equal(sol_poseidon_hash(got, in, n, false), 0);
		assert_int_equal(sol_poseidon_permute(st, n + 1), 0);
		assert_memory_equal(got, st, 32);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(published_hashes_of_ones),
		cmocka_unit_test(published_hashes_both_byte_orders),
		cmocka_unit_test(refuses_what_hashv_refuses),
		cmocka_unit_test(constants_count),
		cmocka_unit_test(mds_is_a_cauchy_matrix),
		cmocka_unit_test(permutation_is_injective_and_deterministic),
		cmocka_unit_test(hash_is_the_permutation_of_zero_then_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
