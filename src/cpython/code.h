/*
 * What a CPython 3.8-3.13 code object says, decoded from its raw bytes as another process
 * holds them: the line of an instruction from its line table (3.11-3.13: co_linetable, the
 * location table of CPython's Objects/locations.md; 3.10: co_linetable, address ranges;
 * 3.8 and 3.9: co_lnotab, address and line increments), the text of a str (PEP 393 compact strings) and the
 * contents of a bytes object. Everything here takes untrusted bytes: reads are bounded by
 * the lengths given, a malformed table or object is an error, never a crash or a loop.
 */
#ifndef TALLY_CPYTHON_CODE_H
#define TALLY_CPYTHON_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/layout.h"

/* One bytecode code unit (_Py_CODEUNIT) is 2 bytes: lasti counts these. */
#define CPY_CODE_UNIT 2

/* The line an instruction has no line of (the table says so: an artificial instruction). */
#define CPY_NO_LINE (-1)

/* The line of the instruction at code-unit index lasti, from a 3.11 location table (3.12
 * and 3.13 keep its format: tests/cpython checks all three) of len bytes and the code
 * object's co_firstlineno: 0 and *line (CPY_NO_LINE when the table gives the instruction
 * no line), -ENOENT when the table ends before lasti (or lasti < 0),
 * -EINVAL when the table is malformed before reaching it. Linear in the table's length. */
int cpy_linetable_line(const uint8_t *table, size_t len, int32_t firstlineno, int32_t lasti,
		       int32_t *line);

/* The format of a code object's line table (struct cpy_layout.linetable_format, and the
 * PERF_PY_CODE_LINES_* bits of a code record). */
enum cpy_linetable_format {
	CPY_LINES_LOCATIONS = 0, /* 3.11-3.13's location table */
	CPY_LINES_LNOTAB = 1,    /* 3.8 and 3.9's co_lnotab */
	CPY_LINES_310 = 2,       /* 3.10's co_linetable */
};

/* The line of the instruction at code-unit index lasti in a table of the given format, as
 * the interpreter itself (PyCode_Addr2Line) gives it: for 3.11's format as
 * cpy_linetable_line(); for 3.8-3.10's, a frame not started yet (lasti < 0) is at
 * co_firstlineno, as these versions say of it. 0 and *line (CPY_NO_LINE: 3.10's table gives
 * the instruction none), -ENOENT when the table ends before lasti (3.10's; co_lnotab's
 * last line runs to the end of the code), -EINVAL for a malformed table or another
 * format. Linear in the table's length. */
int cpy_lines_line(unsigned format, const uint8_t *table, size_t len, int32_t firstlineno,
		   int32_t lasti, int32_t *line);

/* Where the text of a compact str lies in the object: given its first n bytes at obj (at
 * least l->unicode.ascii_size; compact_size for a non-ASCII one), 0 and the offset of the
 * text from the object's start, its length in bytes and its kind (CPY_UNICODE_*); -EINVAL
 * for a string that is not compact and ready (not what code objects hold) or a kind or
 * length that makes no sense, -ERANGE when n is too short for the header. Tells a reader
 * how much more to read before cpy_unicode_utf8(). */
int cpy_unicode_extent(const struct cpy_layout *l, const uint8_t *obj, size_t n,
		       size_t *text_off, size_t *text_len, unsigned *kind);

/* The text of a compact str, as UTF-8, from its first n bytes at obj: writes at most cap - 1
 * bytes and a NUL to out (cap >= 1), *out_len without the NUL, and *cut when the text did
 * not fit (cut at a character boundary) or n ended before it. 0, or the errors of
 * cpy_unicode_extent(); a code point that is not a scalar value (a lone surrogate) is
 * written as U+FFFD. */
int cpy_unicode_utf8(const struct cpy_layout *l, const uint8_t *obj, size_t n, char *out,
		     size_t cap, size_t *out_len, bool *cut);

/* Where the contents of a bytes object lie: given its first n bytes at obj (at least
 * l->object.bytes_sval), 0 and the offset and length (ob_size) of its bytes; -ERANGE when
 * n is too short for the header, -EINVAL for a negative size. */
int cpy_bytes_extent(const struct cpy_layout *l, const uint8_t *obj, size_t n,
		     size_t *data_off, size_t *data_len);

#endif
