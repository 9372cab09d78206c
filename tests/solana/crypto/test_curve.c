/*
 * Solana's on-curve test for program-derived addresses. Oracles: libsodium (every point it
 * generates or accepts decompresses; its acceptance is stricter, never looser), the base
 * point and identity encodings, the SDK's program-derived addresses (off the curve), and the
 * fact that about half of all y coordinates have an x. The group operations: libsodium's
 * base-point multiplication, and RFC 9496's Ristretto vectors (multiples of the generator,
 * encodings that must be refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <sodium.h>

#include "solana/crypto/curve25519.h"
#include "solana/encoding.h"

static void known_points_are_on_the_curve(void **state)
{
	uint8_t base[32], identity[32] = { 1 };
	memset(base, 0x66, 32);
	base[0] = 0x58;
	assert_true(sol_on_curve(base));
	assert_true(sol_on_curve(identity));
	assert_true(sodium_init() >= 0);
	for (int i = 0; i < 200; i++) {
		uint8_t p[32];
		crypto_core_ed25519_random(p);
		assert_true(sol_on_curve(p));
	}
}

static void sdk_program_addresses_are_off_the_curve(void **state)
{
	static const char *const pdas[] = {
		"BwqrghZA2htAcqq8dzP1WDAhTXYTYWj7CHxF5j7TDBAe",
		"13yWmRpaTR4r5nAktwLqMpRNr28tnVUZw26rTvPSSB19",
		"2fnQrngrQT4SeLcdToJAD96phoEjNL2man2kfRLCASVk",
		"976ymqVnfE32QFe6NfGDctSvVa36LWnvYxhU6G2232YL",
	};
	for (size_t i = 0; i < 4; i++) {
		uint8_t b[32];
		assert_int_equal(sol_base58_decode(pdas[i], b, 32), 0);
		assert_false(sol_on_curve(b));
	}
}

static void half_of_random_bytes_decompress_and_libsodium_is_stricter(void **state)
{
	int on = 0;
	for (int i = 0; i < 4000; i++) {
		uint8_t b[32];
		randombytes_buf(b, sizeof(b));
		bool ours = sol_on_curve(b);
		on += ours;
		if (crypto_core_ed25519_is_valid_point(b))
			assert_true(ours);
	}
	assert_in_range(on, 1800, 2200);
}

static void hex32(const char *h, uint8_t out[32])
{
	for (int i = 0; i < 32; i++) {
		unsigned v;
		assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* k B for random k, and 8 (B + T) = 8 B for T of order 8 (a point libsodium's own
 * multiplication refuses): libsodium's base-point multiplication. */
static void edwards_multiples_agree_with_libsodium(void **state)
{
	uint8_t base[32], t8[32], bt[32], k[32], got[32], want[32], eight[32] = { 8 };
	hex32("5866666666666666666666666666666666666666666666666666666666666666", base);
	hex32("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", t8);
	assert_true(sodium_init() >= 0);
	for (int i = 0; i < 50; i++) {
		crypto_core_ed25519_scalar_random(k);
		assert_true(sol_scalar_canonical(k));
		assert_int_equal(sol_edwards_mul(got, k, base), 0);
		assert_int_equal(crypto_scalarmult_ed25519_base_noclamp(want, k), 0);
		assert_memory_equal(got, want, 32);
	}
	assert_int_equal(sol_edwards_add(bt, base, t8), 0);
	assert_int_equal(sol_edwards_mul(got, eight, bt), 0);
	assert_int_equal(crypto_scalarmult_ed25519_base_noclamp(want, eight), 0);
	assert_memory_equal(got, want, 32);
	assert_int_equal(sol_edwards_mul(got, eight, t8), 0);
	assert_memory_equal(got, sol_edwards_identity, 32);
}

/* RFC 9496 A.1 and A.2 */
static void ristretto_vectors(void **state)
{
	static const char *const bad[] = {
		"00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
		"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"f3ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"0100000000000000000000000000000000000000000000000000000000000000",
		"01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	};
	uint8_t b[32], b2[32], got[32], two[32] = { 2 }, zero[32] = { 0 };
	hex32("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76", b);
	hex32("6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919", b2);
	assert_true(sol_ristretto_valid(sol_ristretto_identity));
	assert_int_equal(sol_ristretto_add(got, b, b), 0);
	assert_memory_equal(got, b2, 32);
	assert_int_equal(sol_ristretto_mul(got, two, b), 0);
	assert_memory_equal(got, b2, 32);
	assert_int_equal(sol_ristretto_mul(got, zero, b), 0);
	assert_memory_equal(got, sol_ristretto_identity, 32);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t p[32];
		hex32(bad[i], p);
		assert_false(sol_ristretto_valid(p));
		assert_int_equal(sol_ristretto_add(got, p, b), -1);
		assert_int_equal(sol_ristretto_mul(got, two, p), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_points_are_on_the_curve),
		cmocka_unit_test(sdk_program_addresses_are_off_the_curve),
		cmocka_unit_test(half_of_random_bytes_decompress_and_libsodium_is_stricter),
		cmocka_unit_test(edwards_multiples_agree_with_libsodium),
		cmocka_unit_test(ristretto_vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
