/*
 * Reading some attributes of a DIE: the ones asked for decode as dwarf_die_read decodes
 * them, the others are left undecoded, and the next DIE is where dwarf_die_read puts it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"

/* Abbreviations: 1, a unit with children and a name; 2, a subprogram with a name, low_pc,
 * high_pc (data4), a frame base (exprloc: its size is in its bytes) and DW_AT_external. */
static const uint8_t abbrev[] = {
	1, DW_TAG_compile_unit, 1, DW_AT_name, DW_FORM_string, 0, 0,
	2, DW_TAG_subprogram, 0, DW_AT_name, DW_FORM_string, DW_AT_low_pc, DW_FORM_addr,
	DW_AT_high_pc, DW_FORM_data4, DW_AT_frame_base, DW_FORM_exprloc, 0x3f /* DW_AT_external */,
	DW_FORM_flag_present, 0, 0,
	0,
};

/* A DWARF 4 unit: the unit DIE at 11, the subprogram at 15, a null entry at 32. */
static const uint8_t info[] = {
	33 - 4, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, /* length, version 4, abbrev offset 0, 8-byte addresses */
	1, 'c', 'u', 0,
	2, 'f', 0, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 1, 0x9c,
	0,
};

static void die_read_some_decodes_only_what_is_asked(void **state)
{
	struct elf_file elf = { .path = "test" };
	struct dwarf_sect none = { 0 }, a = { abbrev, sizeof(abbrev) }, i = { info, sizeof(info) };
	struct dwarf *d;
	assert_int_equal(dwarf_open_sections(&elf, &i, &a, &none, &none, &d), 0);
	assert_int_equal(d->nunits, 1);
	struct dwarf_unit *u = &d->units[0];
	assert_int_equal(dwarf_unit_abbrevs(d, u), 0);
	static struct dwarf_die all, some;
	uint64_t next_all, next_some;
	assert_int_equal(dwarf_die_read(d, u, 15, &all, &next_all), 0);
	assert_int_equal(dwarf_die_read_some(d, u, 15, 1 << 1 | 1 << 2, &some, &next_some), 0);
	assert_int_equal(next_some, next_all);
	assert_int_equal(next_some, 32);
	assert_ptr_equal(some.abbrev, all.abbrev);
	assert_int_equal(some.nvals, 5);
	assert_int_equal(some.vals[1].cls, DWC_ADDR);
	assert_int_equal(some.vals[1].u, 0x1000);
	assert_int_equal(some.vals[2].cls, DWC_CONST);
	assert_int_equal(some.vals[2].u, 0x20);
	assert_int_equal(some.vals[0].cls, DWC_NONE);
	assert_int_equal(some.vals[3].cls, DWC_NONE);
	assert_int_equal(some.vals[4].cls, DWC_NONE);
	assert_int_equal(all.vals[3].cls, DWC_BLOCK);
	assert_int_equal(dwarf_die_read_some(d, u, 32, ~(uint64_t)0, &some, &next_some), 0);
	assert_null(some.abbrev);
	assert_int_equal(next_some, 33);
	assert_true(dwarf_die_read_some(d, u, 33, 0, &some, &next_some) < 0);
	dwarf_close(d);
}

static void die_read_some_reports_a_truncated_die(void **state)
{
	struct elf_file elf = { .path = "test" };
	uint8_t cut[sizeof(info)];
	memcpy(cut, info, sizeof(info));
	cut[0] = 25 - 4; /* the unit ends inside the subprogram's low_pc */
	struct dwarf_sect none = { 0 }, a = { abbrev, sizeof(abbrev) }, i = { cut, 25 };
	struct dwarf *d;
	assert_int_equal(dwarf_open_sections(&elf, &i, &a, &none, &none, &d), 0);
	struct dwarf_unit *u = &d->units[0];
	assert_int_equal(dwarf_unit_abbrevs(d, u), 0);
	static struct dwarf_die die;
	uint64_t next;
	assert_true(dwarf_die_read_some(d, u, 15, 0, &die, &next) < 0);
	assert_true(dwarf_die_read_some(d, u, 15, 1 << 1, &die, &next) < 0);
	dwarf_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(die_read_some_decodes_only_what_is_asked),
		cmocka_unit_test(die_read_some_reports_a_truncated_die),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
