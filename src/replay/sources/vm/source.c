/*
 * The agent's VM frame source (vm.h): mixed mode of include/tally/agent.h.
 * An interpreter loop that uses it keeps a struct tally_agent_loop and its shadow frames in
 * its own native frame, so the stack copy of each sample holds the VM state of that very
 * instant. Each unwound frame's part of the copy, from its stack pointer to its caller's,
 * is searched for a record and its frames checked against the agent's registry
 * (record.c); the registry is tally-vm-PID-N.dump, read when a record first names it.
 * Only frames that check out replace the loop's native frame; any failure leaves that
 * frame native and is counted by reason (struct replay_vm_stats), never guessed around.
 */
#include "replay/sources/vm/vm.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/vec.h"
#include "perf/keep.h"
#include "profile/counters.h"
#include "replay/sources/jitdump/jitdump.h"
#include "replay/sources/vm/record.h"

/* The frames that replace a native frame: vm.v[first, first + n), outermost first. */
struct vm_splice {
	size_t first, n;
};

struct vm_source {
	struct perf_data *d;
	char dir[4096]; /* where the registries are: the recording's JIT directory, else /tmp */
	struct replay_vm_stats *stats; /* the caller's, or own */
	struct replay_vm_stats own;
	VEC(struct replay_vm_registry *) regs; /* each allocated apart: frames point at them */
	uint32_t pid;			       /* the sample's, for registry() */
	replay_vm_frames vm;
	VEC(struct vm_splice) splices;
	VEC(int32_t) splice_of; /* per native frame: index into splices, -1 for none */
	bool warned;
};

static int load_registry(struct vm_source *s, struct replay_vm_registry *r)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/tally-vm-%u-%u.dump", s->dir, r->pid, r->agent);
	if (replay_jitdump_read(path, &r->dump)) {
		err_clear(); /* none, or not a dump: the frames it would name are counted */
		r->dump = NULL;
		return 0;
	}
	if (r->dump->warning[0] && !s->warned) {
		fprintf(stderr, "tally: warning: %s (what came before it is used)\n",
			r->dump->warning);
		s->warned = true;
	}
	return replay_vm_registry_index(r);
}

/* replay_vm_lookup's: the registry of the sample's process and agent, loaded once. */
static int registry(void *arg, uint32_t agent, const struct replay_vm_registry **out)
{
	struct vm_source *s = arg;
	for (size_t i = 0; i < s->regs.n; i++)
		if (s->regs.v[i]->pid == s->pid && s->regs.v[i]->agent == agent) {
			*out = s->regs.v[i];
			return 0;
		}
	struct replay_vm_registry *r = calloc(1, sizeof(*r)), **slot = r ? vec_push(&s->regs) : NULL;
	if (!slot) {
		free(r);
		return err_set(-ENOMEM, "out of memory");
	}
	*slot = r;
	r->pid = s->pid;
	r->agent = agent;
	*out = r;
	return load_registry(s, r);
}

static int begin_stack(void *self, const struct replay_stack *st)
{
	struct vm_source *s = self;
	s->vm.n = s->splices.n = s->splice_of.n = 0;
	const struct perf_event_rec *ev = st->ev;
	if (!st->n || !st->frames[0].sp || !ev->stack_total)
		return 0;
	if (!vec_reserve(&s->splice_of, st->n))
		return err_set(-ENOMEM, "out of memory");
	struct replay_vm_copy c = { .base = st->frames[0].sp };
	int r = perf_sample_stack(s->d, ev, ev->stack_total, &c.data, &c.size);
	if (r)
		return r;
	s->pid = ev->pid;
	struct replay_vm_lookup lk = { registry, s };
	bool any = false;
	for (size_t i = 0; i < st->n; i++) {
		/* A frame's part: up to its caller's sp; the outermost's, to the copy's end. */
		uint64_t lo = st->frames[i].sp;
		uint64_t hi = i + 1 < st->n ? st->frames[i + 1].sp : c.base + c.size;
		size_t first = s->vm.n;
		bool found = false;
		if (lo && (r = replay_vm_scan(&c, lo, hi, &lk, s->stats, &s->vm, &found)))
			return r;
		struct vm_splice *sp = found ? vec_push(&s->splices) : NULL;
		if (found && !sp)
			return err_set(-ENOMEM, "out of memory");
		if (sp)
			*sp = (struct vm_splice){ first, s->vm.n - first };
		s->splice_of.v[s->splice_of.n++] = found ? (int32_t)s->splices.n - 1 : -1;
		any |= found;
	}
	if (any) {
		s->stats->samples++;
		s->stats->frames += s->vm.n;
	}
	return 0;
}

static int name_frame(void *self, const struct replay_stack *st, size_t i,
		      struct replay_frames *out)
{
	struct vm_source *s = self;
	if (i >= s->splice_of.n || s->splice_of.v[i] < 0)
		return 0;
	const struct vm_splice *sp = &s->splices.v[s->splice_of.v[i]];
	for (size_t k = sp->first; k < sp->first + sp->n; k++) {
		const struct replay_vm_frame *v = &s->vm.v[k];
		struct replay_sym_frame *f = replay_frames_push(out, PROF_VM);
		if (!f)
			return 1;
		const struct replay_jit_line *at =
			replay_jitdump_line(v->reg->dump, v->code, v->pc - v->code->addr);
		const struct replay_jit_line *top = replay_jitdump_line(v->reg->dump, v->code, 0);
		f->function = v->code->name;
		f->file = at ? at->file : NULL;
		f->line = at ? at->line : 0;
		f->first_line = top ? top->line : 0;
		f->addr = v->pc; /* the VM's own pc: per-pc weights in its pc space */
		f->pc = st->frames[i].pc;
	}
	return 1;
}

static void close_source(void *self)
{
	struct vm_source *s = self;
	for (size_t i = 0; i < s->regs.n; i++) {
		replay_vm_registry_free(s->regs.v[i]);
		free(s->regs.v[i]);
	}
	vec_free(&s->regs);
	vec_free(&s->vm);
	vec_free(&s->splices);
	vec_free(&s->splice_of);
	free(s);
}

/* The samples with VM frames, the frames, then the records left native by reason, those
 * that occurred; nothing before a loop record was found. */
static void counters(void *self, replay_count_fn *count, void *arg)
{
	static const struct { const char *name; size_t off; } kept[] = {
		{ PROF_COUNTER_VM_MALFORMED, offsetof(struct replay_vm_stats, malformed) },
		{ PROF_COUNTER_VM_CHANGING, offsetof(struct replay_vm_stats, changing) },
		{ PROF_COUNTER_VM_EMPTY, offsetof(struct replay_vm_stats, empty) },
		{ PROF_COUNTER_VM_TOO_DEEP, offsetof(struct replay_vm_stats, too_deep) },
		{ PROF_COUNTER_VM_UNREADABLE, offsetof(struct replay_vm_stats, unreadable) },
		{ PROF_COUNTER_VM_NO_REGISTRY, offsetof(struct replay_vm_stats, no_registry) },
		{ PROF_COUNTER_VM_UNKNOWN, offsetof(struct replay_vm_stats, unknown_function) },
		{ PROF_COUNTER_VM_PC_OUTSIDE, offsetof(struct replay_vm_stats, pc_outside) },
	};
	const struct replay_vm_stats *s = ((const struct vm_source *)self)->stats;
	if (!s->present)
		return;
	count(arg, PROF_COUNTER_VM_SAMPLES, s->samples);
	count(arg, PROF_COUNTER_VM_FRAMES, s->frames);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		uint64_t n;
		memcpy(&n, (const char *)s + kept[i].off, sizeof(n));
		if (n)
			count(arg, kept[i].name, n);
	}
}

static const struct replay_frame_source_ops vm_ops = {
	.name_frame = name_frame,
	.begin_stack = begin_stack,
	.counters = counters,
	.close = close_source,
	.per_sample = true,
};

/* Whether dir holds a registry of mixed mode. */
static bool has_registries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d)))
		found = perf_vm_registry_name(e->d_name);
	closedir(d);
	return found;
}

int replay_vm_source_new(struct perf_data *d, struct replay_vm_stats *stats,
			 struct replay_frame_source *out)
{
	*out = (struct replay_frame_source){ NULL, NULL };
	if (stats)
		memset(stats, 0, sizeof(*stats));
	char dir[4096];
	struct stat sb;
	int r = perf_jit_dir(d->path, dir, sizeof(dir));
	if (r)
		return r;
	if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
		snprintf(dir, sizeof(dir), "/tmp");
	/* Without one, nothing is spliced: stacks stay memoized (the names depend on the
	 * stack's bytes only where a record may be). */
	if (!has_registries(dir))
		return 0;
	struct vm_source *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(-ENOMEM, "out of memory");
	s->d = d;
	memcpy(s->dir, dir, sizeof(dir));
	s->stats = stats ? stats : &s->own;
	*out = (struct replay_frame_source){ &vm_ops, s };
	return 0;
}

static int open_source(struct perf_data *d, struct replay_frame_source *out)
{
	return replay_vm_source_new(d, NULL, out);
}

const struct replay_source_type replay_vm_source = { open_source };
