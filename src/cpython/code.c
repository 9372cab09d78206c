/*
 * CPython 3.8-3.13 code-object contents from raw bytes (see code.h): the location table of
 * Objects/locations.md, 3.8-3.10's tables of byte pairs, PEP 393 compact strings and bytes objects. The location table is
 * a run of entries, each a first byte with bit 7 set (bits 3-6 a code, bits 0-2 the code
 * units covered minus one) and then bytes with bit 7 clear; only the start line matters
 * here, so column data is stepped over.
 */
#include <errno.h>
#include <string.h>

#include "base/cursor.h"
#include "cpython/code.h"

enum location_code {
	LOC_ONE_LINE0 = 10, /* 10-12: the line moves by code - 10; two column bytes */
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13, /* svarint line delta */
	LOC_LONG = 14,       /* svarint line delta, then end line delta and two columns */
	LOC_NONE = 15,       /* no location: the line stays, the instruction has none */
};

/* A varint of 6-bit chunks, least significant first, bit 6 saying another follows. Lines
 * and columns fit 32 bits; a longer one, or a byte with bit 7 set (the next entry's
 * first byte), is a malformed table. */
static bool read_varint(struct cur *c, uint64_t *value)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 36; shift += 6) {
		uint8_t b = cur_u8(c);
		if (!cur_ok(c) || (b & 0x80))
			return false;
		v |= (uint64_t)(b & 0x3f) << shift;
		if (!(b & 0x40)) {
			*value = v;
			return true;
		}
	}
	return false;
}

static bool read_svarint(struct cur *c, int64_t *value)
{
	uint64_t u;
	if (!read_varint(c, &u))
		return false;
	*value = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

/* Steps over n bytes that must all have bit 7 clear. */
static bool skip_plain(struct cur *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (cur_u8(c) & 0x80)
			return false;
	return cur_ok(c);
}

/* Reads one entry after its first byte: the start line's change and whether it has one. */
static bool read_entry(struct cur *c, unsigned code, int64_t *delta, bool *has_line)
{
	uint64_t ignored;
	*delta = 0;
	*has_line = code != LOC_NONE;
	if (code == LOC_NONE)
		return true;
	if (code == LOC_LONG)
		return read_svarint(c, delta) && read_varint(c, &ignored) &&
		       read_varint(c, &ignored) && read_varint(c, &ignored);
	if (code == LOC_NO_COLUMNS)
		return read_svarint(c, delta);
	if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
		*delta = code - LOC_ONE_LINE0;
		return skip_plain(c, 2);
	}
	return skip_plain(c, 1); /* the short forms 0-9: one column byte */
}

int cpy_linetable_line(const uint8_t *table, size_t len, int32_t firstlineno, int32_t lasti,
		       int32_t *line)
{
	if (lasti < 0)
		return -ENOENT;
	struct cur c = cur_make(table, len, false);
	int64_t cur_line = firstlineno;
	uint64_t unit = 0; /* the first code unit of the entry being read */
	while (!cur_eof(&c)) {
		uint8_t first = cur_u8(&c);
		if (!(first & 0x80))
			return -EINVAL;
		int64_t delta;
		bool has_line;
		if (!read_entry(&c, first >> 3 & 15, &delta, &has_line))
			return -EINVAL;
		cur_line += delta;
		if (cur_line < INT32_MIN || cur_line > INT32_MAX)
			return -EINVAL;
		unit += (first & 7) + 1u;
		if ((uint64_t)lasti < unit) {
			*line = has_line ? (int32_t)cur_line : CPY_NO_LINE;
			return 0;
		}
	}
	return -ENOENT;
}

/* 3.8 and 3.9's co_lnotab: pairs of an unsigned byte (bytecode bytes) and a signed byte
 * (lines) added to a running address and line from 0 and co_firstlineno; the line of an
 * address is the running line once the next address increment would pass it. */
static int lnotab_line(const uint8_t *table, size_t len, int32_t firstlineno, int64_t addr,
		       int32_t *line)
{
	if (len % 2)
		return -EINVAL;
	int64_t at = 0, cur_line = firstlineno;
	for (size_t i = 0; i < len; i += 2) {
		at += table[i];
		if (at > addr)
			break;
		cur_line += (int8_t)table[i + 1];
		/* Malformed from here on, even if later increments came back into range. */
		if (cur_line < INT32_MIN || cur_line > INT32_MAX)
			return -EINVAL;
	}
	*line = (int32_t)cur_line;
	return 0;
}

/* 3.10's co_linetable: pairs of an unsigned byte (the bytes of bytecode a range covers)
 * and a signed byte (the line's change; -128: the range has no line). A range of no bytes
 * only moves the line on to the next range. */
static int table310_line(const uint8_t *table, size_t len, int32_t firstlineno, int64_t addr,
			 int32_t *line)
{
	if (len % 2)
		return -EINVAL;
	int64_t end = 0, cur_line = firstlineno;
	bool has_line = false;
	for (size_t i = 0; i < len; i += 2) {
		int8_t delta = (int8_t)table[i + 1];
		end += table[i];
		has_line = delta != -128;
		if (has_line)
			cur_line += delta;
		if (cur_line < INT32_MIN || cur_line > INT32_MAX)
			return -EINVAL;
		if (addr < end) {
			*line = has_line ? (int32_t)cur_line : CPY_NO_LINE;
			return 0;
		}
	}
	return -ENOENT;
}

int cpy_lines_line(unsigned format, const uint8_t *table, size_t len, int32_t firstlineno,
		   int32_t lasti, int32_t *line)
{
	if (format == CPY_LINES_LOCATIONS)
		return cpy_linetable_line(table, len, firstlineno, lasti, line);
	if (format != CPY_LINES_LNOTAB && format != CPY_LINES_310)
		return -EINVAL;
	if (lasti < 0) {
		*line = firstlineno;
		return 0;
	}
	int64_t addr = (int64_t)lasti * CPY_CODE_UNIT;
	return format == CPY_LINES_LNOTAB ? lnotab_line(table, len, firstlineno, addr, line)
					  : table310_line(table, len, firstlineno, addr, line);
}

/* A little-endian value of size bytes at off of the n bytes at obj, or false. */
static bool read_le(const uint8_t *obj, size_t n, uint32_t off, unsigned size, uint64_t *v)
{
	if (off > n || n - off < size)
		return false;
	struct cur c = cur_make(obj + off, size, false);
	*v = cur_uN(&c, size);
	return cur_ok(&c);
}

/* Longer strings are not names: a cap keeps length * kind from overflowing. */
#define MAX_STR_CHARS ((uint64_t)1 << 40)

int cpy_unicode_extent(const struct cpy_layout *l, const uint8_t *obj, size_t n,
		       size_t *text_off, size_t *text_len, unsigned *kind)
{
	uint32_t k, compact, ascii, ready = 1; /* 3.12 dropped the bit: every str is ready */
	uint64_t length;
	if (n < l->unicode.ascii_size || cpy_bitfield_get(&l->unicode.kind, obj, n, &k) ||
	    cpy_bitfield_get(&l->unicode.compact, obj, n, &compact) ||
	    cpy_bitfield_get(&l->unicode.ascii, obj, n, &ascii) ||
	    (l->unicode.ready.bit_size && cpy_bitfield_get(&l->unicode.ready, obj, n, &ready)) ||
	    !read_le(obj, n, l->unicode.length, 8, &length))
		return -ERANGE;
	if (!compact || !ready || (k != CPY_UNICODE_1BYTE && k != CPY_UNICODE_2BYTE &&
				   k != CPY_UNICODE_4BYTE) ||
	    (ascii && k != CPY_UNICODE_1BYTE) || length >= MAX_STR_CHARS)
		return -EINVAL;
	if (!ascii && n < l->unicode.compact_size)
		return -ERANGE;
	*text_off = ascii ? l->unicode.ascii_size : l->unicode.compact_size;
	*text_len = (size_t)(length * k);
	*kind = k;
	return 0;
}

/* Writes code point cp as UTF-8 at out (4 bytes of room): its length. */
static size_t put_utf8(uint32_t cp, char *out)
{
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

int cpy_unicode_utf8(const struct cpy_layout *l, const uint8_t *obj, size_t n, char *out,
		     size_t cap, size_t *out_len, bool *cut)
{
	size_t off, len, used = 0;
	unsigned kind;
	if (!cap)
		return -EINVAL;
	out[0] = '\0';
	*out_len = 0;
	int err = cpy_unicode_extent(l, obj, n, &off, &len, &kind);
	if (err)
		return err;
	size_t have = off < n ? n - off : 0;
	*cut = have < len;
	if (have > len)
		have = len;
	struct cur c = cur_make(obj + off, have - have % kind, false);
	while (!cur_eof(&c)) {
		char buf[4];
		size_t w = put_utf8((uint32_t)cur_uN(&c, kind), buf);
		if (cap - 1 - used < w) {
			*cut = true;
			break;
		}
		memcpy(out + used, buf, w);
		used += w;
	}
	out[used] = '\0';
	*out_len = used;
	return 0;
}

int cpy_bytes_extent(const struct cpy_layout *l, const uint8_t *obj, size_t n,
		     size_t *data_off, size_t *data_len)
{
	uint64_t size;
	if (n < l->object.bytes_sval || !read_le(obj, n, l->object.ob_size, 8, &size))
		return -ERANGE;
	if ((int64_t)size < 0)
		return -EINVAL;
	*data_off = l->object.bytes_sval;
	*data_len = (size_t)size;
	return 0;
}
