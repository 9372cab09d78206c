/*
 * libFuzzer target: .debug_info and .debug_abbrev. The input's first two bytes give the
 * abbreviation table's length; it follows, then .debug_info; the whole input also serves
 * as .debug_str. Every unit's DIEs are walked both ways (decoding and skipping) and their
 * address ranges read.
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

static void walk_unit(struct dwarf *d, struct dwarf_unit *u, struct dwarf_die *die)
{
	if (dwarf_unit_abbrevs(d, u))
		return;
	uint64_t off = u->first_die, next, sibling, total = 0;
	const struct dwarf_abbrev *a;
	while (off < u->end && !dwarf_die_skip(d, u, off, &a, &sibling, &next)) {
		if (dwarf_die_read(d, u, off, die, &next))
			break;
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
	struct dwarf_die *die = malloc(sizeof(*die));
	for (size_t i = 0; die && i < d->nunits; i++)
		walk_unit(d, &d->units[i], die);
	free(die);
	dwarf_close(d);
	return 0;
}
