/*
 * Bytes as hexadecimal text (base/hex.h), against snprintf's "%02x": every byte value,
 * a build-id's length, nothing at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "base/hex.h"

static void hex_encode_matches_printf(void **state)
{
	(void)state;
	uint8_t bytes[256];
	char want[2 * 256 + 1], got[2 * 256 + 1];
	for (int i = 0; i < 256; i++) {
		bytes[i] = (uint8_t)(i * 37 + 11);
		snprintf(want + 2 * i, 3, "%02x", bytes[i]);
	}
	assert_string_equal(hex_encode(bytes, 256, got), want);
	want[40] = 0;
	assert_string_equal(hex_encode(bytes, 20, got), want);
	got[0] = 'x';
	assert_string_equal(hex_encode(bytes, 0, got), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hex_encode_matches_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
