/*
 * The agent's VM frame source (replay.h, frame sources): mixed mode of include/tally/agent.h.
 * An interpreter loop that uses it keeps a struct tally_agent_loop and its shadow frames in
 * its own native frame, so the stack copy of each sample holds the VM state of that very
 * instant. Each unwound frame's part of the copy, from its stack pointer to its caller's,
 * is searched for the record (magic, then its own address, then the layout version); the
 * frames it points to are read from the same copy and each is checked against the agent's
 * registry (tally-vm-PID-N.dump, a jitdump in the VM's pc space: replay/jitdump.h): the
 * function must be registered and the pc in it (the published pc for the innermost, the
 * call site the frame above was pushed with for the others). Only then do the VM frames
 * replace the loop's native frame; any failure leaves that frame native and is counted by
 * reason (struct replay_vm_stats), never guessed around.
 */
#include "replay/replay.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/vec.h"
#include "replay/jitdump.h"
#include "tally/agent.h"

#define LOOP_SIZE sizeof(struct tally_agent_loop)
#define VM_FRAME_SIZE sizeof(struct tally_agent_frame)

/* A function of a registry, by id (the dump's code_index). */
struct vm_fn {
	uint64_t id;
	const struct replay_jit_code *code;
};

/* One agent's registry in one process; dump NULL when it has none. */
struct vm_registry {
	uint32_t pid, agent;
	struct replay_jitdump *dump;
	struct vm_fn *fns; /* sorted by id; a later load of an id wins */
	size_t nfns;
};

/* A VM frame of the sample being named. */
struct vm_frame {
	const struct vm_registry *reg;
	const struct replay_jit_code *code;
	uint64_t pc;
};

/* The frames that replace native frame i: vm.v[first, first + n), outermost first. */
struct vm_splice {
	size_t first, n;
};

struct vm_source {
	struct perf_data *d;
	char dir[4096]; /* where the registries are: the recording's JIT directory, else /tmp */
	struct replay_vm_stats *stats;
	VEC(struct vm_registry *) regs; /* each allocated apart: frames point at them */
	VEC(struct vm_frame) vm;
	VEC(struct vm_splice) splices;
	VEC(int32_t) splice_of; /* per native frame: index into splices, -1 for none */
	bool warned;
};

static int by_id(const void *a, const void *b)
{
	const struct vm_fn *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code; /* file order: the later last */
}

static int load_registry(struct vm_source *s, struct vm_registry *r)
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
	r->nfns = r->dump->ncodes;
	if (!(r->fns = calloc(r->nfns ? r->nfns : 1, sizeof(*r->fns))))
		return err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nfns; i++)
		r->fns[i] = (struct vm_fn){ r->dump->codes[i].index, &r->dump->codes[i] };
	qsort(r->fns, r->nfns, sizeof(*r->fns), by_id);
	return 0;
}

static int registry_of(struct vm_source *s, uint32_t pid, uint32_t agent,
		       const struct vm_registry **out)
{
	for (size_t i = 0; i < s->regs.n; i++)
		if (s->regs.v[i]->pid == pid && s->regs.v[i]->agent == agent) {
			*out = s->regs.v[i];
			return 0;
		}
	struct vm_registry *r = calloc(1, sizeof(*r)), **slot = r ? vec_push(&s->regs) : NULL;
	if (!slot) {
		free(r);
		return err_set(-ENOMEM, "out of memory");
	}
	*slot = r;
	r->pid = pid;
	r->agent = agent;
	*out = r;
	return load_registry(s, r);
}

static const struct replay_jit_code *fn_of(const struct vm_registry *r, uint64_t id)
{
	size_t lo = 0, hi = r->nfns;
	while (lo < hi) { /* the last entry of id */
		size_t mid = lo + (hi - lo) / 2;
		if (r->fns[mid].id <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && r->fns[lo - 1].id == id ? r->fns[lo - 1].code : NULL;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The stack copy of a sample, as the replay holds it. */
struct copy {
	const uint8_t *data;
	uint64_t base, size; /* data[0] is at address base */
};

static bool copy_holds(const struct copy *c, uint64_t addr, uint64_t len)
{
	return addr >= c->base && addr - c->base <= c->size && len <= c->size - (addr - c->base);
}

/* The VM frames of the record at addr (magic matched), appended to s->vm when every one
 * checks out: 1; 0 when it is no record or fails (counted); negative on error. */
static int read_record(struct vm_source *s, const struct copy *c, uint64_t addr, uint32_t pid)
{
	struct replay_vm_stats *st = s->stats;
	struct tally_agent_loop rec;
	memcpy(&rec, c->data + (addr - c->base), LOOP_SIZE);
	if (rec.self != addr)
		return 0; /* a copy of a record's bytes, or a chance match */
	if (rec.version != TALLY_AGENT_LOOP_VERSION) {
		st->malformed++;
		return 0;
	}
	const struct tally_agent_thread *t = &rec.state;
	uint64_t frames = (uint64_t)(uintptr_t)t->frames;
	if (t->seq & 1) {
		st->changing++;
		return 0;
	}
	if (!t->depth) {
		st->empty++;
		return 0;
	}
	if (t->depth > t->max_depth) {
		st->too_deep++;
		return 0;
	}
	if (!copy_holds(c, frames, (uint64_t)t->depth * VM_FRAME_SIZE)) {
		st->unreadable++;
		return 0;
	}
	const struct vm_registry *reg = NULL;
	int r = registry_of(s, pid, rec.agent, &reg);
	if (r)
		return r;
	if (!reg->dump) {
		st->no_registry++;
		return 0;
	}
	size_t first = s->vm.n;
	if (!vec_reserve(&s->vm, t->depth))
		return err_set(-ENOMEM, "out of memory");
	for (uint32_t k = 0; k < t->depth; k++) {
		struct tally_agent_frame f, next;
		memcpy(&f, c->data + (frames - c->base) + k * VM_FRAME_SIZE, VM_FRAME_SIZE);
		uint64_t pc = t->pc;
		if (k + 1 < t->depth) {
			memcpy(&next, c->data + (frames - c->base) + (k + 1) * VM_FRAME_SIZE,
			       VM_FRAME_SIZE);
			pc = next.call_pc;
		}
		const struct replay_jit_code *code = fn_of(reg, f.function);
		bool in = code && pc >= code->addr && pc - code->addr < code->size;
		if (!in) {
			s->vm.n = first;
			code ? st->pc_outside++ : st->unknown_function++;
			return 0;
		}
		s->vm.v[s->vm.n++] = (struct vm_frame){ reg, code, pc };
	}
	return 1;
}

/* Searches native frame i's part of the copy, [its sp, its caller's sp), for a record. */
static int scan_frame(struct vm_source *s, const struct replay_stack *st, const struct copy *c,
		      size_t i, bool *found)
{
	*found = false;
	uint64_t lo = st->frames[i].sp, hi = i + 1 < st->n ? st->frames[i + 1].sp : c->base + c->size;
	if (!lo || lo < c->base || hi < lo)
		return 0;
	if (hi - c->base > c->size)
		hi = c->base + c->size;
	for (uint64_t a = (lo + 7) & ~7ull; a + LOOP_SIZE <= hi; a += 8) {
		if (u64_at(c->data + (a - c->base)) != TALLY_AGENT_LOOP_MAGIC)
			continue;
		size_t first = s->vm.n;
		int r = read_record(s, c, a, st->ev->pid);
		if (r < 0)
			return r;
		if (r) {
			struct vm_splice *sp = vec_push(&s->splices);
			if (!sp)
				return err_set(-ENOMEM, "out of memory");
			*sp = (struct vm_splice){ first, s->vm.n - first };
			*found = true;
			return 0;
		}
	}
	return 0;
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
	struct copy c = { .base = st->frames[0].sp };
	int r = perf_sample_stack(s->d, ev, ev->stack_total, &c.data, &c.size);
	if (r)
		return r;
	bool any = false;
	for (size_t i = 0; i < st->n; i++) {
		bool found;
		if ((r = scan_frame(s, st, &c, i, &found)))
			return r;
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
		const struct vm_frame *v = &s->vm.v[k];
		struct replay_sym_frame *f = replay_frames_push(out, REPLAY_FRAME_VM);
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
		replay_jitdump_free(s->regs.v[i]->dump);
		free(s->regs.v[i]->fns);
		free(s->regs.v[i]);
	}
	vec_free(&s->regs);
	vec_free(&s->vm);
	vec_free(&s->splices);
	vec_free(&s->splice_of);
	free(s);
}

static const struct replay_frame_source_ops vm_ops = {
	.name_frame = name_frame,
	.begin_stack = begin_stack,
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
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		found = !strncmp(e->d_name, "tally-vm-", 9) && n > 14 &&
			!strcmp(e->d_name + n - 5, ".dump");
	}
	closedir(d);
	return found;
}

int replay_vm_source_new(struct perf_data *d, struct replay_vm_stats *stats,
			 struct replay_frame_source *out)
{
	*out = (struct replay_frame_source){ NULL, NULL };
	memset(stats, 0, sizeof(*stats));
	char dir[4096];
	struct stat sb;
	int r = replay_jit_dir(d->path, dir, sizeof(dir));
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
	s->stats = stats;
	stats->present = true;
	*out = (struct replay_frame_source){ &vm_ops, s };
	return 0;
}
