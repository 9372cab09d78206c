/*
 * The run-time half of the CU profiler (see profiler.h): the VM's hooks become events of
 * profile's calling-context builder (prof_cct), keyed by what the VM knows (entry pcs,
 * syscall hashes, program indexes); after the run, frames.c turns each key into frames.
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

#define INITIAL_SPAN_MAX 256

enum { MAX_PROGRAMS = 64, MAX_NESTING = 16, MAX_BUILTINS = 8 };

/* A builder node is a function entered from a call site, a syscall made from one, or a
 * program invoked by a syscall (CPI): an sBPF program or a builtin. Its key: the kind, the
 * program it runs in (a builtin's: its caller's), and the function's entry pc, the pc of
 * the syscall's call (which always calls the same one), the program's index or the
 * builtin's (VM pcs fit in the low 48 bits). */
enum rkind { R_FUNCTION, R_SYSCALL, R_PROGRAM, R_BUILTIN };
#define VALUE_MASK ((1ull << 48) - 1)

static uint64_t key_of(enum rkind kind, uint8_t prog, uint64_t value)
{
	return (uint64_t)kind << 56 | (uint64_t)prog << 48 | (value & VALUE_MASK);
}

static enum rkind kind_of(uint64_t key)
{
	return (enum rkind)(key >> 56);
}

static uint8_t prog_of(uint64_t key)
{
	return (uint8_t)(key >> 48);
}

struct rprogram {
	const struct sbpf_program *prog;
	char *name, *path;
};

/* A program running below a syscall: where to return, what it has cost so far. */
struct nesting {
	uint32_t syscall_node;
	uint8_t caller_prog;
	uint64_t recorded_at_entry;
};

struct cuprof {
	struct prof_cct *cct;
	struct rprogram programs[MAX_PROGRAMS];
	size_t nprograms;
	char *builtins[MAX_BUILTINS]; /* the builtins' names */
	size_t nbuiltins;
	uint8_t cur_prog;
	struct nesting nest[MAX_NESTING];
	size_t nnest;
	/* per nesting level: CU of the programs the open syscall invoked, so far */
	uint64_t nested[MAX_NESTING + 1];
	uint64_t recorded; /* CU recorded so far */
	bool failed; /* out of memory or an unbalanced event during the run */
	/* the syscall whose start the trace reported and whose node is not entered yet (it
	 * is only when the syscall runs a program) */
	bool sc_pending;
	uint32_t sc_pc;
	struct sbpf_hooks hooks;
	struct sbpf_trace trace; /* shared by the VMs of a run and those its syscalls run */
};

/* A function's pc array starts sized to its symbol, up to INITIAL_SPAN_MAX (grown on
 * demand), so that deep trees of large functions stay small. */
static uint64_t initial_span(const struct cuprof *pr, uint64_t target)
{
	const struct sbpf_symbol *s = sbpf_program_symbol_at(pr->programs[pr->cur_prog].prog, target);
	uint64_t n = s && s->pc == target && s->end_pc > target ? s->end_pc - target : 16;
	return n > INITIAL_SPAN_MAX ? INITIAL_SPAN_MAX : n;
}

static void enter(struct cuprof *pr, enum rkind kind, uint64_t call_pc, uint64_t value)
{
	if (pr->failed)
		return;
	int rc = prof_cct_enter(pr->cct, key_of(kind, pr->cur_prog, value), call_pc);
	if (rc == 1 && kind == R_FUNCTION)
		rc = prof_cct_span(pr->cct, value, initial_span(pr, value));
	if (rc < 0)
		pr->failed = true;
}

/* The VM reports the entrypoint's end as the run's end, never as a return. */
static void leave(struct cuprof *pr)
{
	if (prof_cct_exit(pr->cct) || prof_cct_current(pr->cct) == PROF_CCT_ROOT)
		pr->failed = true;
}

static void on_call(void *ctx, uint64_t call_pc, uint64_t target_pc, unsigned depth)
{
	(void)depth;
	enter(ctx, R_FUNCTION, call_pc, target_pc);
}

static void on_return(void *ctx, uint64_t exit_pc, unsigned depth)
{
	(void)exit_pc;
	(void)depth;
	struct cuprof *pr = ctx;
	if (!pr->failed)
		leave(pr);
}

/* A syscall that ran no program: a leaf of the current node, made and charged at once. */
static void charge_leaf(struct cuprof *pr, uint32_t pc, uint64_t cost)
{
	if (prof_cct_child_cost(pr->cct, key_of(R_SYSCALL, pr->cur_prog, pc), pc, 0, cost) < 0)
		pr->failed = true;
}

/* A syscall's own cost, in its node: entered already when it ran a program (CPI), else a
 * leaf. The instructions before it were counted to the caller; the CU of programs it
 * invoked, charged to the caller's meter as part of the syscall, are already in their own
 * nodes. */
static void syscall_end(struct cuprof *pr, uint64_t cost)
{
	if (pr->failed)
		return;
	if (pr->sc_pending) {
		pr->sc_pending = false;
		charge_leaf(pr, pr->sc_pc, cost);
		pr->recorded += cost;
		return;
	}
	uint64_t key = prof_cct_key(pr->cct), nested = pr->nested[pr->nnest];
	if (kind_of(key) != R_SYSCALL || prog_of(key) != pr->cur_prog || cost < nested ||
	    prof_cct_cost(pr->cct, 0, cost - nested)) {
		pr->failed = true;
		return;
	}
	pr->recorded += cost - nested;
	leave(pr);
}

/* The costs of syscalls that ran no program, summed while they come from one pc (a loop
 * around a syscall) and charged when another comes, the current node may change or the
 * report ends, so that each costs an add. Leaves are still made in the order they first come (a node's
 * id decides its place in the profile). at is the entries' n: SBPF_RUN_SYSCALL | (pc + 1),
 * never UINT32_MAX. */
#define NO_LEAF UINT32_MAX
struct leaf_sum {
	uint32_t at;
	uint64_t cost;
};

static void settle_leaf(struct cuprof *pr, struct leaf_sum *l)
{
	if (l->at != NO_LEAF)
		charge_leaf(pr, (l->at & ~SBPF_RUN_SYSCALL) - 1, l->cost);
	*l = (struct leaf_sum){ NO_LEAF, 0 };
}

/* An entry of the trace that is neither a run nor a syscall's cost right after its start
 * (vm.h): a syscall's start, or its end (r its first entry). Returns the entry after it. */
static const struct sbpf_insn_run *syscall_entry(struct cuprof *pr, const struct sbpf_insn_run *r,
						 const struct sbpf_insn_run *end)
{
	struct sbpf_insn_run e = *r++;
	if (e.n == SBPF_RUN_SYSCALL) {
		pr->sc_pending = true;
		pr->sc_pc = e.lo;
	} else if (e.lo != UINT32_MAX) {
		syscall_end(pr, e.lo);
	} else if (r < end) {
		syscall_end(pr, r->lo | (uint64_t)r->n << 32);
		r++;
	} else {
		pr->failed = true;
	}
	return r;
}

/* The VM's trace (vm.h): runs of instructions, counted in the current node, and syscalls.
 * What is recorded is summed in a local: the per-instruction path stores nothing of its
 * own. lo is read after the branch: read with n before it, GCC (12) added two moves to
 * the run path (2 Ir a run in bench/sbpf's arith). */
static void on_insns(void *ctx, const struct sbpf_insn_run *runs, size_t nruns)
{
	struct cuprof *pr = ctx;
	struct prof_cct *cct = pr->cct;
	uint64_t recorded = 0;
	struct leaf_sum leaf = { NO_LEAF, 0 };
	const struct sbpf_insn_run *r = runs, *end = runs + nruns;
	for (; r < end; r++) {
		uint32_t n = r->n;
		if (__builtin_expect(n - 1 < SBPF_RUN_SYSCALL - 1, 1)) {
			recorded += n;
			prof_cct_count_run(cct, r->lo, n);
		} else if (__builtin_expect(n > SBPF_RUN_SYSCALL, 1)) {
			if (n != leaf.at) {
				settle_leaf(pr, &leaf);
				leaf.at = n;
			}
			leaf.cost += r->lo;
			recorded += r->lo;
		} else {
			settle_leaf(pr, &leaf);
			r = syscall_entry(pr, r, end) - 1;
		}
	}
	settle_leaf(pr, &leaf);
	pr->recorded += recorded;
}

/* What the VMs recorded and have not reported, for a program to start or stop in order. */
static void report_trace(struct cuprof *pr)
{
	on_insns(pr, pr->trace.v, pr->trace.n);
	pr->trace.n = 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Enters the syscall that invokes a program, whose start the trace reported. 1 when the
 * profiler failed already (nothing more to record), 0, or negative (message set). */
static int enter_invoking_syscall(struct cuprof *pr)
{
	report_trace(pr);
	if (pr->sc_pending) {
		pr->sc_pending = false;
		pr->nested[pr->nnest] = 0;
		enter(pr, R_SYSCALL, pr->sc_pc, pr->sc_pc);
	}
	if (pr->failed)
		return 1;
	if (kind_of(prof_cct_key(pr->cct)) != R_SYSCALL || pr->nnest == MAX_NESTING)
		return err_set(-EINVAL, "a program can only be entered from a syscall (CPI), at "
					"most %d deep", MAX_NESTING);
	return 0;
}

int cuprof_enter_program(struct cuprof *pr, const struct sbpf_program *prog,
			 const char *name, const char *path)
{
	int rc = enter_invoking_syscall(pr);
	if (rc)
		return rc < 0 ? rc : 0;
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
	n->syscall_node = prof_cct_current(pr->cct);
	pr->cur_prog = (uint8_t)i; /* the program node and all below belong to the callee */
	enter(pr, R_PROGRAM, 0, i);
	enter(pr, R_FUNCTION, 0, prog->entry_pc);
	if (pr->failed)
		return err_set(-ENOMEM, "out of memory");
	pr->nnest++;
	return 0;
}

int cuprof_builtin(struct cuprof *pr, const char *name, uint64_t cu)
{
	int rc = enter_invoking_syscall(pr);
	if (rc)
		return rc < 0 ? rc : 0;
	size_t i = 0;
	while (i < pr->nbuiltins && strcmp(pr->builtins[i], name))
		i++;
	if (i == pr->nbuiltins) {
		if (i == MAX_BUILTINS)
			return err_set(-E2BIG, "more than %d builtins in one profile", MAX_BUILTINS);
		if (!(pr->builtins[i] = strdup(name)))
			return err_set(-ENOMEM, "out of memory");
		pr->nbuiltins++;
	}
	if (prof_cct_child_cost(pr->cct, key_of(R_BUILTIN, pr->cur_prog, i), 0, 0, cu) < 0)
		return err_set(-ENOMEM, "out of memory");
	/* the invoking syscall's cost includes it, as it includes an invoked program's CU */
	pr->nested[pr->nnest] += cu;
	pr->recorded += cu;
	return 0;
}

int cuprof_exit_program(struct cuprof *pr)
{
	report_trace(pr);
	if (pr->failed)
		return 0;
	if (!pr->nnest)
		return err_set(-EINVAL, "no program entered");
	const struct nesting *n = &pr->nest[--pr->nnest];
	/* the callee may have stopped anywhere in its call tree */
	prof_cct_resume(pr->cct, n->syscall_node);
	pr->cur_prog = n->caller_prog;
	pr->nested[pr->nnest] += pr->recorded - n->recorded_at_entry;
	return 0;
}

int cuprof_new(const struct sbpf_program *prog, struct cuprof **out)
{
	struct cuprof *pr = calloc(1, sizeof(*pr));
	if (!pr)
		return err_set(-ENOMEM, "out of memory");
	pr->programs[0].prog = prog;
	pr->nprograms = 1;
	if (!prof_cct_new(&pr->cct))
		enter(pr, R_FUNCTION, 0, prog->entry_pc);
	if (!pr->cct || pr->failed) {
		cuprof_free(pr);
		return err_set(-ENOMEM, "out of memory");
	}
	pr->hooks = (struct sbpf_hooks){
		.ctx = pr,
		.on_insns = on_insns,
		.on_call = on_call,
		.on_return = on_return,
		.trace = &pr->trace,
	};
	*out = pr;
	return 0;
}

void cuprof_free(struct cuprof *pr)
{
	if (!pr)
		return;
	for (size_t i = 0; i < pr->nprograms; i++) {
		free(pr->programs[i].name);
		free(pr->programs[i].path);
	}
	for (size_t i = 0; i < pr->nbuiltins; i++)
		free(pr->builtins[i]);
	prof_cct_free(pr->cct);
	free(pr);
}

const struct sbpf_hooks *cuprof_hooks(struct cuprof *pr)
{
	return &pr->hooks;
}

/* Sums the tree itself rather than trusting the running count. */
uint64_t cuprof_total(const struct cuprof *pr)
{
	return prof_cct_total(pr->cct);
}

/* The frames of each program, for placing the builder's nodes. */
struct placing {
	const struct cuprof *pr;
	struct cuprof_frames *syms;
};

static uint32_t frame_of(const struct placing *pl, uint64_t key)
{
	const struct rprogram *rp = &pl->pr->programs[prog_of(key)];
	struct cuprof_frames *s = &pl->syms[prog_of(key)];
	if (kind_of(key) == R_PROGRAM)
		return cuprof_frames_program(s, rp->name);
	if (kind_of(key) == R_BUILTIN)
		return cuprof_frames_program(s, pl->pr->builtins[key & VALUE_MASK]);
	if (kind_of(key) == R_FUNCTION)
		return cuprof_frames_function(s, key & VALUE_MASK);
	const struct sbpf_syscall *sc = sbpf_program_syscall_at(rp->prog, key & VALUE_MASK);
	return sc ? cuprof_frames_syscall(s, sc->name) : PROF_NONE;
}

/* A node's function, syscall or program, below its call site's inline frames in the
 * parent's node (a program's entry function: right below it). */
static uint32_t place_node(void *ctx, struct prof *p, uint32_t parent, uint64_t parent_key,
			   uint64_t key, uint64_t call_pc)
{
	const struct placing *pl = ctx;
	uint32_t frame = frame_of(pl, key);
	if (frame == PROF_NONE)
		return PROF_NONE;
	if (parent_key == PROF_CCT_NO_KEY || kind_of(parent_key) != R_FUNCTION)
		return prof_child(p, parent, frame, 0, 0);
	uint32_t line;
	struct cuprof_frames *ps = &pl->syms[prog_of(parent_key)];
	uint32_t site = cuprof_frames_inline_node(ps, parent, call_pc, &line);
	if (site == PROF_NONE)
		return PROF_NONE;
	return prof_child(p, site, frame, cuprof_frames_addr(ps, call_pc), line);
}

/* A function's CU at a pc lands in the innermost inline frame there; a syscall's or a
 * program's own CU (at pc 0) on its node. */
static uint32_t place_pc(void *ctx, struct prof *p, uint32_t node, uint64_t key, uint64_t pc,
			 uint64_t *addr, uint32_t *line)
{
	(void)p;
	const struct placing *pl = ctx;
	if (kind_of(key) != R_FUNCTION) {
		*addr = 0;
		*line = 0;
		return node;
	}
	struct cuprof_frames *s = &pl->syms[prog_of(key)];
	*addr = cuprof_frames_addr(s, pc);
	return cuprof_frames_inline_node(s, node, pc, line);
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
	if (pr->failed || !prof_cct_ok(pr->cct))
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
	int metric = rc = prof_add_metric(p, "cu", "count");
	if (rc < 0 || (rc = prof_set_source(p, source)))
		goto fail;
	for (; nsyms < pr->nprograms; nsyms++) {
		const struct rprogram *rp = &pr->programs[nsyms];
		if ((rc = cuprof_frames_init(&syms[nsyms], rp->prog, nsyms ? rp->path : path, p)))
			break;
	}
	struct placing pl = { pr, syms };
	struct prof_cct_place place = { &pl, place_node, place_pc };
	if (!rc)
		rc = prof_cct_build(pr->cct, p, metric, &place);
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
