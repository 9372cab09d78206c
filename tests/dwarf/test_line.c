/*
 * Line tables: paths are joined as LLVM joins them (no normalisation), and a hand-made
 * DWARF 5 program numbers its files from 0 while DWARF 4 numbers them from 1. Hand-made
 * DWARF 4 programs pin what the compact row table keeps: the last of rows at one address,
 * every row of a sequence out of address order, discriminators, and LLVM's 16-bit file
 * register.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dwarf/dwarf.h"

static void line_paths_join_without_normalising(void **state)
{
	struct arena a = { 0 };
	assert_string_equal(dwarf_path_join(&a, "/build", "./string/../locale", "weight.h"),
			    "/build/./string/../locale/weight.h");
	assert_string_equal(dwarf_path_join(&a, "/src", ".", "helpers.h"), "/src/./helpers.h");
	assert_string_equal(dwarf_path_join(&a, "/build", "/usr/include", "stdio.h"),
			    "/usr/include/stdio.h");
	assert_string_equal(dwarf_path_join(&a, "/build/", "", "a.c"), "/build/a.c");
	assert_string_equal(dwarf_path_join(&a, "/build", "inc", "/abs/a.h"), "/abs/a.h");
	assert_string_equal(dwarf_path_join(&a, NULL, "", "a.c"), "a.c");
	arena_free(&a);
}

/* A DWARF 5 line program: two directories, two files (file 0 is the primary source, as
 * DWARF 5 requires), and rows 0x1000 (file 0, line 3) and 0x1010 (file 1, line 7). */
static const uint8_t v5_program[] = {
	0, 0, 0, 0,           /* unit length, patched below */
	5, 0,                 /* version */
	8, 0,                 /* address size, segment selector size */
	0, 0, 0, 0,           /* header length, patched below */
	1, 1, 1, (uint8_t)-5, 14, 13, /* min inst, max ops, default_is_stmt, line base/range, opcode base */
	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, /* standard opcode lengths */
	1, 1, 0x08,           /* directory format: path as a string */
	2, '/', 'd', 0, 's', 'u', 'b', 0,
	2, 1, 0x08, 2, 0x0b,  /* file format: path string, directory index data1 */
	2, 'a', '.', 'c', 0, 0, 'b', '.', 'h', 0, 1,
	/* program */
	0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0, /* set_address 0x1000 */
	3, 2,                 /* advance_line +2 -> 3 */
	4, 0,                 /* set_file 0 */
	1,                    /* copy */
	2, 0x10,              /* advance_pc 16 */
	3, 4,                 /* advance_line +4 -> 7 */
	4, 1,                 /* set_file 1 */
	1,                    /* copy */
	2, 0x10,              /* advance_pc 16 */
	0, 1, 1,              /* end_sequence */
};

static void line_v5_file_index_is_zero_based(void **state)
{
	uint8_t prog[sizeof(v5_program)];
	memcpy(prog, v5_program, sizeof(prog));
	uint32_t unit_len = sizeof(prog) - 4, header_len = 0;
	for (size_t i = 12; i + 2 < sizeof(prog); i++) {
		if (prog[i] == 0 && prog[i + 1] == 9 && prog[i + 2] == 2) {
			header_len = (uint32_t)(i - 12);
			break;
		}
	}
	memcpy(prog, &unit_len, 4);
	memcpy(prog + 8, &header_len, 4);
	struct elf_file elf = { .path = "test" };
	struct dwarf_sect none = { 0 }, line = { prog, sizeof(prog) };
	struct dwarf *d;
	assert_int_equal(dwarf_open_sections(&elf, &none, &none, &none, &line, &d), 0);
	struct dwarf_unit u = { .version = 5, .addr_size = 8, .offset_size = 4, .comp_dir = "/c" };
	struct dwarf_line_table t;
	assert_int_equal(dwarf_line_read(d, &u, 0, NULL, &t), 0);
	const struct dwarf_line_row *r = dwarf_line_lookup(&t, 0x1004);
	assert_non_null(r);
	assert_int_equal(r->line, 3);
	assert_string_equal(dwarf_line_file(&t, r->file), "/d/a.c");
	r = dwarf_line_lookup(&t, 0x101f);
	assert_non_null(r);
	assert_int_equal(r->line, 7);
	assert_string_equal(dwarf_line_file(&t, r->file), "/c/sub/b.h");
	assert_null(dwarf_line_lookup(&t, 0x1020));
	assert_null(dwarf_line_lookup(&t, 0xfff));
	dwarf_line_free(&t);
	dwarf_close(d);
}

static void line_truncated_program_is_an_error(void **state)
{
	struct elf_file elf = { .path = "test" };
	struct dwarf_sect none = { 0 }, line = { v5_program, 20 };
	struct dwarf *d;
	assert_int_equal(dwarf_open_sections(&elf, &none, &none, &none, &line, &d), 0);
	struct dwarf_unit u = { .version = 5, .addr_size = 8, .offset_size = 4 };
	struct dwarf_line_table t;
	assert_true(dwarf_line_read(d, &u, 0, NULL, &t) < 0);
	dwarf_close(d);
}

/* A DWARF 4 line table: directory /d, file 1 a.c, then the program given. */
static const uint8_t v4_header[] = {
	0, 0, 0, 0,           /* unit length, patched */
	4, 0,                 /* version */
	0, 0, 0, 0,           /* header length, patched */
	1, 1, 1, (uint8_t)-5, 14, 13, /* min inst, max ops, default_is_stmt, line base/range, opcode base */
	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, /* standard opcode lengths */
	'/', 'd', 0, 0,       /* include directories */
	'a', '.', 'c', 0, 1, 0, 0, 0, /* file names */
};

#define SET_ADDRESS(a) 0, 9, 2, (a) & 0xff, (a) >> 8, 0, 0, 0, 0, 0, 0
#define END_SEQUENCE 0, 1, 1
#define SET_DISCRIMINATOR(n) 0, 2, 4, (n)
#define COPY 1
#define ADVANCE_PC(n) 2, (n)
#define ADVANCE_LINE(n) 3, (n)

struct v4_table {
	uint8_t bytes[2048];
	struct dwarf *d;
	struct dwarf_line_table t;
};

static void read_v4(struct v4_table *v, const uint8_t *prog, size_t len)
{
	size_t n = sizeof(v4_header) + len;
	assert_true(n <= sizeof(v->bytes));
	memcpy(v->bytes, v4_header, sizeof(v4_header));
	memcpy(v->bytes + sizeof(v4_header), prog, len);
	uint32_t unit_len = (uint32_t)(n - 4), header_len = (uint32_t)(sizeof(v4_header) - 10);
	memcpy(v->bytes, &unit_len, 4);
	memcpy(v->bytes + 6, &header_len, 4);
	static struct elf_file elf = { .path = "test" };
	struct dwarf_sect none = { 0 }, line = { v->bytes, n };
	assert_int_equal(dwarf_open_sections(&elf, &none, &none, &none, &line, &v->d), 0);
	struct dwarf_unit u = { .version = 4, .addr_size = 8, .offset_size = 4 };
	assert_int_equal(dwarf_line_read(v->d, &u, 0, NULL, &v->t), 0);
}

static void free_v4(struct v4_table *v)
{
	dwarf_line_free(&v->t);
	dwarf_close(v->d);
}

static uint32_t line_at(const struct dwarf_line_table *t, uint64_t addr)
{
	const struct dwarf_line_row *r = dwarf_line_lookup(t, addr);
	assert_non_null(r);
	return r->line;
}

static void line_rows_at_one_address_keep_the_last(void **state)
{
	static const uint8_t prog[] = {
		SET_ADDRESS(0x1000), COPY, ADVANCE_LINE(1), COPY, /* lines 1 and 2 at 0x1000 */
		ADVANCE_PC(4), ADVANCE_LINE(1), COPY,               /* line 3 at 0x1004 */
		ADVANCE_PC(4), END_SEQUENCE,
	};
	struct v4_table v;
	read_v4(&v, prog, sizeof(prog));
	assert_int_equal(line_at(&v.t, 0x1000), 2);
	assert_int_equal(line_at(&v.t, 0x1003), 2);
	assert_int_equal(line_at(&v.t, 0x1007), 3);
	assert_int_equal(v.t.nrows, 3); /* line 1's row is not kept */
	free_v4(&v);
}

/* A sequence that goes back in address: rows 0x1000 (line 1), 0x1050 (2), 0x1050 (3),
 * 0x1010 (4), end 0x1060. LLVM's binary search over rows 1-3 finds none at or before
 * 0x1020 and answers with row 0; without row 1 it would have answered line 4. */
static void line_sequence_out_of_order_keeps_every_row(void **state)
{
	static const uint8_t prog[] = {
		SET_ADDRESS(0x1000), COPY,
		SET_ADDRESS(0x1050), ADVANCE_LINE(1), COPY, ADVANCE_LINE(1), COPY,
		SET_ADDRESS(0x1010), ADVANCE_LINE(1), COPY,
		SET_ADDRESS(0x1060), END_SEQUENCE,
	};
	struct v4_table v;
	read_v4(&v, prog, sizeof(prog));
	assert_int_equal(v.t.nrows, 5);
	assert_int_equal(line_at(&v.t, 0x1020), 1);
	free_v4(&v);
}

static void line_discriminator_belongs_to_its_row(void **state)
{
	static const uint8_t prog[] = {
		SET_ADDRESS(0x1000), SET_DISCRIMINATOR(3), COPY,         /* 0x1000: 3 */
		ADVANCE_PC(4), COPY,                                     /* 0x1004: 0 */
		ADVANCE_PC(4), SET_DISCRIMINATOR(5), COPY, COPY,         /* 0x1008: 5, then 0 */
		ADVANCE_PC(4), COPY, COPY,                               /* 0x100c: 0 */
		ADVANCE_PC(4), SET_DISCRIMINATOR(7), COPY,               /* 0x1010: 7 */
		ADVANCE_PC(4), END_SEQUENCE,
	};
	struct v4_table v;
	read_v4(&v, prog, sizeof(prog));
	uint64_t addrs[] = { 0x1000, 0x1004, 0x1008, 0x100c, 0x1010 };
	uint32_t want[] = { 3, 0, 0, 0, 7 };
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(dwarf_line_discriminator(&v.t, dwarf_line_lookup(&v.t, addrs[i])),
				 want[i]);
	free_v4(&v);
}

/* 200 rows, every third with a discriminator: rows past the first 64 find theirs too. */
static void line_discriminators_of_many_rows(void **state)
{
	uint8_t prog[1500];
	size_t n = 0;
	const uint8_t start[] = { SET_ADDRESS(0x1000) };
	memcpy(prog, start, sizeof(start));
	n += sizeof(start);
	for (unsigned i = 0; i < 200; i++) {
		if (i % 3 == 0) {
			const uint8_t disc[] = { SET_DISCRIMINATOR(i / 3 + 1) };
			memcpy(prog + n, disc, sizeof(disc));
			n += sizeof(disc);
		}
		const uint8_t row[] = { COPY, ADVANCE_PC(2) };
		memcpy(prog + n, row, sizeof(row));
		n += sizeof(row);
	}
	const uint8_t end[] = { END_SEQUENCE };
	memcpy(prog + n, end, sizeof(end));
	n += sizeof(end);
	struct v4_table v;
	read_v4(&v, prog, n);
	for (unsigned i = 0; i < 200; i++) {
		const struct dwarf_line_row *r = dwarf_line_lookup(&v.t, 0x1000 + 2 * i + 1);
		assert_non_null(r);
		assert_int_equal(dwarf_line_discriminator(&v.t, r), i % 3 ? 0 : i / 3 + 1);
	}
	free_v4(&v);
}

/* Line advances as signed LEB128 of one, two and three bytes. */
static void line_advances_of_several_bytes(void **state)
{
	static const uint8_t prog[] = {
		SET_ADDRESS(0x1000), 3, 0xe4, 0x00, COPY,       /* +100: line 101 */
		ADVANCE_PC(4), 3, 0x9c, 0x7f, COPY,             /* -100: line 1 */
		ADVANCE_PC(4), 3, 0xc0, 0xbb, 0x78, COPY,       /* -123456 wraps: line 4294843841 */
		ADVANCE_PC(4), 3, 0xc0, 0xc4, 0x07, COPY,       /* +123456: line 1 */
		ADVANCE_PC(4), 3, 0x7f, COPY,                   /* -1: line 0 */
		ADVANCE_PC(4), END_SEQUENCE,
	};
	struct v4_table v;
	read_v4(&v, prog, sizeof(prog));
	assert_int_equal(line_at(&v.t, 0x1000), 101);
	assert_int_equal(line_at(&v.t, 0x1004), 1);
	assert_int_equal(line_at(&v.t, 0x1008), 4294843841u);
	assert_int_equal(line_at(&v.t, 0x100c), 1);
	assert_int_equal(line_at(&v.t, 0x1010), 0);
	free_v4(&v);
}

/* LLVM's file register is 16 bits wide: file 0x10001 is file 1. */
static void line_file_register_is_16_bits(void **state)
{
	static const uint8_t prog[] = {
		SET_ADDRESS(0x1000), 4, 0x81, 0x80, 0x04, COPY, ADVANCE_PC(4), END_SEQUENCE,
	};
	struct v4_table v;
	read_v4(&v, prog, sizeof(prog));
	const struct dwarf_line_row *r = dwarf_line_lookup(&v.t, 0x1000);
	assert_non_null(r);
	assert_string_equal(dwarf_line_file(&v.t, r->file), "/d/a.c");
	free_v4(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(line_paths_join_without_normalising),
		cmocka_unit_test(line_v5_file_index_is_zero_based),
		cmocka_unit_test(line_truncated_program_is_an_error),
		cmocka_unit_test(line_rows_at_one_address_keep_the_last),
		cmocka_unit_test(line_sequence_out_of_order_keeps_every_row),
		cmocka_unit_test(line_discriminator_belongs_to_its_row),
		cmocka_unit_test(line_discriminators_of_many_rows),
		cmocka_unit_test(line_advances_of_several_bytes),
		cmocka_unit_test(line_file_register_is_16_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
