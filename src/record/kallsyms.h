/*
 * /proc/kallsyms as a sorted table of kernel text symbols.
 */
#ifndef TALLY_RECORD_KALLSYMS_H
#define TALLY_RECORD_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_ksym {
	uint64_t addr;
	const char *name; /* in text */
};

struct rec_kallsyms {
	struct rec_ksym *syms;
	size_t n;
	char *text;
	bool loaded;
};

void rec_kallsyms_load(struct rec_kallsyms *k);
/* The symbol at or before addr, NULL when the table is empty. */
const char *rec_kallsyms_find(const struct rec_kallsyms *k, uint64_t addr);
void rec_kallsyms_free(struct rec_kallsyms *k);

#endif
