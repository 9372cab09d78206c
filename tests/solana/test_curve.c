/*
 * Solana's on-curve test for program-derived addresses. Oracles: libsodium (every point it
 * generates or accepts decompresses; its acceptance is stricter, never looser), the base
 * point and identity encodings, the SDK's program-derived addresses (off the curve), and the
 * fact that about half of all y coordinates have an x.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <sodium.h>

#include "solana/curve25519.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_points_are_on_the_curve),
		cmocka_unit_test(sdk_program_addresses_are_off_the_curve),
		cmocka_unit_test(half_of_random_bytes_decompress_and_libsodium_is_stricter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
