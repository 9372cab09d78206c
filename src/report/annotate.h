/*
 * Annotated disassembly: the per-instruction weights of one function, with source lines
 * interleaved and the hottest instructions highlighted, as terminal text or as one
 * self-contained HTML page. The machine code comes from the module's file on disk (or
 * --binary), disassembled by capstone (x86-64, i386, aarch64); source positions come from
 * the symbolizer (include/tally/tally.h). An interpreter's bytecode function (a VM frame of
 * the agent, include/tally/agent.h) is listed from the text listing the agent wrote.
 */
#ifndef TALLY_REPORT_ANNOTATE_H
#define TALLY_REPORT_ANNOTATE_H

#include <stdbool.h>
#include <stdio.h>

struct prof;

/* The machine code of a JIT function, which no ELF file holds: [lo, hi) at runtime
 * addresses, its bytes, the ELF machine it is for, and a source position by address. */
struct rep_annot_jit {
	uint64_t lo, hi;
	const uint8_t *code;
	uint16_t machine;
	/* file:line of the instruction at addr; false when not known. */
	bool (*line)(void *self, uint64_t addr, const char **file, uint32_t *line);
	void *self;
};

/* Finds the code of a JIT frame of module (the file that named it) starting at start and
 * holding pc: 0 and *out, whose self release() frees, or a negative code with the message
 * set. Given by the caller, which knows the formats JIT frames come from. */
struct rep_annot_jit_ops {
	int (*find)(const char *module, uint64_t start, uint64_t pc, struct rep_annot_jit *out);
	void (*release)(void *self);
};

struct rep_annot_opts {
	const char *function;  /* the function's label; NULL: the one with the most self weight */
	const char *binary;    /* read this file instead of the module path in the profile */
	const char *debug_dir; /* extra directory for separate debug files; NULL: none */
	int metric;	       /* -1: the profile's default */
	bool html;	       /* one HTML page instead of text */
	bool color;	       /* text: ANSI colours (the command sets it on a tty) */
	const struct rep_annot_jit_ops *jit; /* for JIT frames; NULL: they cannot be annotated */
	const char *listing;   /* the agent's listing of bytecode functions (VM frames); NULL:
				  their pcs with weight are listed without instructions */
};

/* p must be finished. 0, or a negative code with the message set. */
int rep_annotate(FILE *out, const struct prof *p, const struct rep_annot_opts *o);

#endif
