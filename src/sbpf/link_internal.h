/*
 * Linking relocatable eBPF objects into sBPF programs (internal to src/sbpf): the loader
 * links one object in memory for `tally sbpf run OBJECT.o`, `tally sbpf link` links several
 * and writes them (sbpf/linker.h). See link.c and elf_write.c.
 */
#ifndef TALLY_SBPF_LINK_INTERNAL_H
#define TALLY_SBPF_LINK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "sbpf/linker.h"
#include "sbpf/program.h"

/* A v0 file's layout starts with the file header and three program headers (text and
 * rodata, the dynamic tables, PT_DYNAMIC); the bytecode follows at this file address. */
#define SBPF_LINK_V0_PHDRS 3
#define SBPF_LINK_V0_TEXT (64 + 56 * SBPF_LINK_V0_PHDRS)

/* Kinds of .debug_* sections one link takes (DWARF 5 has 11). */
#define SBPF_LINK_MAX_DEBUG 32

/* agave's relocation types (solana-sbpf elf.rs). */
enum { SBPF_R_64_64 = 1, SBPF_R_RELATIVE = 8, SBPF_R_64_32 = 10 };

/* A dynamic relocation of a v0 file: the file address of its slot, its type, and its
 * symbol (an index into sbpf_linked.dynsyms plus one; 0 for none). */
struct sbpf_dynrel {
	uint64_t addr;
	uint32_t type, sym;
};

enum sbpf_dynsym_place { SBPF_DYN_UNDEF, SBPF_DYN_TEXT, SBPF_DYN_RODATA };
/* A .dynsym entry: a syscall (undefined) or a global the loader relocates against. */
struct sbpf_dynsym {
	const char *name; /* in the program's arena */
	uint64_t addr, size;
	uint8_t type;     /* STT_FUNC, STT_OBJECT or STT_NOTYPE */
	uint8_t place;    /* enum sbpf_dynsym_place */
};

/* One output .debug_* section: the objects' sections of that name, back to back, with
 * their relocations applied for the program's addresses. */
struct sbpf_debug_section {
	const char *name; /* in the program's arena */
	uint8_t *bytes;
	uint64_t size;
};

/* What a written file holds beyond the program's text, rodata and function names. */
struct sbpf_linked {
	VEC(struct sbpf_dynrel) rels;
	VEC(struct sbpf_dynsym) dynsyms;
	VEC(struct sbpf_debug_section) debug;
};

/* Fills p's text, rodata, entry and symbols from the objects for p->version (v0: text at
 * file address SBPF_LINK_V0_TEXT, addresses the loader relocates listed in out->rels; v3:
 * text at 0x1_0000_0000, rodata at 0, nothing left to relocate). out may be NULL (an
 * in-memory program: no dynamic tables, no DWARF). */
int sbpf_link(const struct sbpf_object *objs, size_t n, const struct sbpf_syscalls *syscalls,
	      bool debug, struct sbpf_program *p, struct sbpf_linked *out);
/* One object linked in memory as sBPF v3+ (p->version is already set). */
int sbpf_link_object(const char *name, const uint8_t *bytes, size_t size,
		     const struct sbpf_syscalls *syscalls, struct sbpf_program *p);
void sbpf_linked_free(struct sbpf_linked *l);

/* The deployable ELF of a linked program, v0 or v3 by p->version (elf_write.c). */
int sbpf_link_write(const struct sbpf_program *p, const struct sbpf_linked *l, uint8_t **out,
		    size_t *size);

/* Sorts p->syms by pc, keeps one name per pc and closes every range (symbols.c). */
void sbpf_sort_symbols(struct sbpf_program *p);
/* Appends a zeroed entry to p->syms, whose room *cap the caller keeps while it collects;
 * NULL when out of memory. */
struct sbpf_symbol *sbpf_add_symbol(struct sbpf_program *p, size_t *cap);

#endif
