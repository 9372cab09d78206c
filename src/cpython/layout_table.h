/*
 * Tally's own table of CPython's layouts, for interpreters without debug information (see
 * layout_table.c for where the offsets come from and how a build is checked against them).
 */
#ifndef TALLY_CPYTHON_LAYOUT_TABLE_H
#define TALLY_CPYTHON_LAYOUT_TABLE_H

#include <stdint.h>

#include "cpython/layout.h"
#include "elf/elf.h"

/* Fills l's offsets for the minor version of version_hex and sets l->source: 0, or -ENOENT
 * when the table has no entry for it. The addresses in l are left alone. */
int cpy_layout_table(uint32_t version_hex, struct cpy_layout *l);

/* Link-time addresses of the interpreter's static type objects (0: not found). */
struct cpy_type_addrs {
	uint64_t code, bytes, unicode;
};

/* Whether the interpreter in elf is built as the layout l says, by the object sizes its
 * type objects hold: 0, or -ENOENT with the message set to what disagrees. */
int cpy_layout_table_fits(struct elf_file *elf, const struct cpy_type_addrs *types,
			  const struct cpy_layout *l);

#endif
