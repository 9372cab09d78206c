/*
 * Inside annotate: a listing is the function's instructions with their weights and source
 * positions, built by annotate_listing.c and printed by annotate_text.c or annotate_html.c.
 * Ownership: the listing's arena holds instruction texts and its copies of names; source
 * file and function strings belong to the symbolizer, which the listing keeps open.
 */
#ifndef TALLY_REPORT_ANNOTATE_IMPL_H
#define TALLY_REPORT_ANNOTATE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/arena.h"
#include "base/vec.h"
#include "report/annotate.h"

struct tally_symbolizer;

struct annot_insn {
	uint64_t addr; /* module-relative */
	uint32_t size;
	const char *text; /* "mov rax, qword ptr [rdi]"; "" without a disassembler */
	int64_t weight;
	const char *file; /* innermost source position (an inlined callee's, if any) */
	uint32_t line;
	const char *func; /* innermost function, when it is an inlined callee; else NULL */
};

struct annot_listing {
	struct arena arena;
	const char *name;     /* the annotated function (its symbol, demangled as the profile has it) */
	const char *asked;    /* the frame asked for, when it is inlined into name; else NULL */
	const char *module;   /* the file read */
	const char *arch;     /* "x86-64", "aarch64"...; NULL when there is no disassembler */
	const char *no_disasm; /* why not, when arch is NULL */
	uint64_t lo, hi;      /* the function's address range */
	int64_t weight;       /* weight on the function's instructions */
	int64_t total;	      /* the profile's total */
	int64_t max_weight;   /* of one instruction */
	const char *unit;     /* "samples", "CU", ... */
	bool bytecode;	      /* an interpreter's function: addresses are its pcs */
	bool has_source;      /* the symbolizer knew at least one position */
	VEC(struct annot_insn) insns;
	struct tally_symbolizer *sym;
};

int annot_build(const struct prof *p, const struct rep_annot_opts *o, struct annot_listing *l);
/* Appends an instruction (text copied into the arena); NULL when out of memory. */
struct annot_insn *annot_add_insn(struct annot_listing *l, uint64_t addr, uint32_t size,
				  const char *text);

/* From the text of an agent listing read from path (src/agent/listing.c: the layout of
 * objdump -dl), the instructions of the function name that holds pc (pcs are the
 * interpreter's: several functions may share a name), appended to l with their source
 * positions, l->lo and l->hi set around them. 0, or a negative code with the message set
 * (-ENOENT: the listing has no function of that name). */
int annot_bytecode_parse(const char *path, const char *text, size_t len, const char *name,
			 uint64_t pc, struct annot_listing *l);
void annot_free(struct annot_listing *l);

int annot_write_text(FILE *out, const struct annot_listing *l, bool color);
int annot_write_html(FILE *out, const struct annot_listing *l);

/* Source text of a file's line, from a cache of files read whole. Missing or unreadable
 * files give NULL (annotation goes on without text). */
struct annot_sources;
struct annot_sources *annot_sources_new(void);
const char *annot_source_line(struct annot_sources *s, const char *path, uint32_t line,
			      size_t *len);
void annot_sources_free(struct annot_sources *s);

/* Disassemblers by ELF machine. */
struct annot_disasm;
/* For an ELF machine and e_flags; -ENOTSUP with the message set when there is none. */
int annot_disasm_open(uint16_t machine, uint32_t elf_flags, struct annot_disasm **out);
const char *annot_disasm_arch(const struct annot_disasm *d);
/* Decodes the instruction at code (size bytes available) at address addr into text;
 * returns its length, or 0 when the bytes are no valid instruction. */
size_t annot_disasm_one(struct annot_disasm *d, const uint8_t *code, size_t size, uint64_t addr,
			char *text, size_t text_size);
/* How many bytes to skip over an undecodable spot (the architecture's granule). */
size_t annot_disasm_granule(const struct annot_disasm *d);
void annot_disasm_close(struct annot_disasm *d);

/* A heat level 0..4 for an instruction's weight relative to the hottest one. */
int annot_heat(int64_t weight, int64_t max_weight);

#endif
