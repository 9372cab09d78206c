/*
 * Type layouts on hostile DWARF: a struct whose anonymous member is the struct itself and
 * typedefs that name each other end in an answer or an error, not in a loop; a member
 * path through them finds nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dwarf/dwarf_consts.h"
#include "dwarf/types.h"

/* 1 unit; 2 struct (name, byte_size); 3 named member; 4 typedef; 5 anonymous member. */
static const uint8_t abbrev[] = {
	1, DW_TAG_compile_unit, 1, DW_AT_name, DW_FORM_string, 0, 0,
	2, DW_TAG_structure_type, 1, DW_AT_name, DW_FORM_string, DW_AT_byte_size, DW_FORM_data1, 0, 0,
	3, DW_TAG_member, 0, DW_AT_name, DW_FORM_string, DW_AT_type, DW_FORM_ref4,
	DW_AT_data_member_location, DW_FORM_data1, 0, 0,
	4, DW_TAG_typedef, 0, DW_AT_name, DW_FORM_string, DW_AT_type, DW_FORM_ref4, 0, 0,
	5, DW_TAG_member, 0, DW_AT_type, DW_FORM_ref4, DW_AT_data_member_location, DW_FORM_data1, 0, 0,
	0,
};

/* The unit DIE at 11; struct s at 14 with, at 18, an anonymous member of type s at
 * offset 4 and, at 24, a member y of type s at offset 2; typedef a (at 33) names b, and
 * b (at 40) names a; struct w at 47 has eight anonymous members of type w. */
#define W_MEMBER 5, 47, 0, 0, 0, 0
static const uint8_t info[] = {
	101 - 4, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8,
	1, 'c', 0,
	2, 's', 0, 8,
	5, 14, 0, 0, 0, 4,
	3, 'y', 0, 14, 0, 0, 0, 2,
	0,
	4, 'a', 0, 40, 0, 0, 0,
	4, 'b', 0, 33, 0, 0, 0,
	2, 'w', 0, 8,
	W_MEMBER, W_MEMBER, W_MEMBER, W_MEMBER, W_MEMBER, W_MEMBER, W_MEMBER, W_MEMBER,
	0,
	0,
};

static struct dwarf *open_info(void)
{
	static struct elf_file elf = { .path = "test" };
	struct dwarf_sect i = { info, sizeof(info) }, a = { abbrev, sizeof(abbrev) }, none = { 0 };
	struct dwarf *d;
	assert_int_equal(dwarf_open_sections(&elf, &i, &a, &none, &none, &d), 0);
	return d;
}

static void types_self_containing_anonymous_member_ends(void **state)
{
	(void)state;
	struct dwarf *d = open_info();
	struct dwarf_types *t;
	assert_int_equal(dwarf_types_open(d, &t), 0);
	uint64_t s;
	assert_int_equal(dwarf_type_find(t, "struct s", &s), 0);
	assert_int_equal(s, 14);
	struct dwarf_member m;
	assert_int_equal(dwarf_type_member(t, s, "no_such", &m), -ENOENT);
	/* y is met through every level of the anonymous member before its own: the search
	 * stops at a fixed depth, and finds it there. */
	assert_int_equal(dwarf_type_member(t, s, "y", &m), 0);
	assert_int_equal(m.size, 8);
	assert_int_equal(dwarf_type_member(t, s, "y.y.y.y.y.y.y.y.y.y.y.y.y.y.y", &m), 0);
	assert_int_equal(dwarf_type_member(t, s, "y.y.y.y.y.y.y.y.y.y.y.y.y.y.y.y.y", &m), -ENOENT);
	uint64_t size;
	assert_int_equal(dwarf_type_size(t, s, &size), 0);
	assert_int_equal(size, 8);
	dwarf_types_close(t);
	dwarf_close(d);
}

/* Eight anonymous members a level, eight levels: 8^8 paths, cut by the lookup's budget. */
static void types_wide_anonymous_nesting_is_cut(void **state)
{
	(void)state;
	struct dwarf *d = open_info();
	struct dwarf_types *t;
	assert_int_equal(dwarf_types_open(d, &t), 0);
	uint64_t w;
	assert_int_equal(dwarf_type_find(t, "struct w", &w), 0);
	assert_int_equal(w, 47);
	struct dwarf_member m;
	assert_int_equal(dwarf_type_member(t, w, "no_such", &m), -EINVAL);
	dwarf_types_close(t);
	dwarf_close(d);
}

static void types_typedef_cycle_is_an_error(void **state)
{
	(void)state;
	struct dwarf *d = open_info();
	struct dwarf_types *t;
	assert_int_equal(dwarf_types_open(d, &t), 0);
	uint64_t a, size, out;
	uint16_t tag;
	assert_int_equal(dwarf_type_find(t, "a", &a), 0);
	assert_int_equal(a, 33);
	assert_int_equal(dwarf_type_size(t, a, &size), -EINVAL);
	assert_int_equal(dwarf_type_strip(t, a, &out, &tag), -EINVAL);
	struct dwarf_member m;
	assert_int_equal(dwarf_type_member(t, a, "y", &m), -EINVAL);
	uint64_t s;
	assert_int_equal(dwarf_type_find(t, "struct s", &s), 0);
	assert_int_equal(dwarf_type_member(t, s, "y.z", &m), -ENOENT);
	assert_int_equal(dwarf_type_find(t, "struct a", &s), -ENOENT);
	assert_int_equal(dwarf_type_find(t, "s", &s), -ENOENT);
	dwarf_types_close(t);
	dwarf_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(types_self_containing_anonymous_member_ends),
		cmocka_unit_test(types_typedef_cycle_is_an_error),
		cmocka_unit_test(types_wide_anonymous_nesting_is_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
