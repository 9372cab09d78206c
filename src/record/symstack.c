/*
 * Symbolized stacks of a perf.data: each sample unwound (replay.c), then its frames named
 * outermost first: native frames through tally_symbolize (one symbolizer per module, opened
 * on first use on the file the unwinder read, so a build-id cache copy when the path was
 * rebuilt) with their inline frames, PLT stubs as "[plt]", kernel frames from
 * /proc/kallsyms (read only when a sample has some), and "[truncated]" first when the stack
 * was not unwound to its outermost frame.
 */
#include "record/record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"
#include "record/kallsyms.h"
#include "tally/tally.h"

#define MAX_FRAMES 4096
#define MAX_INLINE 32

struct symcache {
	const struct unw_module *mod;
	struct tally_symbolizer *s; /* NULL when the module could not be opened */
};

struct symstack {
	struct symcache *syms;
	size_t nsyms, capsyms;
	struct rec_kallsyms ksyms;
	bool ksyms_loaded;
	struct rec_sym_frame frames[MAX_FRAMES];
	size_t n;
	int (*fn)(const struct rec_sym_stack *st, void *arg);
	void *arg;
};

static struct tally_symbolizer *symbolizer(struct symstack *y, const struct unw_module *m)
{
	for (size_t i = 0; i < y->nsyms; i++)
		if (y->syms[i].mod == m)
			return y->syms[i].s;
	if (y->nsyms == y->capsyms) {
		size_t cap = y->capsyms ? y->capsyms * 2 : 16;
		void *n = realloc(y->syms, cap * sizeof(*y->syms));
		if (!n)
			return NULL;
		y->syms = n;
		y->capsyms = cap;
	}
	struct symcache *c = &y->syms[y->nsyms++];
	c->mod = m;
	c->s = NULL;
	if (m->file && tally_symbolizer_open(m->file, NULL, &c->s))
		err_clear();
	return c->s;
}

static struct rec_sym_frame *push(struct symstack *y, enum rec_frame_kind kind)
{
	if (y->n == MAX_FRAMES)
		return NULL;
	struct rec_sym_frame *f = &y->frames[y->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	return f;
}

static void native(struct symstack *y, const struct unw_frame *fr, bool exact)
{
	const char *module = fr->mod ? fr->mod->path : NULL;
	if (fr->mod && fr->mod->elf && fr->rel) {
		/* PLT stubs have no symbol: a symbolizer would name the function before them. */
		struct elf_section *sec = elf_section_at(fr->mod->elf, fr->rel);
		if (sec && !strncmp(sec->name, ".plt", 4)) {
			struct rec_sym_frame *f = push(y, REC_FRAME_NATIVE);
			if (f) {
				f->function = "[plt]";
				f->module = module;
				f->addr = fr->rel;
			}
			return;
		}
	}
	struct tally_symbolizer *s = fr->mod ? symbolizer(y, fr->mod) : NULL;
	struct tally_frame tf[MAX_INLINE];
	/* A return address points after its call: name the call. */
	int n = s && fr->rel ? tally_symbolize(s, exact ? fr->rel : fr->rel - 1, tf, MAX_INLINE) : 0;
	if (n > MAX_INLINE)
		n = MAX_INLINE;
	if (n <= 0) {
		struct rec_sym_frame *f = push(y, REC_FRAME_NATIVE);
		if (f) {
			f->module = module;
			f->addr = fr->rel;
			f->pc = fr->pc;
		}
		return;
	}
	for (int i = n; i > 0; i--) { /* outermost (the real function) first */
		struct rec_sym_frame *f = push(y, i == n ? REC_FRAME_NATIVE : REC_FRAME_INLINE);
		if (!f)
			return;
		f->function = tf[i - 1].function;
		f->file = tf[i - 1].file;
		f->line = tf[i - 1].line;
		f->module = module;
		f->addr = fr->rel;
		f->pc = fr->pc;
		f->sym_start = tf[i - 1].sym_start;
	}
}

static void kernel(struct symstack *y, const struct perf_event_rec *ev)
{
	/* The callchain holds kernel frames innermost first after PERF_CONTEXT_KERNEL. */
	uint64_t start = ev->nr_callchain, end = ev->nr_callchain;
	for (uint64_t i = 0; i < ev->nr_callchain; i++) {
		uint64_t ip = perf_callchain_at(ev, i);
		if (ip == PERF_CONTEXT_KERNEL)
			start = i + 1;
		else if (ip >= PERF_CONTEXT_MAX && start != ev->nr_callchain &&
			 end == ev->nr_callchain)
			end = i;
	}
	if (end > start && !y->ksyms_loaded) {
		rec_kallsyms_load(&y->ksyms);
		y->ksyms_loaded = true;
	}
	for (uint64_t i = end; i > start; i--) {
		struct rec_sym_frame *f = push(y, REC_FRAME_KERNEL);
		if (!f)
			return;
		f->pc = perf_callchain_at(ev, i - 1);
		f->function = rec_kallsyms_find(&y->ksyms, f->pc);
		f->module = "[kernel.kallsyms]";
	}
}

static int on_stack(const struct rec_stack *st, void *arg)
{
	struct symstack *y = arg;
	y->n = 0;
	if (st->end != UNW_END_OUTERMOST) {
		struct rec_sym_frame *f = push(y, REC_FRAME_TRUNCATED);
		f->function = "[truncated]";
	}
	for (size_t i = st->n; i > 0; i--)
		native(y, &st->frames[i - 1], i == 1);
	kernel(y, st->ev);
	struct rec_sym_stack s = { st, y->frames, y->n, st->comm[0] ? st->comm : "[unknown]" };
	return y->fn(&s, y->arg);
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

int rec_symbolized_data(struct perf_data *d, enum unw_method method,
			int (*fn)(const struct rec_sym_stack *st, void *arg), void *arg,
			struct rec_quality *q)
{
	struct symstack *y = calloc(1, sizeof(*y));
	if (!y)
		return err_set(-ENOMEM, "out of memory");
	y->fn = fn;
	y->arg = arg;
	memset(q, 0, sizeof(*q));
	q->method = method;
	struct unw_ctx *c = NULL;
	int r = rec_replay_data(d, method, on_stack, y, &q->info, &c);
	if (!r)
		quality(c, q);
	unw_ctx_free(c);
	for (size_t i = 0; i < y->nsyms; i++)
		if (y->syms[i].s)
			tally_symbolizer_close(y->syms[i].s);
	free(y->syms);
	rec_kallsyms_free(&y->ksyms);
	free(y);
	return r;
}

int rec_symbolized(const char *path, enum unw_method method,
		   int (*fn)(const struct rec_sym_stack *st, void *arg), void *arg,
		   struct rec_quality *q)
{
	struct perf_data *d;
	int r = perf_data_open(path, &d);
	if (r)
		return r;
	r = rec_symbolized_data(d, method, fn, arg, q);
	perf_data_close(d);
	return r;
}
