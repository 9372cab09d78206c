/*
 * Symbolized stacks of a perf.data: each sample unwound (replay.c), then its frames named
 * outermost first: native frames through tally_symbolize (one symbolizer per module, opened
 * on first use on the file the unwinder read, so a build-id cache copy when the path was
 * rebuilt) with their inline frames, PLT stubs as "[plt]", kernel frames from
 * /proc/kallsyms (read only when a sample has some), and "[truncated]" first when the stack
 * was not unwound to its outermost frame.
 */
#include "replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bulk.h"
#include "base/err.h"
#include "elf/elf.h"
#include "replay/kallsyms.h"
#include "replay/stack_memo.h"
#include "tally/tally.h"

#define MAX_FRAMES 4096
#define MAX_INLINE 32
/* Samples repeat a few hundred return addresses: their names are kept in a direct-mapped
 * memo of 4096 slots, each holding up to 4 frames (deeper inline chains are looked up each
 * time), so a symbolizer lookup runs once per address rather than once per frame. */
#define MEMO_BITS 12
#define MEMO_FRAMES 4

struct symcache {
	const struct unw_module *mod;
	struct tally_symbolizer *s; /* NULL when the module could not be opened */
};

/* What a module address is: a PLT stub, or up to MEMO_FRAMES frames (innermost first). */
struct named {
	bool plt;
	int n; /* frames; 0 when unknown (more than MEMO_FRAMES: not kept in the memo) */
	struct tally_frame tf[MEMO_FRAMES];
};

struct memo {
	const struct unw_module *mod; /* NULL: an empty slot */
	uint64_t addr;
	struct named named;
};

struct symstack {
	struct memo *memo; /* 1 << MEMO_BITS slots */
	struct symcache *syms;
	size_t nsyms, capsyms;
	struct replay_kallsyms ksyms;
	bool ksyms_loaded;
	struct replay_sym_frame frames[MAX_FRAMES];
	size_t n;
	struct replay_stack_memo *stacks; /* NULL: every stack named anew */
	int (*fn)(const struct replay_sym_stack *st, void *arg);
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
	struct tally_symbolizer_opts o = { .sz = sizeof(o), .debug_cache = true };
	if (m->file && tally_symbolizer_open(m->file, &o, &c->s))
		err_clear();
	return c->s;
}

static struct replay_sym_frame *push(struct symstack *y, enum replay_frame_kind kind)
{
	if (y->n == MAX_FRAMES)
		return NULL;
	struct replay_sym_frame *f = &y->frames[y->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	return f;
}

static void name_of(struct symstack *y, const struct unw_frame *fr, uint64_t addr,
		    struct named *out, struct tally_frame *tf)
{
	out->plt = false;
	out->n = 0;
	if (fr->mod->elf) {
		/* PLT stubs have no symbol: a symbolizer would name the function before them. */
		struct elf_section *sec = elf_section_at(fr->mod->elf, fr->rel);
		out->plt = sec && !strncmp(sec->name, ".plt", 4);
	}
	struct tally_symbolizer *s = out->plt ? NULL : symbolizer(y, fr->mod);
	int n = s ? tally_symbolize(s, addr, tf, MAX_INLINE) : 0;
	out->n = n < 0 ? 0 : n > MAX_INLINE ? MAX_INLINE : n;
	if (out->n <= MEMO_FRAMES)
		memcpy(out->tf, tf, (size_t)out->n * sizeof(*tf));
}

/* The name of a module address, from the memo when it was seen before; frames in *tf. */
static const struct named *lookup(struct symstack *y, const struct unw_frame *fr, uint64_t addr,
				  struct tally_frame *tf, struct named *scratch, int *n)
{
	uint64_t h = (addr ^ (uint64_t)(uintptr_t)fr->mod * 0x9e3779b97f4a7c15ull) *
		     0xff51afd7ed558ccdull;
	struct memo *m = &y->memo[h >> (64 - MEMO_BITS)];
	if (m->mod == fr->mod && m->addr == addr) {
		*n = m->named.n;
		return &m->named;
	}
	name_of(y, fr, addr, scratch, tf);
	*n = scratch->n;
	if (scratch->n <= MEMO_FRAMES) {
		m->mod = fr->mod;
		m->addr = addr;
		m->named = *scratch;
		return &m->named;
	}
	return scratch;
}

/* A frame of fr's module at fr's address: the caller adds the names. */
static struct replay_sym_frame *push_native(struct symstack *y, enum replay_frame_kind kind,
					 const struct unw_frame *fr)
{
	struct replay_sym_frame *f = push(y, kind);
	if (f) {
		f->module = fr->mod ? fr->mod->path : NULL;
		f->build_id = fr->mod ? fr->mod->build_id : NULL;
		f->addr = fr->rel;
	}
	return f;
}

static void native(struct symstack *y, const struct unw_frame *fr, bool exact)
{
	struct tally_frame buf[MAX_INLINE];
	struct named scratch;
	const struct named *nm = NULL;
	int n = 0;
	/* A return address points after its call: name the call. */
	if (fr->mod && fr->rel)
		nm = lookup(y, fr, exact ? fr->rel : fr->rel - 1, buf, &scratch, &n);
	const struct tally_frame *tf = nm && n <= MEMO_FRAMES ? nm->tf : buf;
	if (nm && nm->plt) {
		struct replay_sym_frame *f = push_native(y, REPLAY_FRAME_NATIVE, fr);
		if (f)
			f->function = "[plt]";
		return;
	}
	if (n <= 0) {
		struct replay_sym_frame *f = push_native(y, REPLAY_FRAME_NATIVE, fr);
		if (f)
			f->pc = fr->pc;
		return;
	}
	for (int i = n; i > 0; i--) { /* outermost (the real function) first */
		struct replay_sym_frame *f =
			push_native(y, i == n ? REPLAY_FRAME_NATIVE : REPLAY_FRAME_INLINE, fr);
		if (!f)
			return;
		f->function = tf[i - 1].function;
		f->file = tf[i - 1].file;
		f->line = tf[i - 1].line;
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
		replay_kallsyms_load(&y->ksyms);
		y->ksyms_loaded = true;
	}
	for (uint64_t i = end; i > start; i--) {
		struct replay_sym_frame *f = push(y, REPLAY_FRAME_KERNEL);
		if (!f)
			return;
		f->pc = perf_callchain_at(ev, i - 1);
		f->function = replay_kallsyms_find(&y->ksyms, f->pc);
		f->module = "[kernel.kallsyms]";
	}
}

/* The stack's frames named into y->frames. */
static void name_stack(struct symstack *y, const struct replay_stack *st)
{
	y->n = 0;
	if (st->end != UNW_END_OUTERMOST) {
		struct replay_sym_frame *f = push(y, REPLAY_FRAME_TRUNCATED);
		f->function = "[truncated]";
	}
	for (size_t i = st->n; i > 0; i--)
		native(y, &st->frames[i - 1], i == 1);
	kernel(y, st->ev);
}

static int on_stack(const struct replay_stack *st, void *arg)
{
	struct symstack *y = arg;
	struct replay_sym_stack s = { st, NULL, 0, st->comm[0] ? st->comm : "[unknown]", 0 };
	if (y->stacks)
		s.id = replay_stack_memo_find(y->stacks, st, &s.frames, &s.n);
	if (!s.id) {
		name_stack(y, st);
		s.frames = y->frames;
		s.n = y->n;
		if (y->stacks)
			s.id = replay_stack_memo_keep(y->stacks, st, y->frames, y->n, &s.frames);
	}
	return y->fn(&s, y->arg);
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

int replay_symbolized_data(struct perf_data *d, enum unw_method method,
			int (*fn)(const struct replay_sym_stack *st, void *arg), void *arg,
			struct replay_quality *q)
{
	struct symstack *y = calloc(1, sizeof(*y));
	if (!y)
		return err_set(-ENOMEM, "out of memory");
	y->memo = sparse_map(((size_t)1 << MEMO_BITS) * sizeof(*y->memo));
	if (!y->memo) {
		free(y);
		return err_set(-ENOMEM, "out of memory");
	}
	y->fn = fn;
	y->arg = arg;
	y->stacks = replay_stack_memo_new(); /* without it (no memory), each stack is named anew */
	memset(q, 0, sizeof(*q));
	q->method = method;
	struct unw_ctx *c = NULL;
	int r = replay_unwind_data(d, method, on_stack, y, &q->info, &c);
	if (!r)
		quality(c, q);
	unw_ctx_free(c);
	for (size_t i = 0; i < y->nsyms; i++)
		if (y->syms[i].s)
			tally_symbolizer_close(y->syms[i].s);
	free(y->syms);
	sparse_unmap(y->memo, ((size_t)1 << MEMO_BITS) * sizeof(*y->memo));
	replay_kallsyms_free(&y->ksyms);
	replay_stack_memo_free(y->stacks);
	free(y);
	return r;
}
