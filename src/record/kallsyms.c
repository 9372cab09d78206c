/*
 * Kernel symbols from /proc/kallsyms, for the kernel part of sampled callchains. Without
 * root (or with kptr_restrict) every address reads as 0: the table is then empty and
 * kernel frames are shown as "[kernel]".
 */
#include "record/kallsyms.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_addr(const void *a, const void *b)
{
	const struct rec_ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void rec_kallsyms_load(struct rec_kallsyms *k)
{
	memset(k, 0, sizeof(*k));
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	char line[512];
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr;
		char type, name[256];
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 4096;
			struct rec_ksym *n = realloc(k->syms, cap * sizeof(*n));
			if (!n)
				break;
			k->syms = n;
		}
		k->syms[k->n].addr = addr;
		k->syms[k->n].name = strdup(name);
		if (k->syms[k->n].name)
			k->n++;
	}
	fclose(f);
	qsort(k->syms, k->n, sizeof(*k->syms), by_addr);
}

const char *rec_kallsyms_find(const struct rec_kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->syms[lo - 1].name : NULL;
}

void rec_kallsyms_free(struct rec_kallsyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->syms[i].name);
	free(k->syms);
	memset(k, 0, sizeof(*k));
}
