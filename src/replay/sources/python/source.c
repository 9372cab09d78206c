/*
 * The CPython frame source (python.h). tally record's BPF program reads a
 * thread's Python frames at each sample's overflow and writes them, with the code objects
 * they name, as bpf-output payloads (payload.h) just before the kernel writes the
 * sample. Replayed in time order, each payload waits on its thread until that thread's next
 * sample, which takes it (a later sample finds none: the contract's match rule). The
 * frames then replace the sample's _PyEval_EvalFrameDefault activations (eval.h):
 * activation k, counted from the innermost, becomes run k of the Python stack, its frames
 * up to and including the k-th is_entry frame (3.8-3.10: every frame is one, each runs in
 * an activation of its own, so runs and activations pair one to one); native frames below
 * and above stay. Where
 * the two do not agree, or a code object is unknown, nothing is guessed: the sample keeps
 * its native frames and is counted in the quality figures (struct replay_python_stats).
 */
#include "replay/sources/python/python.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "cpython/code.h"
#include "profile/counters.h"
#include "replay/sources/python/eval.h"
#include "replay/sources/python/payload.h"

/* One code record: a code object of a process, as of its last record. Strings live in the
 * source's arena until it is closed (frames name them that long). */
struct code {
	uint32_t pid, epoch;
	uint64_t addr;
	const char *qualname, *filename;
	int32_t firstlineno;
	const uint8_t *linetable;
	uint32_t linetable_len;
	unsigned format; /* enum cpy_linetable_format */
	bool no_lines;   /* its line table could not be read: every line unknown */
};

/* The name or file of a code object whose str the capture could not read (or found not to
 * be a str): marked as such, never empty or another's. */
#define READ_FAILED_NAME "[read failed]"

/* A process: exec starts a new epoch, whose code objects are new. */
struct proc {
	uint32_t pid, epoch;
};

/* A thread's last stack record, until its next sample takes it. */
struct thread {
	uint32_t pid;
	bool pending;
	uint16_t flags;
	uint64_t time;
	VEC(struct perf_py_frame) frames;
};

/* Lines by code and instruction: decoding a line table is linear in its length. Codes by
 * index (their array moves as it grows). */
#define LINE_MEMO_BITS 12
struct line_memo {
	uint32_t code; /* index + 1 into codes; 0: an empty slot */
	int32_t lasti;
	uint32_t line;
};

/* A run of the current sample's Python frames, [first, last] innermost first. */
struct run {
	uint32_t first, last;
};

struct python_source {
	const char *path; /* the recording, for warnings */
	struct replay_python_stats *stats; /* the caller's, or own */
	struct replay_python_stats own;
	struct arena strings;
	VEC(struct code) codes;
	uint32_t *slots; /* open addressing over codes: index + 1, 0 empty */
	size_t nslots;
	VEC(struct proc) procs;
	struct idmap proc_index, thread_index;
	VEC(struct thread) threads;
	struct replay_eval_index evals;
	struct line_memo lines[1u << LINE_MEMO_BITS];
	bool warned;
	/* Whether any Python record was read: a recording's interpreter records may be
	 * another interpreter's alone, or a killed one's header list outputs none used. */
	bool any_record;
	/* The sample being named: its Python frames (taken from its thread), their codes,
	 * the runs spliced and, per native frame, the run that replaces it (-1: none). */
	VEC(struct perf_py_frame) frames;
	uint16_t flags; /* the stack record's */
	VEC(const struct code *) frame_codes;
	VEC(struct run) runs;
	VEC(int32_t) run_of;
	VEC(size_t) activations;
};

static uint64_t code_hash(uint32_t pid, uint32_t epoch, uint64_t addr)
{
	return ((addr >> 3) ^ ((uint64_t)pid << 32 | epoch)) * 0x9e3779b97f4a7c15ull;
}

static uint32_t *code_slot(struct python_source *y, uint32_t pid, uint32_t epoch, uint64_t addr)
{
	size_t mask = y->nslots - 1;
	for (size_t i = code_hash(pid, epoch, addr) >> 20 & mask;; i = (i + 1) & mask) {
		uint32_t *s = &y->slots[i];
		const struct code *c = *s ? &y->codes.v[*s - 1] : NULL;
		if (!c || (c->pid == pid && c->epoch == epoch && c->addr == addr))
			return s;
	}
}

static int grow_slots(struct python_source *y)
{
	size_t n = y->nslots ? y->nslots * 2 : 1024;
	uint32_t *old = y->slots;
	size_t nold = y->nslots;
	if (!(y->slots = calloc(n, sizeof(*y->slots)))) {
		y->slots = old;
		return -ENOMEM;
	}
	y->nslots = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i]) {
			const struct code *c = &y->codes.v[old[i] - 1];
			*code_slot(y, c->pid, c->epoch, c->addr) = old[i];
		}
	free(old);
	return 0;
}

static struct proc *proc_of(struct python_source *y, uint32_t pid)
{
	uint32_t i = idmap_get(&y->proc_index, pid);
	if (i != IDMAP_NONE)
		return &y->procs.v[i];
	if (!vec_reserve(&y->procs, 1) ||
	    idmap_put(&y->proc_index, pid, (uint32_t)y->procs.n))
		return NULL;
	struct proc *p = vec_push(&y->procs);
	p->pid = pid;
	return p;
}

static struct thread *thread_of(struct python_source *y, uint32_t tid, bool make)
{
	uint32_t i = idmap_get(&y->thread_index, tid);
	if (i != IDMAP_NONE)
		return &y->threads.v[i];
	if (!make || !vec_reserve(&y->threads, 1) ||
	    idmap_put(&y->thread_index, tid, (uint32_t)y->threads.n))
		return NULL;
	return vec_push(&y->threads);
}

static const struct code *code_of(struct python_source *y, uint32_t pid, uint64_t addr)
{
	uint32_t i = idmap_get(&y->proc_index, pid);
	if (i == IDMAP_NONE || !y->nslots)
		return NULL;
	uint32_t s = *code_slot(y, pid, y->procs.v[i].epoch, addr);
	return s ? &y->codes.v[s - 1] : NULL;
}

static int add_code(struct python_source *y, const struct replay_py_payload *pl)
{
	struct proc *p = proc_of(y, pl->pid);
	if (!p || (y->codes.n + 1 > y->nslots / 2 && grow_slots(y)) || !vec_reserve(&y->codes, 1))
		return -ENOMEM;
	struct code c = { .pid = pl->pid, .epoch = p->epoch, .addr = pl->code,
			  .firstlineno = pl->firstlineno, .linetable_len = pl->linetable_len };
	c.format = pl->flags & PERF_PY_CODE_LINES_LNOTAB ? CPY_LINES_LNOTAB
		   : pl->flags & PERF_PY_CODE_LINES_310  ? CPY_LINES_310
							 : CPY_LINES_LOCATIONS;
	bool failed = pl->flags & PERF_PY_CODE_READ_FAILED;
	c.no_lines = failed && !pl->linetable_len;
	c.qualname = failed && !pl->qualname_len
			     ? READ_FAILED_NAME
			     : arena_strndup(&y->strings, pl->qualname, pl->qualname_len);
	c.filename = failed && !pl->filename_len
			     ? READ_FAILED_NAME
			     : arena_strndup(&y->strings, pl->filename, pl->filename_len);
	c.linetable = pl->linetable_len ? arena_copy(&y->strings, pl->linetable, pl->linetable_len)
					: NULL;
	if (!c.qualname || !c.filename || (pl->linetable_len && !c.linetable))
		return -ENOMEM;
	/* A later record of the same address is a new code object where a freed one was. */
	*vec_push(&y->codes) = c;
	*code_slot(y, c.pid, c.epoch, c.addr) = (uint32_t)y->codes.n;
	return 0;
}

static int add_stack(struct python_source *y, const struct replay_py_payload *pl, uint64_t time)
{
	struct thread *t = thread_of(y, pl->tid, true);
	if (!t)
		return -ENOMEM;
	t->frames.n = 0;
	if (!vec_reserve(&t->frames, pl->nframes))
		return -ENOMEM;
	for (uint32_t i = 0; i < pl->nframes; i++)
		t->frames.v[t->frames.n++] = replay_py_frame_at(pl, i);
	t->pid = pl->pid;
	t->flags = pl->flags;
	t->time = time;
	t->pending = true;
	y->stats->records++;
	return 0;
}

static int on_payload(struct python_source *y, const struct perf_event_rec *ev)
{
	if (!ev->raw_data || !replay_py_is_payload(ev->raw_data, ev->raw_size))
		return 0; /* another BPF program's */
	y->any_record = true;
	struct replay_py_payload pl;
	if (replay_py_parse(ev->raw_data, ev->raw_size, &pl)) {
		y->stats->malformed++;
		if (!y->warned)
			fprintf(stderr, "tally: warning: %s: at 0x%llx: %s (such records are left out)\n",
				y->path, (unsigned long long)ev->file_off, err_msg());
		y->warned = true;
		err_clear();
		return 0;
	}
	int r = pl.type == PERF_PY_CODE ? add_code(y, &pl) : add_stack(y, &pl, ev->time);
	return r ? err_set(r, "out of memory") : 0;
}

static int record(void *self, const struct perf_event_rec *ev)
{
	struct python_source *y = self;
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

/* The stack record the sample takes: its thread's, if no sample took it before. */
static bool take_record(struct python_source *y, const struct replay_stack *st)
{
	struct thread *t = thread_of(y, st->ev->tid, false);
	if (!t || !t->pending)
		return false;
	t->pending = false;
	if (t->pid != st->ev->pid || t->time > st->ev->time)
		return false;
	y->flags = t->flags;
	VEC(struct perf_py_frame) swap = { y->frames.v, y->frames.n, y->frames.cap };
	y->frames.v = t->frames.v;
	y->frames.n = t->frames.n;
	y->frames.cap = t->frames.cap;
	t->frames.v = swap.v;
	t->frames.n = 0;
	t->frames.cap = swap.cap;
	return true;
}

/* The runs of the taken frames; whether frames follow the last is_entry frame. */
static int find_runs(struct python_source *y, bool *tail)
{
	y->runs.n = 0;
	uint32_t first = 0;
	for (uint32_t i = 0; i < y->frames.n; i++) {
		if (!(y->frames.v[i].fflags & PERF_PY_FRAME_ENTRY))
			continue;
		struct run *r = vec_push(&y->runs);
		if (!r)
			return -ENOMEM;
		*r = (struct run){ first, i };
		first = i + 1;
	}
	*tail = first < y->frames.n;
	return 0;
}

/* Whether R runs of Python frames and A activations can be matched, the innermost of each
 * first: all of them when both stacks are whole; a stack cut short (by the capture's cap
 * or a failed read, or an unwind that stopped) has fewer at its outer end. */
static bool runs_fit(size_t R, size_t A, bool tail, bool python_whole, bool native_whole)
{
	if (python_whole && tail)
		return false; /* frames that no activation ran */
	if (python_whole && native_whole)
		return R == A;
	if (python_whole)
		return R >= A;
	return native_whole ? R <= A : true;
}

/* The codes of the first k runs' frames; false when one has no record. */
static int resolve(struct python_source *y, uint32_t pid, size_t k, bool *known)
{
	*known = true;
	size_t n = k ? y->runs.v[k - 1].last + 1 : 0;
	y->frame_codes.n = 0;
	if (!vec_reserve(&y->frame_codes, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct code *c = code_of(y, pid, y->frames.v[i].code);
		y->frame_codes.v[y->frame_codes.n++] = c;
		*known &= c != NULL;
	}
	return 0;
}

static int begin_stack(void *self, const struct replay_stack *st)
{
	struct python_source *y = self;
	struct replay_python_stats *s = y->stats;
	y->run_of.n = 0;
	y->activations.n = 0;
	y->runs.n = 0;
	y->flags = 0;
	if (!vec_reserve(&y->run_of, st->n))
		return err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; i < st->n; i++) {
		bool eval;
		int r = replay_eval_frame(&y->evals, st->frames, i, &eval);
		if (r)
			return r;
		y->run_of.v[y->run_of.n++] = -1;
		size_t *a = eval ? vec_push(&y->activations) : NULL;
		if (eval && !a)
			return err_set(-ENOMEM, "out of memory");
		if (a)
			*a = i;
	}
	size_t A = y->activations.n;
	if (!take_record(y, st)) {
		s->unrecorded += A > 0;
		return 0;
	}
	if (y->flags & PERF_PY_STACK_GIL_KNOWN) {
		s->gil_held += !!(y->flags & PERF_PY_STACK_GIL_HELD);
		s->gil_not_held += !(y->flags & PERF_PY_STACK_GIL_HELD);
	}
	s->read_failed += (y->flags & PERF_PY_STACK_READ_FAILED) != 0;
	bool tail, known;
	if (find_runs(y, &tail))
		return err_set(-ENOMEM, "out of memory");
	size_t R = y->runs.n;
	bool python_whole = !(y->flags & (PERF_PY_STACK_CUT | PERF_PY_STACK_READ_FAILED));
	/* The sampled pc itself in the eval loop, one run short: the loop is between a frame
	 * and the thread's view of it (at its start it switches tstate->cframe before it
	 * pushes its frame; before it returns it switches back), so its innermost activation
	 * has no frame to show, and the runs belong to the activations outside it. */
	size_t edge = python_whole && !tail && A && y->activations.v[0] == 0 && R + 1 == A;
	if (!runs_fit(R, A - edge, tail, python_whole, st->end == UNW_END_OUTERMOST)) {
		s->inconsistent++;
		y->runs.n = 0;
		return 0;
	}
	size_t k = R < A - edge ? R : A - edge;
	if (resolve(y, st->ev->pid, k, &known))
		return err_set(-ENOMEM, "out of memory");
	if (!known) {
		s->code_unknown++;
		y->runs.n = 0;
		return 0;
	}
	y->runs.n = k;
	for (size_t r = 0; r < k; r++)
		y->run_of.v[y->activations.v[r + edge]] = (int32_t)r;
	s->cut += (y->flags & PERF_PY_STACK_CUT) != 0;
	s->between += edge;
	if (k) {
		s->samples++;
		s->frames += y->runs.v[k - 1].last + 1;
	}
	return 0;
}

/* The line of a frame's instruction, 0 when unknown. */
static uint32_t line_of(struct python_source *y, const struct code *c, int32_t lasti)
{
	if (c->no_lines)
		return 0;
	uint32_t id = (uint32_t)(c - y->codes.v) + 1;
	uint64_t h = (id ^ (uint64_t)(uint32_t)lasti * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
	struct line_memo *m = &y->lines[h >> (64 - LINE_MEMO_BITS)];
	if (m->code == id && m->lasti == lasti)
		return m->line;
	int32_t line;
	if (cpy_lines_line(c->format, c->linetable, c->linetable_len, c->firstlineno, lasti, &line) ||
	    line < 0)
		line = 0;
	*m = (struct line_memo){ id, lasti, (uint32_t)line };
	return (uint32_t)line;
}

static int name_frame(void *self, const struct replay_stack *st, size_t i,
		      struct replay_frames *out)
{
	struct python_source *y = self;
	if (i >= y->run_of.n || y->run_of.v[i] < 0)
		return 0;
	const struct run *r = &y->runs.v[y->run_of.v[i]];
	const struct unw_frame *fr = &st->frames[i];
	for (uint32_t k = r->last + 1; k > r->first; k--) { /* the entry frame, outermost, first */
		const struct code *c = y->frame_codes.v[k - 1];
		struct replay_sym_frame *f = replay_frames_push(out, PROF_PYTHON);
		if (!f)
			return 1;
		f->function = c->qualname;
		f->file = c->filename;
		f->line = line_of(y, c, y->frames.v[k - 1].lasti);
		f->first_line = c->firstlineno > 0 ? (uint32_t)c->firstlineno : 0;
		f->module = fr->mod->path;
		f->build_id = fr->mod->build_id;
		f->pc = fr->pc;
	}
	return 1;
}

static enum prof_gil gil(void *self)
{
	const struct python_source *y = self;
	if (!(y->flags & PERF_PY_STACK_GIL_KNOWN))
		return PROF_GIL_UNKNOWN;
	return y->flags & PERF_PY_STACK_GIL_HELD ? PROF_GIL_HELD : PROF_GIL_NOT_HELD;
}

static void close_source(void *self)
{
	struct python_source *y = self;
	arena_free(&y->strings);
	vec_free(&y->codes);
	free(y->slots);
	vec_free(&y->procs);
	for (size_t i = 0; i < y->threads.n; i++)
		vec_free(&y->threads.v[i].frames);
	vec_free(&y->threads);
	idmap_free(&y->proc_index);
	idmap_free(&y->thread_index);
	replay_eval_index_free(&y->evals);
	vec_free(&y->frames);
	vec_free(&y->frame_codes);
	vec_free(&y->runs);
	vec_free(&y->run_of);
	vec_free(&y->activations);
	free(y);
}

static void counters(void *self, replay_count_fn *count, void *arg)
{
	const struct python_source *y = self;
	const struct replay_python_stats *s = y->stats;
	if (!y->any_record)
		return; /* no Python record (another interpreter's only): nothing to say */
	count(arg, PROF_COUNTER_PY_SAMPLES, s->samples);
	count(arg, PROF_COUNTER_PY_FRAMES, s->frames);
	count(arg, PROF_COUNTER_PY_INCONSISTENT, s->inconsistent);
	count(arg, PROF_COUNTER_PY_CODE_UNKNOWN, s->code_unknown);
	count(arg, PROF_COUNTER_PY_UNRECORDED, s->unrecorded);
	if (s->cut)
		count(arg, PROF_COUNTER_PY_CUT, s->cut);
	if (s->read_failed)
		count(arg, PROF_COUNTER_PY_READ_FAILED, s->read_failed);
	if (s->between)
		count(arg, PROF_COUNTER_PY_BETWEEN, s->between);
	if (s->gil_held || s->gil_not_held) {
		count(arg, PROF_COUNTER_PY_GIL_HELD, s->gil_held);
		count(arg, PROF_COUNTER_PY_GIL_NOT_HELD, s->gil_not_held);
	}
	if (s->malformed)
		count(arg, PROF_COUNTER_PY_MALFORMED, s->malformed);
}

static const struct replay_frame_source_ops python_ops = {
	.name_frame = name_frame,
	.begin_stack = begin_stack,
	.record = record,
	.counters = counters,
	.gil = gil,
	.close = close_source,
	.per_sample = true,
};

int replay_python_source_new(const struct perf_data *d, struct replay_python_stats *stats,
			     struct replay_frame_source *out)
{
	*out = (struct replay_frame_source){ NULL, NULL };
	if (!replay_has_bpf_output(d))
		return 0;
	struct python_source *y = calloc(1, sizeof(*y));
	if (!y)
		return err_set(-ENOMEM, "out of memory");
	y->path = d->path;
	y->stats = stats ? stats : &y->own;
	memset(y->stats, 0, sizeof(*y->stats));
	*out = (struct replay_frame_source){ &python_ops, y };
	return 0;
}

static int open_source(struct perf_data *d, struct replay_frame_source *out)
{
	return replay_python_source_new(d, NULL, out);
}

const struct replay_source_type replay_python_source = { open_source };
