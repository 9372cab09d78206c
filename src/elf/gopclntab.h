/*
 * Go's own function table (.gopclntab): every Go binary keeps it, even built with
 * -ldflags='-s -w' (no .symtab, no DWARF), because the runtime itself reads it for tracebacks.
 * It gives each function's range and name and, per pc, the file and line; the inline trees
 * lie outside it: in .rodata (1.16, 1.17), in go:func.* (found through
 * runtime.firstmoduledata, 1.18 on). Layouts: Go 1.16/1.17 (magic 0xfffffffa), 1.18/1.19
 * (0xfffffff0) and 1.20+ (0xfffffff1); the fields read here are at the same places in the
 * last two (runtime/symtab.go, runtime/runtime2.go of each).
 *
 * Ownership: the table borrows the section's bytes from its ELF file, which must outlive it;
 * names and files point into them.
 */
#ifndef TALLY_ELF_GOPCLNTAB_H
#define TALLY_ELF_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf.h"

struct elf_gopclntab;

struct elf_gofunc {
	uint64_t entry, end; /* [entry, end), ELF virtual addresses */
	const char *name;    /* NULL when the table's name offset is bad */
	size_t func_off;     /* where its _func record lies in the section */
};

/* Opens f's .gopclntab (.data.rel.ro.gopclntab in a PIE; where neither name is left, what
 * the symbols runtime.pclntab and runtime.epclntab bound): 0, -ENOENT (no message) without one, -EINVAL with the message
 * "FILE: .gopclntab at OFF: what" for a table that is not one of the layouts above, or
 * -ENOMEM. */
int elf_gopclntab_open(struct elf_file *f, struct elf_gopclntab **out);
/* The same over bytes in memory (fuzzing, tests); name is for messages. */
int elf_gopclntab_open_mem(const char *name, const uint8_t *data, size_t size,
			   struct elf_gopclntab **out);
void elf_gopclntab_close(struct elf_gopclntab *t);
/* The layout's Go version: 116, 118 or 120. */
unsigned elf_gopclntab_version(const struct elf_gopclntab *t);

/* How many functions, and function i of them (sorted by entry): false when its record runs
 * past the section or its range is empty. */
size_t elf_gopclntab_nfuncs(const struct elf_gopclntab *t);
bool elf_gopclntab_func(const struct elf_gopclntab *t, size_t i, struct elf_gofunc *out);
/* The function holding vaddr, found by binary search. */
bool elf_gopclntab_find(const struct elf_gopclntab *t, uint64_t vaddr, struct elf_gofunc *out);
/* The file and line of vaddr in fn (which holds it): false when the tables say none or are
 * damaged (*file and *line untouched then). */
bool elf_gopclntab_line(const struct elf_gopclntab *t, const struct elf_gofunc *fn,
			uint64_t vaddr, const char **file, uint32_t *line);

/* How far below its entry value (the return address's slot) the stack pointer lies at
 * vaddr in fn, in bytes, from fn's pcsp table: false when the table has none or is
 * damaged. */
bool elf_gopclntab_spdelta(const struct elf_gopclntab *t, const struct elf_gofunc *fn,
			   uint64_t vaddr, int32_t *delta);

/* A frame at a pc: a call inlined there, or the function itself. */
struct elf_goframe {
	const char *name, *file; /* NULL where the tables have none */
	uint32_t line;           /* 0 where they have none */
};
/* The frames at vaddr in fn, innermost first: the calls inlined there (from fn's inline
 * tree, in a file opened by elf_gopclntab_open), then fn itself, each with the
 * file and line of its position, as Go's own traceback gives them. Writes at most max
 * (max >= 1) and returns how many it wrote. */
size_t elf_gopclntab_frames(const struct elf_gopclntab *t, const struct elf_gofunc *fn,
			    uint64_t vaddr, struct elf_goframe *out, size_t max);

#endif
