/*
 * `tally sbpf link`: relocatable eBPF objects (upstream `clang -target bpf -c`) linked into
 * one deployable sBPF program, as agave's loader reads it (link.c, elf_write.c).
 */
#ifndef TALLY_SBPF_LINKER_H
#define TALLY_SBPF_LINKER_H

#include <stddef.h>
#include <stdint.h>

#include "sbpf/isa.h"

struct sbpf_syscalls;

/* One input object; name is used in messages ("NAME: what went wrong"). */
struct sbpf_object {
	const char *name;
	const uint8_t *bytes;
	size_t size;
};

struct sbpf_link_opts {
	size_t sz;                 /* sizeof(struct sbpf_link_opts) */
	const char *name;          /* the output's, for messages about the linked program */
	enum sbpf_version version; /* SBPF_V0 (dynamic relocations) or SBPF_V3 (static) */
	bool no_debug;             /* leave the objects' .debug_* sections out */
};

/*
 * Links the objects (globals resolved across them; calls to undefined functions are
 * syscalls of `syscalls`, by name) and writes the ELF into *out (malloc'd). The file is
 * loaded back by tally's loader with the deployment checks before it is handed out, so a
 * file this returns loads as the runtime would load it.
 */
int sbpf_link_elf(const struct sbpf_object *objs, size_t n, const struct sbpf_syscalls *syscalls,
		  const struct sbpf_link_opts *opts, uint8_t **out, size_t *size);

#endif
