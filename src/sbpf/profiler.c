/*
 * The run-time half of the sBPF profiler (see profiler.h): raw calling-context nodes
 * recorded from the VM hooks, then converted into a profile with source-level frames.
 */
#include "sbpf/profiler.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "profile/profile.h"
#include "sbpf/profiler_sym.h"
#include "sbpf/syscall.h"

#define NO_NODE UINT32_MAX
#define INITIAL_SPAN_MAX 256

/* A function entered from a call site, or a syscall made from one. */
struct rnode {
	uint32_t parent;		/* NO_NODE for the entrypoint's node */
	const struct sbpf_syscall *sc;	/* a syscall node; NULL for a function */
	uint64_t target;		/* entry pc of the function */
	uint64_t call_pc;		/* the call instruction in the parent */
	uint64_t cost;			/* a syscall's own CU */
	uint64_t lo, n;			/* counts[i]: instructions executed at pc lo + i */
	uint64_t *counts;
};

struct sbpf_profiler {
	const struct sbpf_program *prog;
	struct rnode *nodes;
	size_t nnodes, cap;
	uint32_t *slots; /* children index: node id + 1, open-addressed; 0 empty */
	size_t nslots;
	uint32_t cur;
	/* the current node's counts, cached for the per-instruction path */
	uint64_t *counts, lo, n;
	bool failed; /* out of memory or an unbalanced event during the run */
	struct sbpf_hooks hooks;
};

static size_t child_slot(const struct sbpf_profiler *pr, uint32_t parent, uint64_t call_pc,
			 uint64_t target, const struct sbpf_syscall *sc)
{
	uint64_t h = ((uint64_t)parent * 0x9e3779b97f4a7c15ull) ^ (call_pc * 0xc2b2ae3d27d4eb4full) ^
		     (target + (uintptr_t)sc);
	h ^= h >> 31;
	size_t i = (size_t)(h * 0x94d049bb133111ebull >> 17) & (pr->nslots - 1);
	while (pr->slots[i]) {
		const struct rnode *r = &pr->nodes[pr->slots[i] - 1];
		if (r->parent == parent && r->call_pc == call_pc && r->target == target && r->sc == sc)
			break;
		i = (i + 1) & (pr->nslots - 1);
	}
	return i;
}

static int grow_slots(struct sbpf_profiler *pr)
{
	size_t n = pr->nslots ? pr->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	free(pr->slots);
	pr->slots = s;
	pr->nslots = n;
	for (size_t id = 0; id < pr->nnodes; id++) {
		const struct rnode *r = &pr->nodes[id];
		if (r->parent != NO_NODE)
			s[child_slot(pr, r->parent, r->call_pc, r->target, r->sc)] = (uint32_t)id + 1;
	}
	return 0;
}

static void select_node(struct sbpf_profiler *pr, uint32_t id)
{
	struct rnode *r = &pr->nodes[id];
	pr->cur = id;
	pr->counts = r->counts;
	pr->lo = r->lo;
	pr->n = r->n;
}

/* A new node; a function's counts start sized to its symbol, up to INITIAL_SPAN_MAX
 * (grown on demand), so that deep trees of large functions stay small. */
static uint32_t new_node(struct sbpf_profiler *pr, uint32_t parent, uint64_t call_pc,
			 uint64_t target, const struct sbpf_syscall *sc)
{
	if (pr->nnodes == pr->cap) {
		size_t cap = pr->cap ? pr->cap * 2 : 64;
		struct rnode *v = realloc(pr->nodes, cap * sizeof(*v));
		if (!v)
			return NO_NODE;
		pr->nodes = v;
		pr->cap = cap;
	}
	struct rnode r = { .parent = parent, .sc = sc, .target = target, .call_pc = call_pc,
			   .lo = target };
	if (!sc) {
		const struct sbpf_symbol *s = sbpf_program_symbol_at(pr->prog, target);
		r.n = s && s->pc == target && s->end_pc > target ? s->end_pc - target : 16;
		if (r.n > INITIAL_SPAN_MAX) /* large functions grow as far as they run */
			r.n = INITIAL_SPAN_MAX;
		if (!(r.counts = calloc(r.n, sizeof(*r.counts))))
			return NO_NODE;
	}
	pr->nodes[pr->nnodes] = r;
	return (uint32_t)pr->nnodes++;
}

static uint32_t child(struct sbpf_profiler *pr, uint64_t call_pc, uint64_t target,
		      const struct sbpf_syscall *sc)
{
	if (2 * (pr->nnodes + 1) > pr->nslots && grow_slots(pr))
		return NO_NODE;
	size_t i = child_slot(pr, pr->cur, call_pc, target, sc);
	if (pr->slots[i])
		return pr->slots[i] - 1;
	uint32_t id = new_node(pr, pr->cur, call_pc, target, sc);
	if (id != NO_NODE)
		pr->slots[i] = id + 1;
	return id;
}

/* A pc outside the current node's array: widen it (at least doubling, so that a function
 * met without symbol sizes costs few reallocations). */
static void count_far(struct sbpf_profiler *pr, uint64_t pc)
{
	struct rnode *r = &pr->nodes[pr->cur];
	if (pr->failed || r->sc)
		return;
	uint64_t lo = pc < r->lo ? pc : r->lo;
	uint64_t hi = pc >= r->lo + r->n ? pc + 1 : r->lo + r->n;
	uint64_t grow = hi - lo < 2 * r->n ? 2 * r->n - (hi - lo) : 0;
	if (lo < r->lo)
		lo = lo > grow ? lo - grow : 0;
	else
		hi += grow;
	uint64_t *c = calloc(hi - lo, sizeof(*c));
	if (!c) {
		pr->failed = true;
		return;
	}
	memcpy(c + (r->lo - lo), r->counts, r->n * sizeof(*c));
	free(r->counts);
	r->counts = c;
	r->lo = lo;
	r->n = hi - lo;
	c[pc - lo]++;
	select_node(pr, pr->cur);
}

static void on_insns(void *ctx, const uint32_t *pcs, size_t n)
{
	struct sbpf_profiler *pr = ctx;
	uint64_t *counts = pr->counts, lo = pr->lo, len = pr->n;
	for (size_t i = 0; i < n; i++) {
		uint64_t off = pcs[i] - lo;
		if (__builtin_expect(off < len, 1)) {
			counts[off]++;
		} else {
			count_far(pr, pcs[i]);
			counts = pr->counts, lo = pr->lo, len = pr->n;
		}
	}
}

static void enter(struct sbpf_profiler *pr, uint64_t call_pc, uint64_t target,
		  const struct sbpf_syscall *sc)
{
	uint32_t id = pr->failed ? NO_NODE : child(pr, call_pc, target, sc);
	if (id == NO_NODE) {
		pr->failed = true;
		return;
	}
	select_node(pr, id);
}

static void leave(struct sbpf_profiler *pr)
{
	uint32_t parent = pr->nodes[pr->cur].parent;
	if (parent == NO_NODE)
		pr->failed = true;
	else
		select_node(pr, parent);
}

static void on_call(void *ctx, uint64_t call_pc, uint64_t target_pc, unsigned depth)
{
	(void)depth;
	enter(ctx, call_pc, target_pc, NULL);
}

static void on_return(void *ctx, uint64_t exit_pc, unsigned depth)
{
	(void)exit_pc;
	(void)depth;
	struct sbpf_profiler *pr = ctx;
	if (!pr->failed)
		leave(pr);
}

static void on_syscall_enter(void *ctx, uint64_t pc, const struct sbpf_syscall *sc)
{
	enter(ctx, pc, 0, sc);
}

/* Only the syscall's own charge: the instructions before it were reported (on_insns)
 * before the enter hook, to the caller. */
static void on_syscall_exit(void *ctx, const struct sbpf_syscall *sc, uint64_t cost)
{
	struct sbpf_profiler *pr = ctx;
	if (pr->failed)
		return;
	struct rnode *r = &pr->nodes[pr->cur];
	if (r->sc != sc) {
		pr->failed = true;
		return;
	}
	r->cost += cost;
	leave(pr);
}

int sbpf_profiler_new(const struct sbpf_program *prog, struct sbpf_profiler **out)
{
	struct sbpf_profiler *pr = calloc(1, sizeof(*pr));
	if (!pr)
		return err_set(-ENOMEM, "out of memory");
	pr->prog = prog;
	if (grow_slots(pr) || new_node(pr, NO_NODE, 0, prog->entry_pc, NULL) == NO_NODE) {
		sbpf_profiler_free(pr);
		return err_set(-ENOMEM, "out of memory");
	}
	select_node(pr, 0);
	pr->hooks = (struct sbpf_hooks){
		.ctx = pr,
		.on_insns = on_insns,
		.on_call = on_call,
		.on_return = on_return,
		.on_syscall_enter = on_syscall_enter,
		.on_syscall_exit = on_syscall_exit,
	};
	*out = pr;
	return 0;
}

void sbpf_profiler_free(struct sbpf_profiler *pr)
{
	if (!pr)
		return;
	for (size_t i = 0; i < pr->nnodes; i++)
		free(pr->nodes[i].counts);
	free(pr->nodes);
	free(pr->slots);
	free(pr);
}

const struct sbpf_hooks *sbpf_profiler_hooks(struct sbpf_profiler *pr)
{
	return &pr->hooks;
}

uint64_t sbpf_profiler_total(const struct sbpf_profiler *pr)
{
	uint64_t t = 0;
	for (size_t i = 0; i < pr->nnodes; i++) {
		const struct rnode *r = &pr->nodes[i];
		t += r->cost;
		for (uint64_t k = 0; k < r->n; k++)
			t += r->counts[k];
	}
	return t;
}

/* The profile node of raw node id's function (or syscall), below its call site's inline
 * frames in the parent's node. */
static uint32_t place(struct psym *s, const struct sbpf_profiler *pr, const uint32_t *pnode,
		      uint32_t id)
{
	const struct rnode *r = &pr->nodes[id];
	uint32_t frame = r->sc ? psym_syscall(s, r->sc->name) : psym_function(s, r->target);
	if (frame == PROF_NONE)
		return PROF_NONE;
	if (r->parent == NO_NODE)
		return prof_child(s->p, PROF_ROOT, frame, 0, 0);
	uint32_t line;
	uint32_t site = psym_inline_node(s, pnode[r->parent], r->call_pc, &line);
	if (site == PROF_NONE)
		return PROF_NONE;
	return prof_child(s->p, site, frame, psym_addr(s, r->call_pc), line);
}

static int add_costs(struct psym *s, const struct rnode *r, uint32_t node)
{
	if (r->sc) {
		int64_t w = (int64_t)r->cost;
		return r->cost ? prof_add_self(s->p, node, 0, 0, &w) : 0;
	}
	for (uint64_t k = 0; k < r->n; k++) {
		if (!r->counts[k])
			continue;
		uint32_t line;
		uint32_t at = psym_inline_node(s, node, r->lo + k, &line);
		int64_t w = (int64_t)r->counts[k];
		if (at == PROF_NONE || prof_add_self(s->p, at, psym_addr(s, r->lo + k), line, &w))
			return err_set(-ENOMEM, "out of memory building the profile");
	}
	return 0;
}

static int convert(struct sbpf_profiler *pr, struct psym *s)
{
	uint32_t *pnode = malloc(pr->nnodes * sizeof(*pnode));
	if (!pnode)
		return err_set(-ENOMEM, "out of memory");
	int rc = 0;
	/* parents have smaller ids than their children */
	for (size_t id = 0; !rc && id < pr->nnodes; id++) {
		pnode[id] = place(s, pr, pnode, (uint32_t)id);
		rc = pnode[id] == PROF_NONE ? err_set(-ENOMEM, "out of memory building the profile")
					    : add_costs(s, &pr->nodes[id], pnode[id]);
	}
	free(pnode);
	return rc;
}

static int check_total(const struct prof *p, uint64_t cu_used)
{
	int64_t total;
	prof_grand_total(p, &total);
	if ((uint64_t)total != cu_used)
		return err_set(-EPROTO,
			       "internal error: the profile holds %" PRId64 " CU but the run consumed %" PRIu64,
			       total, cu_used);
	return 0;
}

int sbpf_profiler_build(struct sbpf_profiler *pr, const char *path, uint64_t cu_used,
			struct prof **out)
{
	if (pr->failed)
		return err_set(-ENOMEM, "out of memory while profiling");
	uint64_t recorded = sbpf_profiler_total(pr);
	if (recorded != cu_used)
		return err_set(-EPROTO,
			       "internal error: the profiler recorded %" PRIu64 " CU but the run consumed %" PRIu64,
			       recorded, cu_used);
	struct prof *p;
	int rc = prof_new(&p);
	if (rc)
		return rc;
	char source[512];
	snprintf(source, sizeof(source), "sbpf: %s", path ? path : pr->prog->name);
	struct psym s;
	if ((rc = prof_add_metric(p, "cu", "count")) < 0 || (rc = prof_set_source(p, source)) ||
	    (rc = psym_init(&s, pr->prog, path, p)))
		goto fail;
	rc = convert(pr, &s);
	psym_free(&s);
	if (rc || (rc = prof_finish(p)) || (rc = check_total(p, cu_used)))
		goto fail;
	*out = p;
	return 0;
fail:
	prof_free(p);
	return rc;
}
