/*
 * Folded stacks of a perf.data (symstack.c names the frames): one line per distinct stack,
 * "comm;outermost;...;innermost COUNT", counted in a hash table and printed sorted, so the
 * same input gives the same output.
 */
#include "replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

#define LINE_MAX_LEN 65536

struct entry {
	char *line;
	uint64_t count;
};

struct folded {
	struct entry *tab; /* open addressing, power-of-two size */
	size_t ntab, captab;
	char buf[LINE_MAX_LEN];
	size_t len;
};

static void put(struct folded *f, const char *s)
{
	size_t n = strlen(s);
	if (f->len + n + 2 > LINE_MAX_LEN)
		return;
	if (f->len)
		f->buf[f->len++] = ';';
	for (size_t i = 0; i < n; i++) /* ';' and spaces would break the folded format */
		f->buf[f->len++] = s[i] == ';' || s[i] == ' ' ? '_' : s[i];
	f->buf[f->len] = 0;
}

static void put_frame(struct folded *f, const struct replay_sym_frame *fr)
{
	if (fr->function) {
		put(f, fr->function);
		return;
	}
	char tmp[256];
	if (fr->kind == REPLAY_FRAME_KERNEL) {
		put(f, "[kernel]");
	} else if (fr->module) {
		const char *base = strrchr(fr->module, '/');
		snprintf(tmp, sizeof(tmp), "[%s+0x%llx]", base ? base + 1 : fr->module,
			 (unsigned long long)fr->addr);
		put(f, tmp);
	} else {
		put(f, "[unknown]");
	}
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int count_line(struct folded *f, const char *line)
{
	if (f->ntab * 2 >= f->captab) {
		size_t cap = f->captab ? f->captab * 2 : 1024;
		struct entry *n = calloc(cap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < f->captab; i++) {
			if (!f->tab[i].line)
				continue;
			size_t k = hash(f->tab[i].line) & (cap - 1);
			while (n[k].line)
				k = (k + 1) & (cap - 1);
			n[k] = f->tab[i];
		}
		free(f->tab);
		f->tab = n;
		f->captab = cap;
	}
	size_t k = hash(line) & (f->captab - 1);
	while (f->tab[k].line && strcmp(f->tab[k].line, line))
		k = (k + 1) & (f->captab - 1);
	if (!f->tab[k].line) {
		if (!(f->tab[k].line = strdup(line)))
			return -ENOMEM;
		f->ntab++;
	}
	f->tab[k].count++;
	return 0;
}

static int on_stack(const struct replay_sym_stack *st, void *arg)
{
	struct folded *f = arg;
	f->len = 0;
	f->buf[0] = 0;
	put(f, st->comm);
	for (size_t i = 0; i < st->n; i++)
		put_frame(f, &st->frames[i]);
	return count_line(f, f->buf);
}

static int by_line(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->line, ((const struct entry *)b)->line);
}

int rec_folded(const char *path, enum unw_method method, FILE *out, struct replay_quality *q)
{
	struct folded *f = calloc(1, sizeof(*f));
	if (!f)
		return err_set(-ENOMEM, "out of memory");
	int r = replay_symbolized(path, method, on_stack, f, q);
	if (r == -ENOMEM)
		err_set(r, "%s: out of memory", path);
	if (!r) {
		struct entry *v = malloc((f->ntab ? f->ntab : 1) * sizeof(*v));
		size_t n = 0;
		for (size_t i = 0; v && i < f->captab; i++)
			if (f->tab[i].line)
				v[n++] = f->tab[i];
		if (v) {
			qsort(v, n, sizeof(*v), by_line);
			for (size_t i = 0; i < n; i++)
				fprintf(out, "%s %llu\n", v[i].line, (unsigned long long)v[i].count);
		} else {
			r = err_set(-ENOMEM, "out of memory");
		}
		free(v);
	}
	for (size_t i = 0; i < f->captab; i++)
		free(f->tab[i].line);
	free(f->tab);
	free(f);
	return r;
}
