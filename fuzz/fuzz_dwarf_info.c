/*
 * libFuzzer target: .debug_info and .debug_abbrev. The input's first two bytes give the
 * abbreviation table's length; it follows, then .debug_info; the whole input also serves
 * as .debug_str. Every unit's DIEs are walked three ways (decoding, skipping, and decoding
 * some attributes, which must agree with decoding all) and their address ranges read.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dwarf/dwarf.h"

static int count_range(uint64_t lo, uint64_t hi, void *ctx)
{
	*(uint64_t *)ctx += hi - lo;
	return 0;
}

/* Decodes the DIE at off again with some attributes only (which ones follows from off):
 * those must come out as dwarf_die_read decoded them, and the next DIE at the same place. */
static void read_some(struct dwarf *d, struct dwarf_unit *u, uint64_t off,
		      const struct dwarf_die *all, uint64_t next, struct dwarf_die *some)
{
	uint64_t want = off * 0x9e3779b97f4a7c15u, some_next;
	if (dwarf_die_read_some(d, u, off, want, some, &some_next))
		abort();
	if (some_next != next || some->abbrev != all->abbrev || some->nvals != all->nvals)
		abort();
	for (uint16_t i = 0; i < some->nvals; i++) {
		const struct dwarf_value *x = &some->vals[i], *y = &all->vals[i];
		if (!(want >> i & 1))
			continue;
		if (x->cls != y->cls || x->u != y->u)
			abort();
		if (x->cls == DWC_STRING && x->str != y->str)
			abort();
		if (x->cls == DWC_BLOCK && (x->block != y->block || x->len != y->len))
			abort();
	}
}

static void walk_unit(struct dwarf *d, struct dwarf_unit *u, struct dwarf_die *die,
		      struct dwarf_die *some)
{
	if (dwarf_unit_abbrevs(d, u))
		return;
	uint64_t off = u->first_die, next, sibling, total = 0;
	const struct dwarf_abbrev *a;
	while (off < u->end && !dwarf_die_skip(d, u, off, &a, &sibling, &next)) {
		if (dwarf_die_read(d, u, off, die, &next))
			break;
		read_some(d, u, off, die, next, some);
		if (die->abbrev)
			dwarf_die_ranges(d, u, die, count_range, &total);
		off = next;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t alen = (size_t)data[0] | (size_t)data[1] << 8;
	if (alen > size - 2)
		alen = size - 2;
	struct elf_file elf = { .path = "fuzz" };
	struct dwarf_sect abbrev = { data + 2, alen }, info = { data + 2 + alen, size - 2 - alen };
	struct dwarf_sect str = { data, size }, line = { 0 };
	struct dwarf *d;
	if (dwarf_open_sections(&elf, &info, &abbrev, &str, &line, &d))
		return 0;
	struct dwarf_die *die = malloc(sizeof(*die)), *some = malloc(sizeof(*some));
	for (size_t i = 0; die && some && i < d->nunits; i++)
		walk_unit(d, &d->units[i], die, some);
	free(die);
	free(some);
	dwarf_close(d);
	return 0;
}
