/*
 * Kernel symbols from /proc/kallsyms, for the kernel part of sampled callchains. The file
 * is read whole and names point into that buffer (120,000 lines: sscanf and a strdup per
 * line cost more than the kernel takes to print them). Without root (or with
 * kptr_restrict) every address reads as 0: the table is then empty and kernel frames are
 * shown as "[kernel]".
 */
#include "base/search.h"
#include "record/kallsyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_addr(const void *a, const void *b)
{
	const struct rec_ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 22, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *nb = realloc(buf, 2 * cap + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

void rec_kallsyms_load(struct rec_kallsyms *k)
{
	memset(k, 0, sizeof(*k));
	size_t len, cap = 0;
	k->text = read_all("/proc/kallsyms", &len);
	for (char *p = k->text, *end = k->text + (k->text ? len : 0); p && p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		*nl = 0;
		char *e;
		uint64_t addr = strtoull(p, &e, 16);
		if (addr && e[0] == ' ' && (e[1] == 't' || e[1] == 'T') && e[2] == ' ') {
			char *name = e + 3;
			name[strcspn(name, "\t")] = 0; /* "name\t[module]" */
			if (k->n == cap) {
				cap = cap ? cap * 2 : 65536;
				struct rec_ksym *ns = realloc(k->syms, cap * sizeof(*ns));
				if (!ns)
					break;
				k->syms = ns;
			}
			k->syms[k->n].addr = addr;
			k->syms[k->n++].name = name;
		}
		p = nl + 1;
	}
	qsort(k->syms, k->n, sizeof(*k->syms), by_addr);
}

const char *rec_kallsyms_find(const struct rec_kallsyms *k, uint64_t addr)
{
	size_t lo = UPPER_BOUND(k->syms, k->n, .addr, addr);
	return lo ? k->syms[lo - 1].name : NULL;
}

void rec_kallsyms_free(struct rec_kallsyms *k)
{
	free(k->syms);
	free(k->text);
	memset(k, 0, sizeof(*k));
}
