/*
 * Line tables: paths are joined as LLVM joins them (no normalisation), and a hand-made
 * DWARF 5 program numbers its files from 0 while DWARF 4 numbers them from 1.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(line_paths_join_without_normalising),
		cmocka_unit_test(line_v5_file_index_is_zero_based),
		cmocka_unit_test(line_truncated_program_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
