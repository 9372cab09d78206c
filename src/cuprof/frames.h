/*
 * Source-level frames of an sBPF program's pcs, for profiles built in the src/profile
 * model: the function a pc belongs to and the functions inlined at it (from DWARF through
 * the symbolizer; from .symtab names when there is no DWARF), as interned profile frames.
 * Shared by the run-time profiler (profiler.c) and the static size view (size.c).
 *
 * Addresses in the profile are the program file's own (what `tally symbolize -e PROGRAM`
 * and annotate take): the .text address of the pc in a linked ELF, the byte offset into
 * the first executable section of a relocatable object, pc * 8 for raw bytecode.
 *
 * Ownership: borrows the program and the profile (both must outlive it); owns the
 * symbolizer and the per-pc cache.
 */
#ifndef TALLY_CUPROF_FRAMES_H
#define TALLY_CUPROF_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

struct prof;
struct sbpf_program;
struct tally_symbolizer;

/* One frame of a pc's chain: an interned frame and the source line at the pc in it (for
 * an outer frame, the line of the inlined call it holds). */
struct cuprof_frames_loc {
	uint32_t frame;
	uint32_t line;
};

struct cuprof_frames_pc {
	uint32_t first; /* index into chain */
	uint16_t n;     /* 0: nothing known; else innermost first, last = the function */
	uint8_t done;
};

struct cuprof_frame_key {
	uint32_t kind, name;
	uint64_t addr;
	uint32_t frame1; /* frame id + 1; 0: empty slot */
};

struct cuprof_frames {
	const struct sbpf_program *prog;
	struct prof *p;
	uint32_t module;
	uint64_t base; /* file address of pc 0 */
	struct tally_symbolizer *sym;
	struct cuprof_frames_pc *pcs; /* ninsns */
	VEC(struct cuprof_frames_loc) chain;
	struct cuprof_frame_key *keys; /* open-addressed frame cache */
	size_t nkeys, capkeys;
};

/* Opens the program file at path (NULL for none) for symbols, and registers it as the
 * profile's module. */
int cuprof_frames_init(struct cuprof_frames *s, const struct sbpf_program *prog,
		       const char *path, struct prof *p);
void cuprof_frames_free(struct cuprof_frames *s);

static inline uint64_t cuprof_frames_addr(const struct cuprof_frames *s, uint64_t pc)
{
	return s->base + pc * 8;
}

/* The chain of pc (innermost first; the last entry is its function), n entries; n is 0
 * when nothing is known about pc. 0, or a negative code (message set). */
int cuprof_frames_chain(struct cuprof_frames *s, uint64_t pc,
			const struct cuprof_frames_loc **chain, size_t *n);
/* The frame of the function that starts (or is entered) at pc. PROF_NONE on failure. */
uint32_t cuprof_frames_function(struct cuprof_frames *s, uint64_t pc);
/* The frame "syscall:NAME". */
uint32_t cuprof_frames_syscall(struct cuprof_frames *s, const char *name);
/* The frame "program:NAME" (a program entered through CPI). */
uint32_t cuprof_frames_program(struct cuprof_frames *s, const char *name);
/* The node of pc's innermost inline frame below fnode (the node of pc's function): its
 * inlined frames entered in turn, each keyed by the line of the inlined call. *line is
 * the source line at pc. PROF_NONE on failure. */
uint32_t cuprof_frames_inline_node(struct cuprof_frames *s, uint32_t fnode, uint64_t pc,
				   uint32_t *line);

#endif
