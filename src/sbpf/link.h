/*
 * In-memory linking of relocatable eBPF objects into sBPF v3 programs (internal to
 * src/sbpf; the loader calls it for ET_REL files). See link.c.
 */
#ifndef TALLY_SBPF_LINK_H
#define TALLY_SBPF_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "sbpf/program.h"

/* Fills p's text, rodata, entry and symbols from the object; p->version is already v3+. */
int sbpf_link_object(const char *name, const uint8_t *bytes, size_t size,
		     const struct sbpf_syscalls *syscalls, struct sbpf_program *p);

/* Sorts p->syms by pc, keeps one name per pc and closes every range (symbols.c). */
void sbpf_sort_symbols(struct sbpf_program *p);
/* Appends a zeroed entry to p->syms, whose room *cap the caller keeps while it collects;
 * NULL when out of memory. */
struct sbpf_symbol *sbpf_add_symbol(struct sbpf_program *p, size_t *cap);

#endif
