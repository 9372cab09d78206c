/*
 * The run-time half of the sBPF profiler (see profiler.h): raw calling-context nodes
 * recorded from the VM hooks, then converted into a profile with source-level frames.
 */
#include "cuprof/profiler.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cuprof/frames.h"
#include "profile/profile.h"
#include "sbpf/syscall.h"

#define NO_NODE UINT32_MAX
#define INITIAL_SPAN_MAX 256

enum { MAX_PROGRAMS = 64, MAX_NESTING = 16 };

/* A function entered from a call site, a syscall made from one, or a program invoked by
 * a syscall (CPI). */
enum rkind { R_FUNCTION, R_SYSCALL, R_PROGRAM };
struct rnode {
	uint32_t parent;		/* NO_NODE for the entrypoint's node */
	uint8_t kind;			/* enum rkind */
	uint8_t prog;			/* index into the profiler's programs */
	const struct sbpf_syscall *sc;	/* R_SYSCALL */
	uint64_t target;		/* entry pc of the function; R_PROGRAM: 0 */
	uint64_t call_pc;		/* the call instruction in the parent */
	uint64_t cost;			/* a syscall's own CU */
	uint64_t nested;		/* a syscall: CU of the programs it invoked, so far */
	uint64_t lo, n;			/* counts[i]: instructions executed at pc lo + i */
	uint64_t *counts;
};

struct rprogram {
	const struct sbpf_program *prog;
	char *name, *path;
};

/* A program running below a syscall: where to return, what it has cost so far. */
struct nesting {
	uint32_t program_node;
	uint8_t caller_prog;
	uint64_t recorded_at_entry;
};

struct cuprof {
	struct rprogram programs[MAX_PROGRAMS];
	size_t nprograms;
	uint8_t cur_prog;
	struct nesting nest[MAX_NESTING];
	size_t nnest;
	uint64_t recorded; /* CU recorded so far */
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

/* The key of a child: (parent, call pc, kind, program, target or syscall). */
struct rkey {
	uint32_t parent;
	uint8_t kind, prog;
	uint64_t call_pc, target;
	const struct sbpf_syscall *sc;
};

static size_t child_slot(const struct cuprof *pr, const struct rkey *k)
{
	uint64_t h = ((uint64_t)k->parent * 0x9e3779b97f4a7c15ull) ^
		     (k->call_pc * 0xc2b2ae3d27d4eb4full) ^ (k->target + (uintptr_t)k->sc) ^
		     ((uint64_t)k->kind << 56 | (uint64_t)k->prog << 48);
	h ^= h >> 31;
	size_t i = (size_t)(h * 0x94d049bb133111ebull >> 17) & (pr->nslots - 1);
	while (pr->slots[i]) {
		const struct rnode *r = &pr->nodes[pr->slots[i] - 1];
		if (r->parent == k->parent && r->call_pc == k->call_pc && r->target == k->target &&
		    r->sc == k->sc && r->kind == k->kind && r->prog == k->prog)
			break;
		i = (i + 1) & (pr->nslots - 1);
	}
	return i;
}

static int grow_slots(struct cuprof *pr)
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
		struct rkey k = { r->parent, r->kind, r->prog, r->call_pc, r->target, r->sc };
		if (r->parent != NO_NODE)
			s[child_slot(pr, &k)] = (uint32_t)id + 1;
	}
	return 0;
}

static void select_node(struct cuprof *pr, uint32_t id)
{
	struct rnode *r = &pr->nodes[id];
	pr->cur = id;
	pr->counts = r->counts;
	pr->lo = r->lo;
	pr->n = r->n;
}

/* A new node; a function's counts start sized to its symbol, up to INITIAL_SPAN_MAX
 * (grown on demand), so that deep trees of large functions stay small. */
static uint32_t new_node(struct cuprof *pr, const struct rkey *k)
{
	if (pr->nnodes == pr->cap) {
		size_t cap = pr->cap ? pr->cap * 2 : 64;
		struct rnode *v = realloc(pr->nodes, cap * sizeof(*v));
		if (!v)
			return NO_NODE;
		pr->nodes = v;
		pr->cap = cap;
	}
	uint64_t target = k->target;
	struct rnode r = { .parent = k->parent, .kind = k->kind, .prog = k->prog, .sc = k->sc,
			   .target = target, .call_pc = k->call_pc, .lo = target };
	if (k->kind == R_FUNCTION) {
		const struct sbpf_symbol *s =
			sbpf_program_symbol_at(pr->programs[k->prog].prog, target);
		r.n = s && s->pc == target && s->end_pc > target ? s->end_pc - target : 16;
		if (r.n > INITIAL_SPAN_MAX) /* large functions grow as far as they run */
			r.n = INITIAL_SPAN_MAX;
		if (!(r.counts = calloc(r.n, sizeof(*r.counts))))
			return NO_NODE;
	}
	pr->nodes[pr->nnodes] = r;
	return (uint32_t)pr->nnodes++;
}

static uint32_t child(struct cuprof *pr, enum rkind kind, uint64_t call_pc,
		      uint64_t target, const struct sbpf_syscall *sc)
{
	if (2 * (pr->nnodes + 1) > pr->nslots && grow_slots(pr))
		return NO_NODE;
	struct rkey k = { pr->cur, (uint8_t)kind, pr->cur_prog, call_pc, target, sc };
	size_t i = child_slot(pr, &k);
	if (pr->slots[i])
		return pr->slots[i] - 1;
	uint32_t id = new_node(pr, &k);
	if (id != NO_NODE)
		pr->slots[i] = id + 1;
	return id;
}

/* A pc outside the current node's array: widen it (at least doubling, so that a function
 * met without symbol sizes costs few reallocations). */
static void count_far(struct cuprof *pr, uint64_t pc)
{
	struct rnode *r = &pr->nodes[pr->cur];
	if (pr->failed || r->kind != R_FUNCTION) {
		pr->failed = true; /* instructions outside any function: a hook out of order */
		return;
	}
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
	struct cuprof *pr = ctx;
	pr->recorded += n;
	uint64_t *counts = pr->counts, lo = pr->lo, len = pr->n;
	size_t i = 0;
	/* four at a time while they all fall in the current function's array */
	for (; i + 4 <= n; i += 4) {
		uint64_t o0 = pcs[i] - lo, o1 = pcs[i + 1] - lo, o2 = pcs[i + 2] - lo,
			 o3 = pcs[i + 3] - lo;
		if (__builtin_expect((o0 < len) & (o1 < len) & (o2 < len) & (o3 < len), 1)) {
			counts[o0]++;
			counts[o1]++;
			counts[o2]++;
			counts[o3]++;
			continue;
		}
		break;
	}
	for (; i < n; i++) {
		uint64_t off = pcs[i] - lo;
		if (__builtin_expect(off < len, 1)) {
			counts[off]++;
		} else {
			count_far(pr, pcs[i]);
			counts = pr->counts, lo = pr->lo, len = pr->n;
		}
	}
}

static void enter(struct cuprof *pr, enum rkind kind, uint64_t call_pc, uint64_t target,
		  const struct sbpf_syscall *sc)
{
	uint32_t id = pr->failed ? NO_NODE : child(pr, kind, call_pc, target, sc);
	if (id == NO_NODE) {
		pr->failed = true;
		return;
	}
	select_node(pr, id);
}

static void leave(struct cuprof *pr)
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
	enter(ctx, R_FUNCTION, call_pc, target_pc, NULL);
}

static void on_return(void *ctx, uint64_t exit_pc, unsigned depth)
{
	(void)exit_pc;
	(void)depth;
	struct cuprof *pr = ctx;
	if (!pr->failed)
		leave(pr);
}

static void on_syscall_enter(void *ctx, uint64_t pc, const struct sbpf_syscall *sc)
{
	enter(ctx, R_SYSCALL, pc, 0, sc);
}

/* Only the syscall's own charge: the instructions before it were reported (on_insns)
 * before the enter hook, to the caller; the CU of programs it invoked (CPI), charged to
 * the caller's meter as part of the syscall, are already in their own nodes. */
static void on_syscall_exit(void *ctx, const struct sbpf_syscall *sc, uint64_t cost)
{
	struct cuprof *pr = ctx;
	if (pr->failed)
		return;
	struct rnode *r = &pr->nodes[pr->cur];
	if (r->kind != R_SYSCALL || r->sc != sc || cost < r->nested) {
		pr->failed = true;
		return;
	}
	r->cost += cost - r->nested;
	pr->recorded += cost - r->nested;
	r->nested = 0;
	leave(pr);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int cuprof_enter_program(struct cuprof *pr, const struct sbpf_program *prog,
				const char *name, const char *path)
{
	if (pr->failed)
		return 0;
	if (pr->nodes[pr->cur].kind != R_SYSCALL || pr->nnest == MAX_NESTING)
		return err_set(-EINVAL, "a program can only be entered from a syscall (CPI), at "
					"most %d deep", MAX_NESTING);
	size_t i = 0;
	while (i < pr->nprograms && pr->programs[i].prog != prog)
		i++;
	if (i == pr->nprograms) {
		if (i == MAX_PROGRAMS)
			return err_set(-E2BIG, "more than %d programs in one profile", MAX_PROGRAMS);
		struct rprogram *rp = &pr->programs[i];
		rp->prog = prog;
		rp->name = dup_or_null(name ? name : prog->name);
		rp->path = dup_or_null(path);
		if (!rp->name || (path && !rp->path)) {
			free(rp->name);
			free(rp->path);
			return err_set(-ENOMEM, "out of memory");
		}
		pr->nprograms++;
	}
	struct nesting *n = &pr->nest[pr->nnest];
	n->caller_prog = pr->cur_prog;
	n->recorded_at_entry = pr->recorded;
	pr->cur_prog = (uint8_t)i; /* the program node and all below belong to the callee */
	enter(pr, R_PROGRAM, 0, i, NULL);
	n->program_node = pr->cur;
	enter(pr, R_FUNCTION, 0, prog->entry_pc, NULL);
	if (pr->failed)
		return err_set(-ENOMEM, "out of memory");
	pr->nnest++;
	return 0;
}

int cuprof_exit_program(struct cuprof *pr)
{
	if (pr->failed)
		return 0;
	if (!pr->nnest)
		return err_set(-EINVAL, "no program entered");
	const struct nesting *n = &pr->nest[--pr->nnest];
	/* the callee may have stopped anywhere in its call tree */
	uint32_t syscall = pr->nodes[n->program_node].parent;
	pr->cur_prog = n->caller_prog;
	select_node(pr, syscall);
	pr->nodes[syscall].nested += pr->recorded - n->recorded_at_entry;
	return 0;
}

int cuprof_new(const struct sbpf_program *prog, struct cuprof **out)
{
	struct cuprof *pr = calloc(1, sizeof(*pr));
	if (!pr)
		return err_set(-ENOMEM, "out of memory");
	pr->programs[0].prog = prog;
	pr->nprograms = 1;
	struct rkey k = { NO_NODE, R_FUNCTION, 0, 0, prog->entry_pc, NULL };
	if (grow_slots(pr) || new_node(pr, &k) == NO_NODE) {
		cuprof_free(pr);
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

void cuprof_free(struct cuprof *pr)
{
	if (!pr)
		return;
	for (size_t i = 0; i < pr->nnodes; i++)
		free(pr->nodes[i].counts);
	for (size_t i = 0; i < pr->nprograms; i++) {
		free(pr->programs[i].name);
		free(pr->programs[i].path);
	}
	free(pr->nodes);
	free(pr->slots);
	free(pr);
}

const struct sbpf_hooks *cuprof_hooks(struct cuprof *pr)
{
	return &pr->hooks;
}

/* Sums the tree itself rather than trusting the running count. */
uint64_t cuprof_total(const struct cuprof *pr)
{
	uint64_t t = 0;
	for (size_t i = 0; i < pr->nnodes; i++) {
		const struct rnode *r = &pr->nodes[i];
		t += r->cost;
		for (uint64_t k = 0; r->counts && k < r->n; k++)
			t += r->counts[k];
	}
	return t;
}

/* The profile node of raw node id's function, syscall or program, below its call site's
 * inline frames in the parent's node (a program's entry function: right below it). */
static uint32_t place(struct cuprof_frames *syms, const struct cuprof *pr, const uint32_t *pnode,
		      uint32_t id)
{
	const struct rnode *r = &pr->nodes[id];
	struct cuprof_frames *s = &syms[r->prog];
	uint32_t frame;
	if (r->kind == R_SYSCALL)
		frame = cuprof_frames_syscall(s, r->sc->name);
	else if (r->kind == R_PROGRAM)
		frame = cuprof_frames_program(s, pr->programs[r->prog].name);
	else
		frame = cuprof_frames_function(s, r->target);
	if (frame == PROF_NONE)
		return PROF_NONE;
	if (r->parent == NO_NODE)
		return prof_child(s->p, PROF_ROOT, frame, 0, 0);
	const struct rnode *up = &pr->nodes[r->parent];
	if (up->kind != R_FUNCTION)
		return prof_child(s->p, pnode[r->parent], frame, 0, 0);
	uint32_t line;
	struct cuprof_frames *ps = &syms[up->prog];
	uint32_t site = cuprof_frames_inline_node(ps, pnode[r->parent], r->call_pc, &line);
	if (site == PROF_NONE)
		return PROF_NONE;
	return prof_child(s->p, site, frame, cuprof_frames_addr(ps, r->call_pc), line);
}

static int add_costs(struct cuprof_frames *s, const struct rnode *r, uint32_t node)
{
	if (r->kind != R_FUNCTION) {
		int64_t w = (int64_t)r->cost;
		return r->cost ? prof_add_self(s->p, node, 0, 0, &w) : 0;
	}
	for (uint64_t k = 0; k < r->n; k++) {
		if (!r->counts[k])
			continue;
		uint32_t line;
		uint32_t at = cuprof_frames_inline_node(s, node, r->lo + k, &line);
		int64_t w = (int64_t)r->counts[k];
		if (at == PROF_NONE || prof_add_self(s->p, at, cuprof_frames_addr(s, r->lo + k), line, &w))
			return err_set(-ENOMEM, "out of memory building the profile");
	}
	return 0;
}

static int convert(struct cuprof *pr, struct cuprof_frames *syms)
{
	uint32_t *pnode = malloc(pr->nnodes * sizeof(*pnode));
	if (!pnode)
		return err_set(-ENOMEM, "out of memory");
	int rc = 0;
	/* parents have smaller ids than their children */
	for (size_t id = 0; !rc && id < pr->nnodes; id++) {
		const struct rnode *r = &pr->nodes[id];
		pnode[id] = place(syms, pr, pnode, (uint32_t)id);
		rc = pnode[id] == PROF_NONE ? err_set(-ENOMEM, "out of memory building the profile")
					    : add_costs(&syms[r->prog], r, pnode[id]);
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

int cuprof_build(struct cuprof *pr, const char *path, uint64_t cu_used,
			struct prof **out)
{
	if (pr->failed)
		return err_set(-ENOMEM, "out of memory while profiling");
	uint64_t recorded = cuprof_total(pr);
	if (recorded != cu_used)
		return err_set(-EPROTO,
			       "internal error: the profiler recorded %" PRIu64 " CU but the run consumed %" PRIu64,
			       recorded, cu_used);
	struct prof *p;
	int rc = prof_new(&p);
	if (rc)
		return rc;
	char source[512];
	snprintf(source, sizeof(source), "sbpf: %s", path ? path : pr->programs[0].prog->name);
	struct cuprof_frames syms[MAX_PROGRAMS];
	size_t nsyms = 0;
	if ((rc = prof_add_metric(p, "cu", "count")) < 0 || (rc = prof_set_source(p, source)))
		goto fail;
	for (; nsyms < pr->nprograms; nsyms++) {
		const struct rprogram *rp = &pr->programs[nsyms];
		if ((rc = cuprof_frames_init(&syms[nsyms], rp->prog, nsyms ? rp->path : path, p)))
			break;
	}
	if (!rc)
		rc = convert(pr, syms);
	while (nsyms-- > 0)
		cuprof_frames_free(&syms[nsyms]);
	if (rc || (rc = prof_finish(p)) || (rc = check_total(p, cu_used)))
		goto fail;
	*out = p;
	return 0;
fail:
	prof_free(p);
	return rc;
}
