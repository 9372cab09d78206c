/*
 * The Ruby frame source (ruby.h). Each stack record waits on its thread until that
 * thread's next sample (same time: the sampler writes the records just before the
 * sample), which takes it. Ruby frames come in groups, each from a frame entered from C
 * (VM_FRAME_FLAG_FINISH) inwards, and each group is run by one rb_vm_exec activation:
 * group k, counted from the innermost, goes in place of activation k. The activation's
 * native frame becomes the group's iseq frames; the frame inside it (vm_exec_core, static,
 * unnamed in a stripped libruby) and the VM's dispatch frames up to the native frame of
 * the C method the group's innermost iseq frame called are dropped, and that C method
 * becomes a Ruby frame under its native frames. Where the two do not agree, or a name is
 * unknown, nothing is guessed: the sample keeps its native frames, counted by reason.
 */
#include "replay/sources/ruby/ruby.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "profile/counters.h"
#include "replay/sources/ruby/payload.h"
#include "replay/sources/ruby/vm.h"
#include "ruby/lines.h"

#define READ_FAILED_NAME "[read failed]"

/* An iseq's or a C method entry's record, as of its last. Strings and tables live in the
 * source's arena until it is closed. */
struct name {
	uint32_t pid, epoch;
	uint64_t addr;
	const char *label, *path;
	int32_t first_lineno;
	uint32_t nlines;
	const uint32_t *pos;
	const int32_t *line;
	uint64_t func; /* a C method's function; 0 for an iseq */
};

struct proc {
	uint32_t pid, epoch;
};

struct thread {
	uint32_t pid;
	bool pending;
	uint16_t flags;
	uint64_t time;
	VEC(struct perf_rb_frame) frames;
};

/* What becomes of native frame i of the sample being named. */
enum plan { KEEP = 0, DROP, GROUP };

/* A group spliced at one native frame: Ruby frames [inner, outer] of the sample, and the C
 * method frame (index, or -1) above them. */
struct splice {
	uint32_t inner, outer;
	int32_t cfunc;
};

struct ruby_source {
	const char *path;
	struct replay_ruby_stats *stats, own;
	struct arena strings;
	VEC(struct name) names;
	uint32_t *slots; /* open addressing over names: index + 1, 0 empty */
	size_t nslots;
	VEC(struct proc) procs;
	struct idmap proc_index, thread_index;
	VEC(struct thread) threads;
	struct replay_rb_vm_index vm;
	bool warned, any_record;
	/* The sample being named */
	VEC(struct perf_rb_frame) frames;
	uint16_t flags;
	VEC(const struct name *) frame_names;
	VEC(size_t) acts;
	VEC(uint8_t) plan;
	VEC(int32_t) splice_of;
	VEC(struct splice) splices;
};

static uint64_t name_hash(uint32_t pid, uint32_t epoch, uint64_t addr)
{
	return ((addr >> 3) ^ ((uint64_t)pid << 32 | epoch)) * 0x9e3779b97f4a7c15ull;
}

static uint32_t *name_slot(struct ruby_source *y, uint32_t pid, uint32_t epoch, uint64_t addr)
{
	size_t mask = y->nslots - 1;
	for (size_t i = name_hash(pid, epoch, addr) >> 20 & mask;; i = (i + 1) & mask) {
		uint32_t *s = &y->slots[i];
		const struct name *c = *s ? &y->names.v[*s - 1] : NULL;
		if (!c || (c->pid == pid && c->epoch == epoch && c->addr == addr))
			return s;
	}
}

static int grow_slots(struct ruby_source *y)
{
	size_t n = y->nslots ? y->nslots * 2 : 1024, nold = y->nslots;
	uint32_t *old = y->slots;
	if (!(y->slots = calloc(n, sizeof(*y->slots)))) {
		y->slots = old;
		return -ENOMEM;
	}
	y->nslots = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i]) {
			const struct name *c = &y->names.v[old[i] - 1];
			*name_slot(y, c->pid, c->epoch, c->addr) = old[i];
		}
	free(old);
	return 0;
}

static struct proc *proc_of(struct ruby_source *y, uint32_t pid)
{
	uint32_t i = idmap_get(&y->proc_index, pid);
	if (i != IDMAP_NONE)
		return &y->procs.v[i];
	if (!vec_reserve(&y->procs, 1) || idmap_put(&y->proc_index, pid, (uint32_t)y->procs.n))
		return NULL;
	struct proc *p = vec_push(&y->procs);
	p->pid = pid;
	return p;
}

static struct thread *thread_of(struct ruby_source *y, uint32_t tid, bool make)
{
	uint32_t i = idmap_get(&y->thread_index, tid);
	if (i != IDMAP_NONE)
		return &y->threads.v[i];
	if (!make || !vec_reserve(&y->threads, 1) ||
	    idmap_put(&y->thread_index, tid, (uint32_t)y->threads.n))
		return NULL;
	return vec_push(&y->threads);
}

static const struct name *name_of(struct ruby_source *y, uint32_t pid, uint64_t addr)
{
	uint32_t i = idmap_get(&y->proc_index, pid);
	if (i == IDMAP_NONE || !y->nslots)
		return NULL;
	uint32_t s = *name_slot(y, pid, y->procs.v[i].epoch, addr);
	return s ? &y->names.v[s - 1] : NULL;
}

static const char *string(struct ruby_source *y, const char *s, size_t n, bool failed)
{
	return failed && !n ? READ_FAILED_NAME : arena_strndup(&y->strings, s, n);
}

static int add_name(struct ruby_source *y, const struct replay_rb_payload *pl)
{
	struct proc *p = proc_of(y, pl->pid);
	if (!p || (y->names.n + 1 > y->nslots / 2 && grow_slots(y)) || !vec_reserve(&y->names, 1))
		return -ENOMEM;
	bool failed = pl->flags & PERF_RB_NAME_READ_FAILED;
	struct name c = { .pid = pl->pid, .epoch = p->epoch, .addr = pl->addr,
			  .first_lineno = pl->first_lineno, .func = pl->func };
	c.label = string(y, pl->label, pl->label_len, failed);
	c.path = pl->type == PERF_RB_ISEQ ? string(y, pl->path, pl->path_len, failed) : "";
	uint32_t *pos = pl->nlines ? arena_alloc(&y->strings, pl->nlines * sizeof(*pos)) : NULL;
	int32_t *line = pl->nlines ? arena_alloc(&y->strings, pl->nlines * sizeof(*line)) : NULL;
	if (!c.label || !c.path || (pl->nlines && (!pos || !line)))
		return -ENOMEM;
	for (uint32_t i = 0; i < pl->nlines; i++) {
		struct perf_rb_line l = replay_rb_line_at(pl, i);
		pos[i] = l.pos;
		line[i] = l.line;
	}
	c.nlines = pl->nlines;
	c.pos = pos;
	c.line = line;
	*vec_push(&y->names) = c; /* a later record of an address: a new object there */
	*name_slot(y, c.pid, c.epoch, c.addr) = (uint32_t)y->names.n;
	return 0;
}

static int add_stack(struct ruby_source *y, const struct replay_rb_payload *pl, uint64_t time)
{
	struct thread *t = thread_of(y, pl->tid, true);
	if (!t)
		return -ENOMEM;
	t->frames.n = 0;
	if (!vec_reserve(&t->frames, pl->nframes))
		return -ENOMEM;
	for (uint32_t i = 0; i < pl->nframes; i++)
		t->frames.v[t->frames.n++] = replay_rb_frame_at(pl, i);
	t->pid = pl->pid;
	t->flags = pl->flags;
	t->time = time;
	t->pending = true;
	y->stats->records++;
	return 0;
}

static int on_payload(struct ruby_source *y, const struct perf_event_rec *ev)
{
	if (!ev->raw_data || !replay_rb_is_payload(ev->raw_data, ev->raw_size))
		return 0;
	y->any_record = true;
	struct replay_rb_payload pl;
	if (replay_rb_parse(ev->raw_data, ev->raw_size, &pl)) {
		y->stats->malformed++;
		if (!y->warned)
			fprintf(stderr, "tally: warning: %s: at 0x%llx: %s (such records are left out)\n",
				y->path, (unsigned long long)ev->file_off, err_msg());
		y->warned = true;
		err_clear();
		return 0;
	}
	int r = pl.type == PERF_RB_STACK ? add_stack(y, &pl, ev->time) : add_name(y, &pl);
	return r ? err_set(r, "out of memory") : 0;
}

static int record(void *self, const struct perf_event_rec *ev)
{
	struct ruby_source *y = self;
	if (replay_is_bpf_output(ev))
		return on_payload(y, ev);
	if (ev->type == PERF_RECORD_COMM && (ev->misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    ev->pid == ev->tid) {
		struct proc *p = proc_of(y, ev->pid);
		if (!p)
			return err_set(-ENOMEM, "out of memory");
		p->epoch++;
	} else if (ev->type == PERF_RECORD_EXIT) {
		struct thread *t = thread_of(y, ev->tid, false);
		if (t)
			t->pending = false;
	}
	return 0;
}

static bool take_record(struct ruby_source *y, const struct replay_stack *st)
{
	struct thread *t = thread_of(y, st->ev->tid, false);
	if (!t || !t->pending)
		return false;
	t->pending = false;
	if (t->pid != st->ev->pid || t->time > st->ev->time)
		return false;
	y->flags = t->flags;
	y->frames.n = 0;
	if (!vec_reserve(&y->frames, t->frames.n))
		return false;
	if (t->frames.n) /* an empty stack has no array to copy from */
		memcpy(y->frames.v, t->frames.v, t->frames.n * sizeof(*t->frames.v));
	y->frames.n = t->frames.n;
	return true;
}

/* The names of the frames (NULL: no record). */
static int resolve(struct ruby_source *y, uint32_t pid)
{
	y->frame_names.n = 0;
	if (!vec_reserve(&y->frame_names, y->frames.n))
		return -ENOMEM;
	for (size_t i = 0; i < y->frames.n; i++) {
		const struct name *c = name_of(y, pid, y->frames.v[i].addr);
		y->frame_names.v[y->frame_names.n++] = c;
	}
	return 0;
}

/* Group ends (FINISH frames), innermost first, into splices (outer filled, the rest later);
 * *tail: frames follow the last one. */
static int find_groups(struct ruby_source *y, bool *tail)
{
	y->splices.n = 0;
	uint32_t first = 0;
	for (uint32_t i = 0; i < y->frames.n; i++) {
		if (!(y->frames.v[i].fflags & PERF_RB_FRAME_FINISH))
			continue;
		struct splice *s = vec_push(&y->splices);
		if (!s)
			return -ENOMEM;
		*s = (struct splice){ first, i, -1 };
		first = i + 1;
	}
	*tail = first < y->frames.n;
	return 0;
}

/* Whether R groups and A activations pair, innermost first (as Python's runs). */
static bool groups_fit(size_t R, size_t A, bool tail, bool ruby_whole, bool native_whole)
{
	if (ruby_whole && tail)
		return false;
	if (ruby_whole && native_whole)
		return R == A;
	if (ruby_whole)
		return R >= A;
	return native_whole ? R <= A : true;
}

/* Plans group k at activation a, whose inner neighbour activation (or the stack's top)
 * bounds the native frames it may drop: [bound, a). */
static int plan_group(struct ruby_source *y, const struct replay_stack *st, size_t k, size_t a,
		      size_t bound)
{
	struct splice *s = &y->splices.v[k];
	uint32_t inner_iseq = s->inner;
	while (inner_iseq < s->outer && y->frames.v[inner_iseq].fflags & PERF_RB_FRAME_CFUNC)
		inner_iseq++;
	if (inner_iseq > s->inner) {
		s->cfunc = (int32_t)inner_iseq - 1;
		y->stats->nested_c += inner_iseq - 1 - s->inner;
	}
	s->inner = inner_iseq;
	y->plan.v[a] = GROUP;
	y->splice_of.v[a] = (int32_t)k;
	size_t drop_to = a; /* natives [drop_to, a) are the VM's */
	if (a > bound)
		drop_to = a - 1;
	if (s->cfunc >= 0) {
		uint64_t func = y->frame_names.v[s->cfunc]->func;
		for (size_t i = a - 1; func && a > bound && i + 1 > bound; i--) {
			bool yes;
			int r = replay_rb_in_function(&y->vm, st->frames, i, func, &yes);
			if (r)
				return r;
			if (yes) {
				drop_to = i + 1;
				break;
			}
			if (!i)
				break;
		}
	}
	for (size_t i = drop_to; i < a; i++)
		y->plan.v[i] = DROP;
	return 0;
}

static int begin_stack(void *self, const struct replay_stack *st)
{
	struct ruby_source *y = self;
	struct replay_ruby_stats *s = y->stats;
	y->acts.n = y->splices.n = 0;
	y->plan.n = y->splice_of.n = 0;
	if (!y->any_record)
		return 0; /* no Ruby process so far (a Python recording): nothing to look for */
	if (!vec_reserve(&y->plan, st->n) || !vec_reserve(&y->splice_of, st->n))
		return err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; i < st->n; i++) {
		bool yes;
		int r = replay_rb_vm_exec_frame(&y->vm, st->frames, i, &yes);
		if (r)
			return r;
		y->plan.v[y->plan.n++] = KEEP;
		y->splice_of.v[y->splice_of.n++] = -1;
		if (yes && !vec_push(&y->acts))
			return err_set(-ENOMEM, "out of memory");
		if (yes)
			y->acts.v[y->acts.n - 1] = i;
	}
	size_t A = y->acts.n;
	if (!take_record(y, st)) {
		s->unrecorded += A > 0;
		return 0;
	}
	s->read_failed += (y->flags & PERF_RB_STACK_READ_FAILED) != 0;
	bool tail;
	if (find_groups(y, &tail) || resolve(y, st->ev->pid))
		return err_set(-ENOMEM, "out of memory");
	size_t R = y->splices.n;
	bool whole = !(y->flags & (PERF_RB_STACK_CUT | PERF_RB_STACK_READ_FAILED));
	if (!groups_fit(R, A, tail, whole, st->end == UNW_END_OUTERMOST)) {
		s->inconsistent += R || A;
		y->splices.n = 0;
		return 0;
	}
	size_t k = R < A ? R : A;
	bool named = true;
	for (size_t i = 0; k && i <= y->splices.v[k - 1].outer; i++)
		named &= y->frame_names.v[i] != NULL;
	if (!named) {
		s->unknown++;
		y->splices.n = 0;
		return 0;
	}
	y->splices.n = k;
	for (size_t g = 0; g < k; g++) {
		int r = plan_group(y, st, g, y->acts.v[g], g ? y->acts.v[g - 1] + 1 : 0);
		if (r)
			return r;
	}
	s->cut += (y->flags & PERF_RB_STACK_CUT) != 0;
	if (k) {
		s->samples++;
		s->frames += y->splices.v[k - 1].outer + 1;
	}
	return 0;
}

/* The line of an iseq frame, 0 when unknown. */
static uint32_t line_of(const struct name *c, int32_t pc)
{
	int32_t line = rb_line_at(c->pos, c->line, c->nlines, pc);
	return line > 0 ? (uint32_t)line : 0;
}

static struct replay_sym_frame *push(struct replay_frames *out, const struct unw_frame *fr)
{
	struct replay_sym_frame *f = replay_frames_push(out, PROF_RUBY);
	if (f) {
		f->module = fr->mod->path;
		f->build_id = fr->mod->build_id;
		f->pc = fr->pc;
	}
	return f;
}

static int name_frame(void *self, const struct replay_stack *st, size_t i,
		      struct replay_frames *out)
{
	struct ruby_source *y = self;
	if (i >= y->plan.n || y->plan.v[i] == KEEP)
		return 0;
	if (y->plan.v[i] == DROP)
		return 1;
	const struct splice *s = &y->splices.v[y->splice_of.v[i]];
	const struct unw_frame *fr = &st->frames[i];
	for (uint32_t k = s->outer + 1; k > s->inner; k--) { /* outermost first */
		const struct name *c = y->frame_names.v[k - 1];
		struct replay_sym_frame *f = push(out, fr);
		if (!f)
			return 1;
		f->function = c->label;
		f->file = c->path;
		f->line = line_of(c, y->frames.v[k - 1].pc);
		f->first_line = c->first_lineno > 0 ? (uint32_t)c->first_lineno : 0;
	}
	if (s->cfunc >= 0) {
		/* As Ruby's backtrace: a C method at the path and line of its caller. */
		const struct name *c = y->frame_names.v[s->cfunc], *caller = y->frame_names.v[s->inner];
		struct replay_sym_frame *f = push(out, fr);
		if (!f)
			return 1;
		f->function = c->label;
		f->file = caller->path;
		f->line = line_of(caller, y->frames.v[s->inner].pc);
	}
	return 1;
}

static void close_source(void *self)
{
	struct ruby_source *y = self;
	arena_free(&y->strings);
	vec_free(&y->names);
	free(y->slots);
	vec_free(&y->procs);
	for (size_t i = 0; i < y->threads.n; i++)
		vec_free(&y->threads.v[i].frames);
	vec_free(&y->threads);
	idmap_free(&y->proc_index);
	idmap_free(&y->thread_index);
	replay_rb_vm_index_free(&y->vm);
	vec_free(&y->frames);
	vec_free(&y->frame_names);
	vec_free(&y->acts);
	vec_free(&y->plan);
	vec_free(&y->splice_of);
	vec_free(&y->splices);
	free(y);
}

static void counters(void *self, replay_count_fn *count, void *arg)
{
	const struct ruby_source *y = self;
	const struct replay_ruby_stats *s = y->stats;
	if (!y->any_record)
		return;
	count(arg, PROF_COUNTER_RB_SAMPLES, s->samples);
	count(arg, PROF_COUNTER_RB_FRAMES, s->frames);
	count(arg, PROF_COUNTER_RB_INCONSISTENT, s->inconsistent);
	count(arg, PROF_COUNTER_RB_UNKNOWN, s->unknown);
	count(arg, PROF_COUNTER_RB_UNRECORDED, s->unrecorded);
	if (s->cut)
		count(arg, PROF_COUNTER_RB_CUT, s->cut);
	if (s->read_failed)
		count(arg, PROF_COUNTER_RB_READ_FAILED, s->read_failed);
	if (s->nested_c)
		count(arg, PROF_COUNTER_RB_NESTED_C, s->nested_c);
	if (s->malformed)
		count(arg, PROF_COUNTER_RB_MALFORMED, s->malformed);
}

static const struct replay_frame_source_ops ruby_ops = {
	.name_frame = name_frame,
	.begin_stack = begin_stack,
	.record = record,
	.counters = counters,
	.close = close_source,
	.per_sample = true,
};

int replay_ruby_source_new(const struct perf_data *d, struct replay_ruby_stats *stats,
			   struct replay_frame_source *out)
{
	*out = (struct replay_frame_source){ NULL, NULL };
	if (!replay_has_bpf_output(d))
		return 0;
	struct ruby_source *y = calloc(1, sizeof(*y));
	if (!y)
		return err_set(-ENOMEM, "out of memory");
	y->path = d->path;
	y->stats = stats ? stats : &y->own;
	memset(y->stats, 0, sizeof(*y->stats));
	*out = (struct replay_frame_source){ &ruby_ops, y };
	return 0;
}

static int open_source(struct perf_data *d, struct replay_frame_source *out)
{
	return replay_ruby_source_new(d, NULL, out);
}

const struct replay_source_type replay_ruby_source = { open_source };
