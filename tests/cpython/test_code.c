/*
 * The 3.11 location table, 3.8-3.9's co_lnotab, 3.10's co_linetable and PEP 393 strings on
 * hand-made bytes: every entry form as Objects/locations.md encodes it (and the byte pairs
 * of the older tables), malformed and truncated tables, strings cut by the buffer or by
 * the bytes read. (The scripts in tests/cpython compare with python3.11 itself.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cpython/code.h"

#define ENTRY(code, units) (0x80 | (code) << 3 | ((units) - 1))

static int32_t line_at(const uint8_t *t, size_t n, int32_t lasti)
{
	int32_t line = -100;
	int err = cpy_linetable_line(t, n, 10, lasti, &line);
	return err ? err : line;
}

static void linetable_every_form_gives_its_line(void **state)
{
	(void)state;
	static const uint8_t t[] = {
		ENTRY(13, 2), 3 << 1,           /* no columns, +3: units 0-1 at 13 */
		ENTRY(15, 1),                   /* no location: unit 2 */
		ENTRY(11, 3), 1, 2,             /* one line, +1: units 3-5 at 14 */
		ENTRY(14, 1), 5 << 1 | 1, 0, 1, 2, /* long form, -5: unit 6 at 9 */
		ENTRY(3, 8), 0x25,              /* short form: units 7-14 stay at 9 */
		ENTRY(13, 1), 0x48, 0x03,       /* +100 in two chunks: unit 15 at 109 */
	};
	const int32_t want[] = { 13, 13, CPY_NO_LINE, 14, 14, 14, 9, 9, 9, 9, 9, 9, 9, 9, 9, 109 };
	for (int32_t i = 0; i < 16; i++)
		assert_int_equal(line_at(t, sizeof(t), i), want[i]);
	assert_int_equal(line_at(t, sizeof(t), 16), -ENOENT);
	assert_int_equal(line_at(t, sizeof(t), INT32_MAX), -ENOENT);
	assert_int_equal(line_at(t, sizeof(t), -1), -ENOENT);
	assert_int_equal(line_at(t, 0, 0), -ENOENT);
}

static int32_t old_line_at(unsigned format, const uint8_t *t, size_t n, int32_t lasti)
{
	int32_t line = -100;
	int err = cpy_lines_line(format, t, n, 10, lasti, &line);
	return err ? err : line;
}

/* co_lnotab: (bytes, lines) increments; a line counts from the address it was added at. */
static void lnotab_increments_give_their_lines(void **state)
{
	(void)state;
	static const uint8_t t[] = {
		4, 1,    /* bytes 0-3 (units 0, 1) at 10, from byte 4 at 11 */
		0, 2,    /* no bytes: 13 from byte 4 too */
		255, 0,  /* a wide range split in two: 13 up to byte 4 + 255 + 1 */
		1, 0xfd, /* -3: 10 from byte 260 (unit 130) */
	};
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, sizeof(t), 0), 10);
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, sizeof(t), 1), 10);
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, sizeof(t), 2), 13);
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, sizeof(t), 129), 13);
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, sizeof(t), 130), 10);
	/* The last line runs on to the end of the code; a frame not started is at the first. */
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, sizeof(t), 100000), 10);
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, sizeof(t), -1), 10);
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, 0, 7), 10);
	assert_int_equal(old_line_at(CPY_LINES_LNOTAB, t, 3, 0), -EINVAL);
	/* A line past INT32_MAX is malformed from there on, even where it comes back. */
	static const uint8_t out_and_back[] = { 2, 100, 2, 0x9c /* -100 */ };
	int32_t line;
	assert_int_equal(cpy_lines_line(CPY_LINES_LNOTAB, out_and_back, 4, INT32_MAX - 50, 0, &line), 0);
	assert_int_equal(line, INT32_MAX - 50);
	assert_int_equal(cpy_lines_line(CPY_LINES_LNOTAB, out_and_back, 4, INT32_MAX - 50, 1, &line),
			 -EINVAL);
	assert_int_equal(cpy_lines_line(CPY_LINES_LNOTAB, out_and_back, 4, INT32_MAX - 50, 2, &line),
			 -EINVAL);
}

/* 3.10's co_linetable: (bytes, line change) ranges, -128 a range of no line. */
static void linetable310_ranges_give_their_lines(void **state)
{
	(void)state;
	static const uint8_t t[] = {
		0, 1,    /* no bytes: the line moves to 11 */
		4, 2,    /* bytes 0-3 (units 0, 1) at 13 */
		2, 0x80, /* byte 4-5 (unit 2): no line */
		2, 0xff, /* bytes 6-7 (unit 3) at 12: the change counts from the last line */
	};
	assert_int_equal(old_line_at(CPY_LINES_310, t, sizeof(t), 0), 13);
	assert_int_equal(old_line_at(CPY_LINES_310, t, sizeof(t), 1), 13);
	assert_int_equal(old_line_at(CPY_LINES_310, t, sizeof(t), 2), CPY_NO_LINE);
	assert_int_equal(old_line_at(CPY_LINES_310, t, sizeof(t), 3), 12);
	assert_int_equal(old_line_at(CPY_LINES_310, t, sizeof(t), 4), -ENOENT);
	assert_int_equal(old_line_at(CPY_LINES_310, t, sizeof(t), -1), 10);
	assert_int_equal(old_line_at(CPY_LINES_310, t, 3, 0), -EINVAL);
	assert_int_equal(old_line_at(7, t, sizeof(t), 0), -EINVAL);
}

static void linetable_malformed_is_an_error(void **state)
{
	(void)state;
	static const uint8_t no_entry_bit[] = { 0x05 };
	static const uint8_t cut_varint[] = { ENTRY(13, 1), 0x48 };
	static const uint8_t cut_columns[] = { ENTRY(10, 1), 1 };
	static const uint8_t varint_too_long[] = { ENTRY(13, 1), 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	static const uint8_t next_entry_in_varint[] = { ENTRY(13, 1), 0x40, ENTRY(15, 1) };
	/* A line past INT32_MAX: +2^31 from 10. */
	static const uint8_t overflow[] = { ENTRY(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x04 };
	assert_int_equal(line_at(no_entry_bit, 1, 0), -EINVAL);
	assert_int_equal(line_at(cut_varint, sizeof(cut_varint), 0), -EINVAL);
	assert_int_equal(line_at(cut_columns, sizeof(cut_columns), 0), -EINVAL);
	assert_int_equal(line_at(varint_too_long, sizeof(varint_too_long), 0), -EINVAL);
	assert_int_equal(line_at(next_entry_in_varint, sizeof(next_entry_in_varint), 0), -EINVAL);
	assert_int_equal(line_at(overflow, sizeof(overflow), 0), -EINVAL);
	/* A good entry before the damage still answers. */
	static const uint8_t good_then_bad[] = { ENTRY(13, 2), 2, 0x05 };
	assert_int_equal(line_at(good_then_bad, sizeof(good_then_bad), 1), 11);
	assert_int_equal(line_at(good_then_bad, sizeof(good_then_bad), 2), -EINVAL);
}

/* CPython 3.11 on x86-64 (gdb's ptype /o of Debian's python3.11). */
static const struct cpy_layout layout = {
	.sz = sizeof(struct cpy_layout),
	.object = { .ob_type = 8, .ob_size = 16, .bytes_sval = 32 },
	.unicode = { .ascii_size = 48, .compact_size = 72, .length = 16,
		     .kind = { 258, 3 }, .compact = { 261, 1 }, .ascii = { 262, 1 },
		     .ready = { 263, 1 }, .utf8_length = 48, .utf8 = 56 },
};

/* A compact str of len characters of kind, ASCII or not, text from text (kind-wide LE). */
static size_t make_str(uint8_t *obj, unsigned kind, bool ascii, const void *text, size_t len)
{
	memset(obj, 0, 256);
	obj[16] = (uint8_t)len;
	obj[32] = (uint8_t)(kind << 2 | 1 << 5 | ascii << 6 | 1 << 7);
	size_t off = ascii ? 48 : 72;
	memcpy(obj + off, text, len * kind);
	return off + (len + 1) * kind;
}

static void unicode_kinds_decode_to_utf8(void **state)
{
	(void)state;
	uint8_t obj[256];
	char out[64];
	size_t len;
	bool cut;
	size_t n = make_str(obj, 1, true, "main", 4);
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), 0);
	assert_string_equal(out, "main");
	assert_false(cut);
	n = make_str(obj, 1, false, "caf\xe9", 4);
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), 0);
	assert_string_equal(out, "caf\xc3\xa9");
	const uint16_t bmp[] = { 0x65e5, 0xd800, 0x20ac };
	n = make_str(obj, 2, false, bmp, 3);
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), 0);
	assert_string_equal(out, "\xe6\x97\xa5\xef\xbf\xbd\xe2\x82\xac"); /* lone surrogate: U+FFFD */
	const uint32_t astral[] = { 0x1f40d, 0x110000 };
	n = make_str(obj, 4, false, astral, 2);
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), 0);
	assert_string_equal(out, "\xf0\x9f\x90\x8d\xef\xbf\xbd");
	assert_int_equal(len, 7);
}

static void unicode_cut_at_a_character_boundary(void **state)
{
	(void)state;
	uint8_t obj[256];
	char out[4];
	size_t len, off, text_len;
	unsigned kind;
	bool cut;
	size_t n = make_str(obj, 1, false, "\xe9\xe9\xe9", 3);
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), 0);
	assert_string_equal(out, "\xc3\xa9");
	assert_true(cut);
	/* Fewer bytes read than the text needs: what was read, marked cut. */
	char big[64];
	assert_int_equal(cpy_unicode_utf8(&layout, obj, 72 + 2, big, sizeof(big), &len, &cut), 0);
	assert_string_equal(big, "\xc3\xa9\xc3\xa9");
	assert_true(cut);
	assert_int_equal(cpy_unicode_extent(&layout, obj, 72, &off, &text_len, &kind), 0);
	assert_int_equal(off, 72);
	assert_int_equal(text_len, 3);
	assert_int_equal(kind, 1);
	assert_int_equal(cpy_unicode_extent(&layout, obj, 60, &off, &text_len, &kind), -ERANGE);
}

static void unicode_not_compact_or_bad_kind_is_refused(void **state)
{
	(void)state;
	uint8_t obj[256];
	char out[16];
	size_t len;
	bool cut;
	size_t n = make_str(obj, 1, true, "ab", 2);
	obj[32] &= (uint8_t)~(1 << 5); /* not compact */
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), -EINVAL);
	assert_string_equal(out, "");
	n = make_str(obj, 3, false, "abc", 1);
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), -EINVAL);
	n = make_str(obj, 2, true, "ab", 1); /* ASCII of kind 2 */
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), -EINVAL);
	assert_int_equal(cpy_unicode_utf8(&layout, obj, 40, out, sizeof(out), &len, &cut), -ERANGE);
	obj[16 + 7] = 0x80; /* a negative length */
	assert_int_equal(cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut), -EINVAL);
}

static void bytes_extent_reads_ob_size(void **state)
{
	(void)state;
	uint8_t obj[48] = { 0 };
	size_t off, len;
	obj[16] = 5;
	assert_int_equal(cpy_bytes_extent(&layout, obj, sizeof(obj), &off, &len), 0);
	assert_int_equal(off, 32);
	assert_int_equal(len, 5);
	assert_int_equal(cpy_bytes_extent(&layout, obj, 31, &off, &len), -ERANGE);
	obj[23] = 0xff;
	assert_int_equal(cpy_bytes_extent(&layout, obj, sizeof(obj), &off, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(linetable_every_form_gives_its_line),
		cmocka_unit_test(linetable_malformed_is_an_error),
		cmocka_unit_test(lnotab_increments_give_their_lines),
		cmocka_unit_test(linetable310_ranges_give_their_lines),
		cmocka_unit_test(unicode_kinds_decode_to_utf8),
		cmocka_unit_test(unicode_cut_at_a_character_boundary),
		cmocka_unit_test(unicode_not_compact_or_bad_kind_is_refused),
		cmocka_unit_test(bytes_extent_reads_ob_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
