/*
 * Abbreviation tables decoded whole: every entry's tag, children flag and attributes as
 * written, whether names and forms take one byte or more, with implicit constants, lists
 * longer than the two-bytes-at-a-time path takes in one go, codes out of order (the sparse
 * side table), and sizes worked out for the unit's shape; an empty table decodes to no
 * entries (the fuzz build, clang's UBSan, found arithmetic on its absent array). Each
 * entry finds its own implicit constants, and a run of fixed-size attributes longer than
 * 65,535 bytes is cut where its size would not fit, DIEs still skipped to their ends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

#define LONG_LIST 70 /* attributes in entry 3: more than one fast run holds */
#define TAG_VARIABLE 0x34 /* DW_TAG_variable */

static size_t build_abbrev(uint8_t *a)
{
	size_t n = 0;
	/* 1: the unit, with children: a name (string), a two-byte attribute name (0x2116)
	 * with an implicit constant of -3. */
	uint8_t head[] = { 1, DW_TAG_compile_unit, 1, DW_AT_name, DW_FORM_string,
			   0x96, 0x42, DW_FORM_implicit_const, 0x7d };
	memcpy(a + n, head, sizeof(head));
	n += sizeof(head);
	a[n++] = 0;
	a[n++] = 0;
	/* 7: out of order, so sparse: a variable with data1 and udata. */
	uint8_t sparse[] = { 7, TAG_VARIABLE, 0, DW_AT_name, DW_FORM_data1, 0x0b, DW_FORM_udata,
			     0, 0 };
	memcpy(a + n, sparse, sizeof(sparse));
	n += sizeof(sparse);
	/* 3: a long list of data4 attributes named 2 + i (one byte each, none DW_AT_sibling). */
	a[n++] = 3;
	a[n++] = DW_TAG_subprogram;
	a[n++] = 0;
	for (unsigned i = 0; i < LONG_LIST; i++) {
		a[n++] = (uint8_t)(2 + i);
		a[n++] = DW_FORM_data4;
	}
	a[n++] = 0;
	a[n++] = 0;
	a[n++] = 0; /* end of the table */
	a[n++] = 0; /* a second table, empty, at this offset */
	return n;
}

/* A DWARF 4 unit using the table at abbrev_off, its root DIE a null entry. */
static void make_unit(uint8_t info[12], uint8_t abbrev_off)
{
	const uint8_t u[12] = { 8, 0, 0, 0, 4, 0, abbrev_off, 0, 0, 0, 8, 0 };
	memcpy(info, u, 12);
}

/* A reader of the tables built here and one unit using the first (or the empty one after
 * it); the unit's table decoded. */
static struct dwarf_unit *open_unit(bool empty_table, struct dwarf **d)
{
	static uint8_t abbrev[512], info[12];
	size_t size = build_abbrev(abbrev);
	make_unit(info, empty_table ? (uint8_t)(size - 1) : 0);
	static struct elf_file elf = { .path = "test" };
	struct dwarf_sect none = { 0 }, a = { abbrev, size }, i = { info, sizeof(info) };
	assert_int_equal(dwarf_open_sections(&elf, &i, &a, &none, &none, d), 0);
	struct dwarf_unit *u = &(*d)->units[0];
	assert_int_equal(dwarf_unit_abbrevs(*d, u), 0);
	return u;
}

static void abbrev_tables_decode_every_entry(void **state)
{
	(void)state;
	struct dwarf *d;
	struct dwarf_unit *u = open_unit(false, &d);
	const struct dwarf_abbrevs *t = u->abbrevs;
	assert_int_equal(t->n_dense, 1);
	assert_int_equal(t->n_sparse, 2);

	const struct dwarf_abbrev *cu = dwarf_abbrev_find(t, 1);
	assert_non_null(cu);
	assert_int_equal(cu->tag, DW_TAG_compile_unit);
	assert_true(cu->has_children);
	assert_int_equal(cu->nattrs, 2);
	assert_int_equal(cu->attrs[0].name, DW_AT_name);
	assert_int_equal(cu->attrs[0].form, DW_FORM_string);
	assert_int_equal(cu->attrs[0].size, -1);
	assert_int_equal(cu->attrs[1].name, 0x2116);
	assert_int_equal(cu->attrs[1].form, DW_FORM_implicit_const);
	assert_int_equal(dwarf_attr_const(cu, &cu->attrs[1]), -3);
	assert_int_equal(cu->attrs[1].size, 0);

	const struct dwarf_abbrev *sub = dwarf_abbrev_find(t, 3);
	assert_non_null(sub);
	assert_int_equal(sub->nattrs, LONG_LIST);
	for (unsigned k = 0; k < LONG_LIST; k++) {
		assert_int_equal(sub->attrs[k].name, 2 + k);
		assert_int_equal(sub->attrs[k].form, DW_FORM_data4);
		assert_int_equal(sub->attrs[k].size, 4);
	}
	assert_true(sub->fixed);
	assert_int_equal(sub->fixed_size, 4 * LONG_LIST);
	assert_int_equal(sub->attrs[0].run, LONG_LIST);

	const struct dwarf_abbrev *var = dwarf_abbrev_find(t, 7);
	assert_non_null(var);
	assert_int_equal(var->tag, TAG_VARIABLE);
	assert_false(var->has_children);
	assert_int_equal(var->nattrs, 2);
	assert_int_equal(var->attrs[0].size, 1);
	assert_int_equal(var->attrs[1].form, DW_FORM_udata);
	assert_false(var->fixed);
	assert_null(dwarf_abbrev_find(t, 2));
	dwarf_close(d);
}

static void an_empty_abbrev_table_has_no_entries(void **state)
{
	(void)state;
	struct dwarf *d;
	struct dwarf_unit *u = open_unit(true, &d);
	assert_int_equal(u->abbrevs->n_dense, 0);
	assert_int_equal(u->abbrevs->n_sparse, 0);
	assert_null(dwarf_abbrev_find(u->abbrevs, 1));
	dwarf_close(d);
}

#define WIDE 4200 /* data16 attributes of entry 2: 67,200 bytes, more than a run holds */

/* Appends v as signed LEB128. */
static size_t put_sleb(uint8_t *p, int64_t v)
{
	size_t n = 0;
	for (;;) {
		uint8_t b = v & 0x7f;
		v >>= 7;
		bool last = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
		p[n++] = last ? b : b | 0x80;
		if (last)
			return n;
	}
}

static void implicit_constants_and_long_runs(void **state)
{
	(void)state;
	static uint8_t abbrev[2 * WIDE + 64], info[16 * WIDE + 64];
	size_t n = 0;
	/* 1: a subprogram with two implicit constants around a data1. */
	uint8_t one[] = { 1, DW_TAG_subprogram, 0, 0x3a, DW_FORM_implicit_const };
	memcpy(abbrev + n, one, sizeof(one));
	n += sizeof(one);
	n += put_sleb(abbrev + n, 5);
	abbrev[n++] = 0x3b;
	abbrev[n++] = DW_FORM_data1;
	abbrev[n++] = 0x39;
	abbrev[n++] = DW_FORM_implicit_const;
	n += put_sleb(abbrev + n, -70000);
	abbrev[n++] = 0;
	abbrev[n++] = 0;
	/* 2: a variable with an implicit constant of its own, WIDE data16, then a string. */
	uint8_t two[] = { 2, TAG_VARIABLE, 0, 0x3a, DW_FORM_implicit_const, 9 };
	memcpy(abbrev + n, two, sizeof(two));
	n += sizeof(two);
	for (unsigned i = 0; i < WIDE; i++) {
		abbrev[n++] = 0x40;
		abbrev[n++] = DW_FORM_data16;
	}
	abbrev[n++] = DW_AT_name;
	abbrev[n++] = DW_FORM_string;
	abbrev[n++] = 0;
	abbrev[n++] = 0;
	abbrev[n++] = 0;
	/* A DWARF 4 unit: entry 2's DIE, entry 1's, a null entry. */
	size_t m = 11;
	info[m++] = 2;
	memset(info + m, 0xee, 16 * WIDE);
	m += 16 * WIDE;
	memcpy(info + m, "ab", 3);
	m += 3;
	size_t second = m;
	info[m++] = 1;
	info[m++] = 0x11;
	info[m++] = 0;
	uint32_t len = (uint32_t)(m - 4);
	memcpy(info, &len, 4); /* the host is little-endian, as the unit says */
	const uint8_t head[] = { 4, 0, 0, 0, 0, 0, 8 };
	memcpy(info + 4, head, sizeof(head));

	static struct elf_file elf = { .path = "test" };
	struct dwarf_sect none = { 0 }, a = { abbrev, n }, i = { info, m };
	struct dwarf *d;
	assert_int_equal(dwarf_open_sections(&elf, &i, &a, &none, &none, &d), 0);
	struct dwarf_unit *u = &d->units[0];
	assert_int_equal(dwarf_unit_abbrevs(d, u), 0);
	const struct dwarf_abbrev *sub = dwarf_abbrev_find(u->abbrevs, 1);
	const struct dwarf_abbrev *var = dwarf_abbrev_find(u->abbrevs, 2);
	assert_non_null(sub);
	assert_non_null(var);
	assert_int_equal(dwarf_attr_const(sub, &sub->attrs[0]), 5);
	assert_int_equal(dwarf_attr_const(sub, &sub->attrs[1]), 0); /* data1: no constant */
	assert_int_equal(dwarf_attr_const(sub, &sub->attrs[2]), -70000);
	assert_int_equal(dwarf_attr_const(var, &var->attrs[0]), 9);
	/* The run from the back holds 4,095 data16 (65,520 bytes); the one before it, the
	 * implicit constant and the other 105. */
	assert_int_equal(var->attrs[0].run, 1 + WIDE - 4095);
	assert_int_equal(var->attrs[0].run_size, 16 * (WIDE - 4095));
	assert_int_equal(var->attrs[1 + WIDE - 4095].run, 4095);
	assert_int_equal(var->attrs[1 + WIDE - 4095].run_size, 16 * 4095);

	const struct dwarf_abbrev *got;
	uint64_t sibling, next;
	assert_int_equal(dwarf_die_skip(d, u, 11, &got, &sibling, &next), 0);
	assert_ptr_equal(got, var);
	assert_int_equal(next, second);
	struct dwarf_die *die = malloc(sizeof(*die));
	assert_non_null(die);
	assert_int_equal(dwarf_die_read(d, u, 11, die, &next), 0);
	assert_int_equal(next, second);
	assert_int_equal(dwarf_die_read(d, u, second, die, &next), 0);
	const struct dwarf_value *v = dwarf_die_attr(die, 0x39);
	assert_non_null(v);
	assert_int_equal(v->s, -70000);
	assert_int_equal(dwarf_die_attr(die, 0x3b)->u, 0x11);
	free(die);
	dwarf_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abbrev_tables_decode_every_entry),
		cmocka_unit_test(an_empty_abbrev_table_has_no_entries),
		cmocka_unit_test(implicit_constants_and_long_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
