/*
 * The bounds-checked cursor: reads stop at the end, errors stick, LEB128 edge cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/cursor.h"

static void cursor_read_past_end_returns_zero_and_sticks(void **state)
{
	const uint8_t buf[3] = { 1, 2, 3 };
	struct cur c = cur_make(buf, sizeof(buf), false);
	assert_int_equal(cur_u16(&c), 0x0201);
	assert_int_equal(cur_u32(&c), 0);
	assert_false(cur_ok(&c));
	assert_int_equal(cur_u8(&c), 0); /* the byte is there, but the cursor is already bad */
}

static void cursor_reads_big_endian(void **state)
{
	const uint8_t buf[8] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0 };
	struct cur c = cur_make(buf, sizeof(buf), true);
	assert_int_equal(cur_u64(&c), 0x123456789abcdef0ull);
	assert_true(cur_ok(&c));
}

static void cursor_leb128_matches_dwarf_spec_examples(void **state)
{
	/* Examples from DWARF 5, section 7.6, tables 7.5 and 7.6. */
	const uint8_t u[] = { 2, 127, 0x80, 1, 0x81, 1, 0x82, 1, 0xb9, 0x64 };
	struct cur c = cur_make(u, sizeof(u), false);
	assert_int_equal(cur_uleb(&c), 2);
	assert_int_equal(cur_uleb(&c), 127);
	assert_int_equal(cur_uleb(&c), 128);
	assert_int_equal(cur_uleb(&c), 129);
	assert_int_equal(cur_uleb(&c), 130);
	assert_int_equal(cur_uleb(&c), 12857);
	const uint8_t s[] = { 2, 0x7e, 0xff, 0, 0x81, 0x7f, 0x80, 1, 0x80, 0x7f };
	c = cur_make(s, sizeof(s), false);
	assert_int_equal(cur_sleb(&c), 2);
	assert_int_equal(cur_sleb(&c), -2);
	assert_int_equal(cur_sleb(&c), 127);
	assert_int_equal(cur_sleb(&c), -127);
	assert_int_equal(cur_sleb(&c), 128);
	assert_int_equal(cur_sleb(&c), -128);
	assert_true(cur_ok(&c));
}

static void cursor_unterminated_leb_is_an_error(void **state)
{
	const uint8_t buf[2] = { 0x80, 0x80 };
	struct cur c = cur_make(buf, sizeof(buf), false);
	cur_uleb(&c);
	assert_false(cur_ok(&c));
}

static void cursor_string_without_nul_is_an_error(void **state)
{
	const char buf[3] = { 'a', 'b', 'c' };
	struct cur c = cur_make(buf, sizeof(buf), false);
	assert_null(cur_str(&c));
	assert_false(cur_ok(&c));
}

static void cursor_sub_cannot_exceed_parent(void **state)
{
	const uint8_t buf[4] = { 0 };
	struct cur c = cur_make(buf, sizeof(buf), false);
	struct cur s = cur_sub(&c, 5);
	assert_false(cur_ok(&s));
	assert_false(cur_ok(&c));
	c = cur_make(buf, sizeof(buf), false);
	s = cur_sub(&c, 2);
	cur_u32(&s);
	assert_false(cur_ok(&s));
	assert_true(cur_ok(&c));
	assert_int_equal(cur_left(&c), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cursor_read_past_end_returns_zero_and_sticks),
		cmocka_unit_test(cursor_reads_big_endian),
		cmocka_unit_test(cursor_leb128_matches_dwarf_spec_examples),
		cmocka_unit_test(cursor_unterminated_leb_is_an_error),
		cmocka_unit_test(cursor_string_without_nul_is_an_error),
		cmocka_unit_test(cursor_sub_cannot_exceed_parent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
