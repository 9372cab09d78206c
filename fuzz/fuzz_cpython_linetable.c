/*
 * libFuzzer target: CPython 3.8-3.13 code-object contents (cpython/code.c). The input's
 * first four bytes are co_firstlineno, the rest a line table, read in each format: 3.11's
 * location table, 3.8-3.9's co_lnotab and 3.10's co_linetable. The first instruction
 * indexes (up to past the table's end, for a short one) are looked up, and once one has no
 * answer (the table ended, or is malformed before it) no later one may have another;
 * co_lnotab answers every index or none (an odd length), and a frame not started (lasti
 * -1) of the older formats is at co_firstlineno unless the table is malformed. The same bytes are then decoded as a
 * str object (3.11's layout on x86-64) and as a bytes object: the text must come out as
 * valid UTF-8 within its buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "cpython/code.h"

static const struct cpy_layout layout = {
	.sz = sizeof(struct cpy_layout),
	.object = { .ob_type = 8, .ob_size = 16, .bytes_sval = 32 },
	.unicode = { .ascii_size = 48, .compact_size = 72, .length = 16,
		     .kind = { 258, 3 }, .compact = { 261, 1 }, .ascii = { 262, 1 },
		     .ready = { 263, 1 }, .utf8_length = 48, .utf8 = 56 },
};

static void lines(unsigned format, const uint8_t *table, size_t len, int32_t first)
{
	int last = 0;
	/* Each entry covers at most 8 code units (3.8-3.10: 127) and takes at least one byte;
	 * each lookup walks the table, so a few hundred keep a run fast. */
	int32_t end = len < 40 ? (int32_t)(len * 128 + 2) : 322;
	for (int32_t lasti = 0; lasti <= end; lasti++) {
		int32_t line;
		int err = cpy_lines_line(format, table, len, first, lasti == end ? INT32_MAX : lasti,
					 &line);
		if (last && err != last)
			abort();
		if (err && err != -ENOENT && err != -EINVAL)
			abort();
		if (format == CPY_LINES_LNOTAB && err && err != -EINVAL)
			abort();
		last = err;
	}
	int32_t line;
	int err = cpy_lines_line(format, table, len, first, -1, &line);
	if (format != CPY_LINES_LOCATIONS && (len % 2 ? err != 0 && err != -EINVAL : err || line != first))
		abort();
}

static void text(const uint8_t *obj, size_t n)
{
	char out[64];
	size_t len, off;
	bool cut;
	if (!cpy_unicode_utf8(&layout, obj, n, out, sizeof(out), &len, &cut) &&
	    (len >= sizeof(out) || out[len] || !utf8_valid((const unsigned char *)out, len)))
		abort();
	cpy_bytes_extent(&layout, obj, n, &off, &len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	int32_t first;
	memcpy(&first, data, 4);
	lines(CPY_LINES_LOCATIONS, data + 4, size - 4, first);
	lines(CPY_LINES_LNOTAB, data + 4, size - 4, first);
	lines(CPY_LINES_310, data + 4, size - 4, first);
	text(data, size);
	return 0;
}
