/*
 * Folded stacks of a perf.data: each sample unwound (replay.c), its frames symbolized with
 * inline frames (tally_symbolize, one symbolizer per module, opened on first use), the
 * resulting lines counted in a hash table and printed sorted, so the output is the same
 * for the same input.
 */
#include "record/record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"
#include "record/kallsyms.h"
#include "tally/tally.h"

#define LINE_MAX_LEN 65536

struct symcache {
	const struct unw_module *mod;
	struct tally_symbolizer *s; /* NULL when the module could not be opened */
};

struct entry {
	char *line;
	uint64_t count;
};

struct folded {
	struct symcache *syms;
	size_t nsyms, capsyms;
	struct entry *tab; /* open addressing, power-of-two size */
	size_t ntab, captab;
	struct rec_kallsyms ksyms;
	char buf[LINE_MAX_LEN];
	size_t len;
	bool overflow;
};

static struct tally_symbolizer *symbolizer(struct folded *f, const struct unw_module *m)
{
	for (size_t i = 0; i < f->nsyms; i++)
		if (f->syms[i].mod == m)
			return f->syms[i].s;
	if (f->nsyms == f->capsyms) {
		size_t cap = f->capsyms ? f->capsyms * 2 : 16;
		void *n = realloc(f->syms, cap * sizeof(*f->syms));
		if (!n)
			return NULL;
		f->syms = n;
		f->capsyms = cap;
	}
	struct symcache *c = &f->syms[f->nsyms++];
	c->mod = m;
	c->s = NULL;
	/* The file the unwinder read: a build-id cache copy when the path was rebuilt. */
	if (m->file && tally_symbolizer_open(m->file, NULL, &c->s))
		err_clear();
	return c->s;
}

static void put(struct folded *f, const char *s)
{
	size_t n = strlen(s);
	if (f->len + n + 2 > LINE_MAX_LEN) {
		f->overflow = true;
		return;
	}
	if (f->len)
		f->buf[f->len++] = ';';
	for (size_t i = 0; i < n; i++) /* ';' and spaces would break the folded format */
		f->buf[f->len++] = s[i] == ';' || s[i] == ' ' ? '_' : s[i];
	f->buf[f->len] = 0;
}

static void put_frame(struct folded *f, const struct unw_frame *fr, bool exact)
{
	char tmp[256];
	if (!fr->mod) {
		put(f, "[unknown]");
		return;
	}
	if (fr->mod->elf && fr->rel) {
		/* PLT stubs have no symbol: a symbolizer would name the function before them. */
		struct elf_section *sec = elf_section_at(fr->mod->elf, fr->rel);
		if (sec && !strncmp(sec->name, ".plt", 4)) {
			put(f, "[plt]");
			return;
		}
	}
	struct tally_symbolizer *s = symbolizer(f, fr->mod);
	struct tally_frame frames[32];
	int n = s && fr->rel ? tally_symbolize(s, exact ? fr->rel : fr->rel - 1, frames, 32) : 0;
	if (n > 32)
		n = 32;
	bool named = false;
	for (int i = n; i > 0; i--) /* outermost (the real function) first */
		if (frames[i - 1].function) {
			put(f, frames[i - 1].function);
			named = true;
		}
	if (!named) {
		const char *base = strrchr(fr->mod->path, '/');
		snprintf(tmp, sizeof(tmp), "[%s+0x%llx]", base ? base + 1 : fr->mod->path,
			 (unsigned long long)fr->rel);
		put(f, tmp);
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

static int on_stack(const struct rec_stack *st, void *arg)
{
	struct folded *f = arg;
	f->len = 0;
	f->buf[0] = 0;
	put(f, st->comm[0] ? st->comm : "[unknown]");
	if (st->end != UNW_END_OUTERMOST)
		put(f, "[truncated]");
	for (size_t i = st->n; i > 0; i--)
		put_frame(f, &st->frames[i - 1], i == 1);
	/* Kernel frames: the callchain holds them innermost first after PERF_CONTEXT_KERNEL. */
	const struct perf_event_rec *ev = st->ev;
	uint64_t start = ev->nr_callchain, end = ev->nr_callchain;
	for (uint64_t i = 0; i < ev->nr_callchain; i++) {
		uint64_t ip = perf_callchain_at(ev, i);
		if (ip == PERF_CONTEXT_KERNEL)
			start = i + 1;
		else if (ip >= PERF_CONTEXT_MAX && start != ev->nr_callchain && end == ev->nr_callchain)
			end = i;
	}
	if (end > start && !f->ksyms.loaded) {
		rec_kallsyms_load(&f->ksyms); /* only for recordings with kernel frames */
		f->ksyms.loaded = true;
	}
	for (uint64_t i = end; i > start; i--) {
		const char *name = rec_kallsyms_find(&f->ksyms, perf_callchain_at(ev, i - 1));
		put(f, name ? name : "[kernel]");
	}
	return count_line(f, f->buf);
}

static int by_line(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->line, ((const struct entry *)b)->line);
}

static void quality(struct unw_ctx *c, struct rec_quality *q)
{
	q->stats = *unw_ctx_stats(c);
	struct unw_module *const *mods;
	size_t n = unw_ctx_modules(c, &mods);
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			if (mods[i]->stops > q->stop_counts[k]) {
				for (int j = 2; j > k; j--) {
					q->stop_counts[j] = q->stop_counts[j - 1];
					memcpy(q->stop_modules[j], q->stop_modules[j - 1], 64);
				}
				const char *base = strrchr(mods[i]->path, '/');
				q->stop_counts[k] = mods[i]->stops;
				snprintf(q->stop_modules[k], 64, "%s", base ? base + 1 : mods[i]->path);
				break;
			}
}

int rec_folded(const char *path, enum unw_method method, FILE *out, struct rec_quality *q)
{
	struct folded *f = calloc(1, sizeof(*f));
	if (!f)
		return err_set(-ENOMEM, "out of memory");
	struct unw_ctx *c = NULL;
	memset(q, 0, sizeof(*q));
	q->method = method;
	int r = rec_replay(path, method, on_stack, f, &q->info, &c);
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
		quality(c, q);
	}
	for (size_t i = 0; i < f->captab; i++)
		free(f->tab[i].line);
	free(f->tab);
	for (size_t i = 0; i < f->nsyms; i++)
		if (f->syms[i].s)
			tally_symbolizer_close(f->syms[i].s);
	free(f->syms);
	rec_kallsyms_free(&f->ksyms);
	free(f);
	unw_ctx_free(c);
	return r;
}
