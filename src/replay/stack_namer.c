/*
 * Symbolized stacks of a perf.data: each sample unwound (replay.c), then its frames named
 * outermost first: "[truncated]" first when the stack was not unwound to its outermost
 * frame, each unwound frame by the first frame source that claims it (those sources.c
 * lists, in its order; the ELF source last, sources/elf.c), then kernel frames from
 * /proc/kallsyms (read only when a sample has some).
 * A stack named before is taken from the stack memo unless a source's names depend on the
 * sample's moment.
 */
#include "replay/namer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "replay/kallsyms.h"
#include "replay/sources/sources.h"
#include "replay/stack_memo.h"

#define MAX_FRAMES 4096
#define MAX_SOURCES 8

struct replay_frames {
	struct replay_sym_frame v[MAX_FRAMES];
	size_t n;
};

struct replay_namer {
	struct replay_frame_source sources[MAX_SOURCES]; /* the ELF source last */
	size_t nsources;
	struct replay_kallsyms ksyms;
	bool ksyms_loaded;
	struct replay_frames frames;
	struct replay_stack_memo *stacks; /* NULL: every stack named anew */
};

struct replay_sym_frame *replay_frames_push(struct replay_frames *out, enum prof_kind kind)
{
	if (out->n == MAX_FRAMES)
		return NULL;
	struct replay_sym_frame *f = &out->v[out->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	return f;
}

int replay_namer_new(const struct replay_frame_source *sources, size_t n,
		     struct replay_namer **out)
{
	if (n >= MAX_SOURCES) {
		replay_sources_close(sources, n);
		return err_set(-EINVAL, "%zu frame sources: at most %d", n, MAX_SOURCES - 1);
	}
	struct replay_namer *nm = calloc(1, sizeof(*nm));
	int r = nm ? replay_elf_source_new(&nm->sources[n]) : err_set(-ENOMEM, "out of memory");
	if (r) {
		free(nm);
		replay_sources_close(sources, n);
		return r;
	}
	bool per_sample = false;
	for (size_t i = 0; i < n; i++) {
		nm->sources[i] = sources[i];
		per_sample |= sources[i].ops->per_sample;
	}
	nm->nsources = n + 1;
	/* Without it (per-sample names, or no memory) each stack is named anew. */
	nm->stacks = per_sample ? NULL : replay_stack_memo_new();
	*out = nm;
	return 0;
}

void replay_namer_free(struct replay_namer *nm)
{
	if (!nm)
		return;
	replay_sources_close(nm->sources, nm->nsources);
	replay_kallsyms_free(&nm->ksyms);
	replay_stack_memo_free(nm->stacks);
	free(nm);
}

static void kernel(struct replay_namer *nm, const struct perf_event_rec *ev)
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
	if (end > start && !nm->ksyms_loaded) {
		replay_kallsyms_load(&nm->ksyms);
		nm->ksyms_loaded = true;
	}
	for (uint64_t i = end; i > start; i--) {
		struct replay_sym_frame *f = replay_frames_push(&nm->frames, PROF_KERNEL);
		if (!f)
			return;
		f->pc = perf_callchain_at(ev, i - 1);
		f->function = replay_kallsyms_find(&nm->ksyms, f->pc);
		f->module = "[kernel.kallsyms]";
	}
}

/* The stack's frames named into nm->frames. */
static int name_stack(struct replay_namer *nm, const struct replay_stack *st)
{
	nm->frames.n = 0;
	for (size_t s = 0; s < nm->nsources; s++) {
		const struct replay_frame_source *src = &nm->sources[s];
		int r = src->ops->begin_stack ? src->ops->begin_stack(src->self, st) : 0;
		if (r < 0)
			return r;
	}
	if (st->end != UNW_END_OUTERMOST)
		replay_frames_push(&nm->frames, PROF_TRUNCATED)->function = "[truncated]";
	for (size_t i = st->n; i > 0; i--) {
		int r = 0;
		for (size_t s = 0; !r && s < nm->nsources; s++)
			r = nm->sources[s].ops->name_frame(nm->sources[s].self, st, i - 1,
							   &nm->frames);
		if (r < 0)
			return r;
	}
	kernel(nm, st->ev);
	return 0;
}

int replay_namer_name(struct replay_namer *nm, const struct replay_stack *st,
		      struct replay_sym_stack *out)
{
	*out = (struct replay_sym_stack){ st, NULL, 0, st->comm[0] ? st->comm : "[unknown]", 0,
					  PROF_GIL_UNKNOWN };
	if (nm->stacks)
		out->id = replay_stack_memo_find(nm->stacks, st, &out->frames, &out->n);
	if (out->id)
		return 0;
	int r = name_stack(nm, st);
	if (r)
		return r;
	for (size_t s = 0; s < nm->nsources && out->gil == PROF_GIL_UNKNOWN; s++)
		if (nm->sources[s].ops->gil)
			out->gil = nm->sources[s].ops->gil(nm->sources[s].self);
	out->frames = nm->frames.v;
	out->n = nm->frames.n;
	if (nm->stacks)
		out->id = replay_stack_memo_keep(nm->stacks, st, nm->frames.v, nm->frames.n,
						 &out->frames);
	return 0;
}

int replay_namer_record(struct replay_namer *nm, const struct perf_event_rec *ev)
{
	int r = 0;
	for (size_t s = 0; s < nm->nsources && !r; s++)
		if (nm->sources[s].ops->record)
			r = nm->sources[s].ops->record(nm->sources[s].self, ev);
	return r;
}

struct symbolized {
	struct replay_namer *nm;
	int (*fn)(const struct replay_sym_stack *st, void *arg);
	void *arg;
};

static int on_stack(const struct replay_stack *st, void *arg)
{
	struct symbolized *y = arg;
	struct replay_sym_stack s;
	int r = replay_namer_name(y->nm, st, &s);
	return r ? r : y->fn(&s, y->arg);
}

static int on_side(const struct perf_event_rec *ev, void *arg)
{
	struct symbolized *y = arg;
	return replay_namer_record(y->nm, ev);
}

static void quality(struct unw_ctx *c, struct replay_quality *q)
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

static void count(void *arg, const char *name, uint64_t value)
{
	struct replay_quality *q = arg;
	if (q->ncounted < REPLAY_MAX_COUNTED)
		q->counted[q->ncounted++] = (struct replay_counted){ name, value };
}

void replay_namer_counters(const struct replay_namer *nm, struct replay_quality *q)
{
	for (size_t s = 0; s < nm->nsources; s++)
		if (nm->sources[s].ops->counters)
			nm->sources[s].ops->counters(nm->sources[s].self, count, q);
}

/* The unwind hook of the sources that give the unwinder something (before_unwind). */
static int before_unwind(void *self, struct unw_ctx *c, struct unw_space *s,
			 const struct perf_event_rec *ev)
{
	const struct replay_namer *nm = self;
	int r = 0;
	for (size_t i = 0; i < nm->nsources && !r; i++)
		if (nm->sources[i].ops->before_unwind)
			r = nm->sources[i].ops->before_unwind(nm->sources[i].self, c, s, ev);
	return r;
}

static bool unwind_hook(const struct replay_namer *nm, struct replay_unwind_hook *out)
{
	*out = (struct replay_unwind_hook){ before_unwind, (void *)nm };
	for (size_t i = 0; i < nm->nsources; i++)
		if (nm->sources[i].ops->before_unwind)
			return true;
	return false;
}

int replay_symbolized_data(struct perf_data *d, enum unw_method method,
			   int (*fn)(const struct replay_sym_stack *st, void *arg), void *arg,
			   struct replay_quality *q)
{
	struct symbolized y = { .fn = fn, .arg = arg };
	memset(q, 0, sizeof(*q));
	q->method = method;
	struct replay_frame_source sources[MAX_SOURCES - 1];
	size_t n;
	int r = replay_sources_open(d, sources, MAX_SOURCES - 1, &n);
	if (!r)
		r = replay_namer_new(sources, n, &y.nm);
	if (r)
		return r;
	struct replay_unwind_hook hook;
	struct unw_ctx *c = NULL;
	r = replay_unwind_each(d, method, unwind_hook(y.nm, &hook) ? &hook : NULL, on_stack,
			       on_side, &y, &q->info, &c);
	if (!r) {
		quality(c, q);
		replay_namer_counters(y.nm, q);
	}
	unw_ctx_free(c);
	replay_namer_free(y.nm);
	return r;
}
