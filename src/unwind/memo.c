/*
 * The memo of the last walk, which lets a walk stop early. A walk is a function of the
 * registers at a frame, the stack bytes it reads from there on, and the address space: when
 * a walk reaches a frame with exactly the registers the last walk had at one of its frames
 * (same stack pointer, so the same stack), in the same unchanged space, and the bytes the
 * last walk read from there on are the same in this sample's stack copy, every frame from
 * there on is the same, and is copied. A sampler's consecutive stacks share most of their
 * frames: only the innermost few are walked.
 *
 * "The same registers" means those that decide the rest of the walk: a register a step
 * reads (the CFA's, a rule's source, the frame pointer when it is tried, the pc and the
 * stack pointer), or one it passes up unchanged (callee-saved without a rule, or a
 * same-value rule) to a step that reads it. A loop counter kept in a callee-saved register
 * differs from sample to sample and travels up every frame that leaves it alone; it does
 * not stop a match unless some step reads it.
 *
 * What a walk reads is noted as it reads: the registers at each frame, then the reads its
 * step made (address, size, value, or that the read failed), then which registers the
 * step used and passed on. unw_unwind_stack checks the reads against the new copy itself
 * (it owns the reading); this file keeps the notes.
 */
#include "unwind/unwind_internal.h"

#include <stdlib.h>
#include <string.h>

struct unw_memo {
	struct memo_walk walks[2];
	unsigned last; /* walks[last] is the last complete walk's; the other is being noted */
};

struct unw_memo *unw_memo_new(void)
{
	return calloc(1, sizeof(struct unw_memo));
}

void unw_memo_free(struct unw_memo *mo)
{
	if (!mo)
		return;
	for (int i = 0; i < 2; i++) {
		free(mo->walks[i].frames);
		free(mo->walks[i].steps);
		free(mo->walks[i].values);
		vec_free(&mo->walks[i].reads);
	}
	free(mo);
}

struct memo_walk *unw_memo_begin(struct unw_memo *mo, const struct unw_arch *a,
				 const struct unw_space *s)
{
	if (!mo)
		return NULL;
	struct memo_walk *w = &mo->walks[!mo->last];
	*w = (struct memo_walk){ .arch = a, .space = s, .stamp = s->stamp, .ok = true,
				 .frames = w->frames, .steps = w->steps, .values = w->values,
				 .cap = w->cap, .reads = { w->reads.v, 0, w->reads.cap } };
	return w;
}

static bool room_for_steps(struct memo_walk *w, size_t more)
{
	if (w->cap - w->n >= more)
		return true;
	size_t cap = w->cap ? w->cap : 64;
	while (cap - w->n < more)
		cap *= 2;
	struct unw_frame *f = realloc(w->frames, cap * sizeof(*f));
	if (f)
		w->frames = f;
	struct memo_step *s = f ? realloc(w->steps, cap * sizeof(*s)) : NULL;
	if (s)
		w->steps = s;
	uint64_t *v = s ? realloc(w->values, cap * w->arch->nregs * sizeof(*v)) : NULL;
	if (v)
		w->values = v;
	if (!v)
		return w->ok = false;
	w->cap = cap;
	return true;
}

void unw_memo_step(struct memo_walk *w, const struct unw_regs *regs, bool signal, size_t at)
{
	if (!w || !w->ok)
		return;
	w->n = at;
	if (!room_for_steps(w, 1))
		return;
	struct memo_step *s = &w->steps[at];
	s->valid = regs->valid;
	s->sp = regs->r[w->arch->sp];
	memcpy(w->values + at * w->arch->nregs, regs->r, w->arch->nregs * sizeof(*w->values));
	s->signal = signal;
	s->first_read = (uint32_t)w->reads.n;
	s->uses = s->passes = ~0ull; /* until the step says: everything */
	w->n = at + 1;
}

void unw_memo_stepped(struct memo_walk *w, uint64_t uses, uint64_t passes)
{
	if (!w || !w->ok || !w->n)
		return;
	w->steps[w->n - 1].uses = uses;
	w->steps[w->n - 1].passes = passes;
}

bool unw_memo_reads_room(struct memo_walk *w, size_t more)
{
	if (more > UINT32_MAX - w->reads.n || !vec_reserve(&w->reads, more))
		return w->ok = false;
	return true;
}

/* Whether the registers noted at step i agree with regs on those in live: the same ones
 * known, with the same values. */
static bool same_regs(const struct memo_walk *w, size_t i, const struct unw_regs *regs,
		      uint64_t live)
{
	const struct memo_step *s = &w->steps[i];
	if ((s->valid ^ regs->valid) & live)
		return false;
	const uint64_t *values = w->values + i * w->arch->nregs;
	for (uint64_t v = s->valid & live & ((1ull << w->arch->nregs) - 1); v; v &= v - 1) {
		unsigned r = (unsigned)__builtin_ctzll(v);
		if (values[r] != regs->r[r])
			return false;
	}
	return true;
}

const struct memo_walk *unw_memo_match(const struct unw_memo *mo, const struct unw_arch *a,
				       const struct unw_space *s, const struct unw_regs *regs,
				       bool signal, size_t *at)
{
	const struct memo_walk *w = mo ? &mo->walks[mo->last] : NULL;
	/* A walk that stopped at the frame limit would have gone on: not one to copy. */
	if (!w || !w->ok || w->space != s || w->stamp != s->stamp || w->end == UNW_END_DEPTH ||
	    w->n < 2)
		return NULL;
	/* Past the first frame, stack pointers rise strictly (valid_step): search them. */
	uint64_t sp = regs->r[a->sp];
	size_t lo = 1, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->steps[mid].sp < sp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == w->n || w->steps[lo].sp != sp || w->steps[lo].signal != signal ||
	    !same_regs(w, lo, regs, w->steps[lo].live))
		return NULL;
	*at = lo;
	return w;
}

size_t unw_memo_copy(const struct memo_walk *from, size_t at, struct memo_walk *to,
		     struct unw_frame *out, struct unw_stats *stats, enum unw_end *end)
{
	size_t count = from->n - at;
	memcpy(out, from->frames + at, count * sizeof(*out));
	for (size_t i = 0; i < count; i++) {
		stats->fp_steps += out[i].by_fp;
		stats->jit_cfi_steps += out[i].by_jit_cfi;
	}
	*end = from->end;
	if (!to || !to->ok)
		return count;
	/* The new walk's notes go on as the last walk's did from that frame: the frame is
	 * noted already (the same registers); its step's reads and the steps after it are
	 * the last walk's. */
	size_t first = from->steps[at].first_read, reads = from->reads.n - first;
	size_t steps = from->n - at - 1, shift = to->reads.n - first;
	to->steps[to->n - 1].uses = from->steps[at].uses;
	to->steps[to->n - 1].passes = from->steps[at].passes;
	if (!unw_memo_reads_room(to, reads) || !room_for_steps(to, steps))
		return count;
	memcpy(to->reads.v + to->reads.n, from->reads.v + first, reads * sizeof(*to->reads.v));
	to->reads.n += reads;
	memcpy(to->steps + to->n, from->steps + at + 1, steps * sizeof(*to->steps));
	size_t nregs = from->arch->nregs;
	memcpy(to->values + to->n * nregs, from->values + (at + 1) * nregs,
	       steps * nregs * sizeof(*to->values));
	for (size_t i = 0; i < steps; i++)
		to->steps[to->n + i].first_read += (uint32_t)shift;
	to->n += steps;
	return count;
}

void unw_memo_end(struct unw_memo *mo, struct memo_walk *w, const struct unw_frame *frames,
		  size_t n, enum unw_end end, bool fetch_failed)
{
	if (!w || !w->ok || fetch_failed || w->n != n)
		return; /* the last walk's notes stay */
	memcpy(w->frames, frames, n * sizeof(*frames));
	w->end = end;
	/* What each frame's walk onwards depends on: what its step used, and what it passed
	 * on that a step above used. */
	uint64_t above = 0;
	for (size_t i = n; i-- > 0;) {
		w->steps[i].live = w->steps[i].uses | (above & w->steps[i].passes);
		above = w->steps[i].live;
	}
	mo->last = !mo->last;
}
