/*
 * UTF-8 validation against RFC 3629's table of well-formed byte sequences: the boundary
 * of each row, the overlong forms below it, surrogates, and code points past U+10FFFF.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/utf8.h"

static size_t len_of(const char *bytes, uint32_t *cp)
{
	return utf8_decode((const unsigned char *)bytes, strlen(bytes), cp);
}

static void utf8_accepts_each_row_boundary_with_its_code_point(void **state)
{
	static const struct { const char *s; size_t len; uint32_t cp; } ok[] = {
		{ "\x7f", 1, 0x7f },		 { "\xc2\x80", 2, 0x80 },
		{ "\xdf\xbf", 2, 0x7ff },	 { "\xe0\xa0\x80", 3, 0x800 },
		{ "\xed\x9f\xbf", 3, 0xd7ff },	 { "\xee\x80\x80", 3, 0xe000 },
		{ "\xef\xbf\xbf", 3, 0xffff },	 { "\xf0\x90\x80\x80", 4, 0x10000 },
		{ "\xf4\x8f\xbf\xbf", 4, 0x10ffff },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t cp = 0;
		assert_int_equal(len_of(ok[i].s, &cp), ok[i].len);
		assert_int_equal(cp, ok[i].cp);
	}
}

static void utf8_rejects_overlongs_surrogates_and_out_of_range(void **state)
{
	static const char *const bad[] = {
		"\xc0\xaf", "\xc1\xbf", "\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", /* overlong */
		"\xed\xa0\x80", "\xed\xbf\xbf",				    /* surrogates */
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff",		    /* past U+10FFFF */
		"\x80", "\xc2\x41", "\xe2\x82",				    /* stray, broken */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(len_of(bad[i], NULL), 0);
}

static void utf8_never_reads_past_n(void **state)
{
	(void)state;
	assert_int_equal(utf8_decode((const unsigned char *)"\xe2\x82\xac", 2, NULL), 0);
	assert_int_equal(utf8_decode((const unsigned char *)"\xe2\x82\xac", 3, NULL), 3);
}

static void utf8_valid_takes_nul_and_rejects_a_cut_sequence(void **state)
{
	(void)state;
	assert_true(utf8_valid((const unsigned char *)"a\0\xe2\x82\xac", 5));
	assert_true(utf8_valid((const unsigned char *)"", 0));
	assert_false(utf8_valid((const unsigned char *)"ok\xe2\x82", 4));
	assert_false(utf8_valid((const unsigned char *)"\xed\xa0\x80", 3));
}

static void utf8_prefix_counts_characters_and_invalid_bytes(void **state)
{
	size_t chars;
	(void)state;
	assert_int_equal(utf8_prefix("a\xe2\x82\xac" "b", 2, &chars), 4);
	assert_int_equal(chars, 2);
	assert_int_equal(utf8_prefix("\xff\xfe" "c", 10, &chars), 3);
	assert_int_equal(chars, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_accepts_each_row_boundary_with_its_code_point),
		cmocka_unit_test(utf8_rejects_overlongs_surrogates_and_out_of_range),
		cmocka_unit_test(utf8_never_reads_past_n),
		cmocka_unit_test(utf8_valid_takes_nul_and_rejects_a_cut_sequence),
		cmocka_unit_test(utf8_prefix_counts_characters_and_invalid_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
