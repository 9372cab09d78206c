/*
 * The symbolizer's printer: an address's frames as llvm-symbolizer --inlining prints them
 * (byte for byte), as addr2line -f -i does, or as one JSON object; and a batch of
 * addresses printed in input order, looked up on several threads when it is large.
 */
#ifndef TALLY_SYMBOLIZE_PRINT_H
#define TALLY_SYMBOLIZE_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbolize/symbolize.h"

enum sym_print_style { SYM_PRINT_LLVM, SYM_PRINT_GNU, SYM_PRINT_JSON };

/* Prints addr's frames (at most 64, innermost first) to out in style. */
void sym_print(FILE *out, struct sym_module *m, enum sym_print_style style, uint64_t addr);

/* A batch this large is looked up in parallel, with all of the DWARF read first: a caller
 * that expects one opens the module with sym_opts.many. */
#define SYM_PRINT_MANY 256

/* n input lines: addrs[i] where ok[i], else a line that is not an address, which
 * on_bad(i, ctx) reports, called in order between the lines before and after it. */
struct sym_print_batch {
	const uint64_t *addrs;
	const bool *ok;
	size_t n;
	void (*on_bad)(size_t i, void *ctx);
	void *ctx;
};

/* Prints the batch's frames to out in input order. 0, or -ENOMEM with nothing printed. */
int sym_print_batch(FILE *out, struct sym_module *m, enum sym_print_style style,
		    const struct sym_print_batch *b);

#endif
