/*
 * perf.data as a profile, for tally report and every other output: each sample unwound and
 * symbolized (stack_namer.c) becomes a stack of the profile model, weighted by one sample
 * and by its period (nanoseconds for the clock events, event counts otherwise). The unwind
 * quality becomes the profile's counters, which reports print in their header.
 */
#include "replay/replay.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "profile/counters.h"
#include "profile/profile.h"
#include "replay/namer.h"
#include "replay/offcpu.h"

/* Frames of the model by description: a sample repeats the frames of the last, and the
 * names are the symbolizer's own strings (stable while the replay runs), so comparing
 * pointers finds them without hashing strings. Direct-mapped. */
#define FRAME_MEMO 1024

struct frame_memo {
	struct prof_frame_desc d;
	uint32_t id; /* PROF_NONE: an empty slot */
};

/* Modules by the address of their path (the unwinder's, stable while the replay runs):
 * frames alternate between a few modules, and interning the path each time is a hash of
 * the whole string. Round-robin replacement past MOD_MEMO. */
#define MOD_MEMO 8

/* A repeated stack, by its id (replay_sym_stack.id): its locations (as many as its frames,
 * made once; NULL until made) and where the profile keeps it (prof_add_stack_kept). */
struct known_stack {
	struct prof_loc *locs;
	uint32_t kept;
	uint32_t njit; /* its JIT frames */
	bool jit_stop; /* truncated, its walk ended in JIT code */
};

struct build {
	struct frame_memo *memo;
	struct prof *p;
	VEC(struct prof_loc) locs; /* the stack being added */
	struct {
		const char *path, *build_id;
		uint32_t id;
	} mods[MOD_MEMO];
	unsigned nmods, next_mod;
	VEC(struct known_stack) known; /* by id; n: the ids with a slot, zeroed until known */
	uint64_t first_time, last_time;
	uint64_t jit_frames; /* over all samples, for the unwind-quality figures */
	uint64_t jit_stops;  /* truncated stacks whose walk ended in JIT code */
	uint32_t thread, thread_pid, thread_tid; /* the last sample's thread */
	char thread_comm[REPLAY_COMM_MAX]; /* and its name */
	struct replay_offcpu *offcpu; /* --off-cpu recordings: the switch intervals */
	uint64_t offcpu_intervals;
	char source[128];
};

static uint32_t module_id(struct build *b, const char *path, const char *build_id)
{
	if (!path)
		return PROF_NONE;
	for (unsigned i = 0; i < b->nmods; i++)
		if (b->mods[i].path == path && b->mods[i].build_id == build_id)
			return b->mods[i].id;
	uint32_t id = prof_module(b->p, path, build_id ? build_id : "", 0);
	if (id != PROF_NONE) {
		unsigned i = b->nmods < MOD_MEMO ? b->nmods++ : b->next_mod++ % MOD_MEMO;
		b->mods[i].path = path;
		b->mods[i].build_id = build_id;
		b->mods[i].id = id;
	}
	return id;
}

static uint32_t frame_id(struct build *b, const struct prof_frame_desc *d)
{
	uint64_t h = ((uint64_t)(uintptr_t)d->function * 31 + (uint64_t)(uintptr_t)d->file) * 31 +
		     d->addr * 7 + d->module * 3 + d->kind;
	struct frame_memo *m = &b->memo[(h * 0x9e3779b97f4a7c15ull) >> 54];
	if (m->id != PROF_NONE && m->d.function == d->function && m->d.file == d->file &&
	    m->d.addr == d->addr && m->d.module == d->module && m->d.kind == d->kind)
		return m->id;
	uint32_t id = prof_frame(b->p, d);
	if (id != PROF_NONE) {
		m->d = *d;
		m->id = id;
	}
	return id;
}

/* st's locations into b->locs. */
static int make_locs(struct build *b, const struct replay_sym_stack *st)
{
	b->locs.n = 0;
	if (!vec_reserve(&b->locs, st->n))
		return -ENOMEM;
	/* The model takes stacks innermost first; ours come outermost first. */
	for (size_t i = 0; i < st->n; i++) {
		const struct replay_sym_frame *f = &st->frames[st->n - 1 - i];
		bool kernel = f->kind == PROF_KERNEL;
		uint64_t pc = kernel ? f->pc : f->addr;
		struct prof_frame_desc d = {
			.kind = f->kind,
			.function = f->kind == PROF_TRUNCATED ? NULL : f->function,
			.file = f->file,
			.line = f->first_line,
			.module = f->kind == PROF_TRUNCATED ? PROF_NONE
								 : module_id(b, f->module, f->build_id),
			/* A named function is one frame whatever the symbol table says (inline
			 * instances and functions without a symbol have no start of their own);
			 * an unnamed one is told apart by its address. */
			.addr = !f->function ? pc : f->kind == PROF_NATIVE ? f->sym_start : 0,
		};
		uint32_t id = frame_id(b, &d);
		if (id == PROF_NONE)
			return -ENOMEM;
		b->locs.v[i] = (struct prof_loc){ id, f->line, pc };
	}
	return 0;
}

/* Keeps a copy of the n locations of the stack id (not kept when out of memory: then
 * they are made again next time). */
static struct known_stack *remember(struct build *b, uint32_t id, const struct prof_loc *locs,
				    size_t n)
{
	if (id >= b->known.n) {
		if (!vec_reserve(&b->known, id + 1 - b->known.n))
			return NULL;
		memset(b->known.v + b->known.n, 0, (b->known.cap - b->known.n) * sizeof(*b->known.v));
		b->known.n = b->known.cap;
	}
	struct known_stack *k = &b->known.v[id];
	if (!(k->locs = malloc((n ? n : 1) * sizeof(*locs))))
		return NULL;
	memcpy(k->locs, locs, n * sizeof(*locs));
	k->kept = PROF_NONE;
	return k;
}

static uint32_t jit_frames(const struct replay_sym_stack *st)
{
	uint32_t n = 0;
	for (size_t i = 0; i < st->n; i++)
		n += st->frames[i].kind == PROF_JIT;
	return n;
}

/* Whether st was truncated with a JIT frame outermost: its walk ended in JIT code (the
 * unwinder counts stops by module, and JIT code is in none). */
static bool jit_stop(const struct replay_sym_stack *st)
{
	return st->n > 1 && st->frames[0].kind == PROF_TRUNCATED &&
	       st->frames[1].kind == PROF_JIT;
}

/* The profile's thread of a sample, named by its comm then: samples come in runs from
 * one thread under one name, so the last one is kept at hand. */
static uint32_t thread_id(struct build *b, uint32_t pid, uint32_t tid, const char *comm)
{
	if (b->thread != PROF_NONE && b->thread_pid == pid && b->thread_tid == tid &&
	    !strncmp(b->thread_comm, comm, sizeof(b->thread_comm)))
		return b->thread;
	b->thread_pid = pid;
	b->thread_tid = tid;
	snprintf(b->thread_comm, sizeof(b->thread_comm), "%s", comm);
	return b->thread = prof_thread(b->p, pid, tid, comm);
}

static int on_stack(const struct replay_sym_stack *st, void *arg)
{
	struct build *b = arg;
	struct known_stack *k = st->id && st->id < b->known.n && b->known.v[st->id].locs
					? &b->known.v[st->id]
					: NULL;
	const struct prof_loc *locs;
	uint32_t njit;
	bool stop;
	if (k) {
		locs = k->locs;
		njit = k->njit;
		stop = k->jit_stop;
	} else {
		int r = make_locs(b, st); /* may move b->locs.v */
		if (r)
			return r;
		locs = b->locs.v;
		njit = jit_frames(st);
		stop = jit_stop(st);
		if (st->id && (k = remember(b, st->id, b->locs.v, st->n))) {
			k->njit = njit;
			k->jit_stop = stop;
		}
	}
	b->jit_frames += njit;
	b->jit_stops += stop;
	const struct perf_event_rec *ev = st->raw->ev;
	/* samples, cpu or events; off-cpu nanoseconds (a switch sample's only weight) */
	int64_t w[3] = { 1, (int64_t)ev->period, 0 };
	if (replay_offcpu_is_switch(b->offcpu, ev)) {
		w[0] = w[1] = 0;
		if (!(w[2] = (int64_t)replay_offcpu_ns(b->offcpu, ev)))
			return 0; /* it never ran again: no interval to charge */
		b->offcpu_intervals++;
	}
	if (!b->first_time) {
		b->first_time = ev->time;
		snprintf(b->source, sizeof(b->source), "perf.data: %s", st->comm);
	}
	b->last_time = ev->time;
	uint32_t thread = thread_id(b, ev->pid, ev->tid, st->comm);
	if (thread == PROF_NONE)
		return -ENOMEM;
	uint32_t kept = PROF_NONE;
	int r = prof_add_sample(b->p, thread, ev->time, locs, st->n, w, k ? &k->kept : &kept);
	if (!r)
		prof_set_last_sample_gil(b->p, st->gil);
	return r;
}

static void counters(struct prof *p, const struct replay_quality *q)
{
	const struct unw_stats *s = &q->stats;
	char name[160];
	prof_set_counter(p, PROF_COUNTER_SAMPLES, (int64_t)q->info.samples);
	prof_set_counter(p, "lost records", (int64_t)q->info.lost);
	if (q->info.lost_samples)
		prof_set_counter(p, "lost samples", (int64_t)q->info.lost_samples);
	if (q->info.throttled)
		prof_set_counter(p, "throttled", (int64_t)q->info.throttled);
	if (q->info.stopped[0]) {
		snprintf(name, sizeof(name), "recording ended early: %s", q->info.stopped);
		prof_set_counter(p, name, 1);
	}
	/* Counts, not shares: merged profiles add their counters, and a report derives the
	 * shares at the precision they need (rep_quality_summary). */
	prof_set_counter(p, PROF_COUNTER_COMPLETE, (int64_t)s->complete);
	prof_set_counter(p, PROF_COUNTER_TRUNCATED, (int64_t)s->truncated);
	prof_set_counter(p, PROF_COUNTER_SINGLE, (int64_t)s->single);
	prof_set_counter(p, PROF_COUNTER_FRAMES, (int64_t)s->frames);
	if (s->fp_steps)
		prof_set_counter(p, "unwind: frame-pointer steps", (int64_t)s->fp_steps);
	if (s->jit_cfi_steps)
		prof_set_counter(p, PROF_COUNTER_JIT_CFI_STEPS, (int64_t)s->jit_cfi_steps);
	if (q->info.fp_recorded)
		prof_set_counter(p, "unwind: recorded with frame pointers only (most callers lost "
				    "in code built without them; record with --call-graph dwarf)",
				 (int64_t)q->info.fp_recorded);
	else if (q->info.unwound_recorded)
		prof_set_counter(p, "unwind: unwound while recording (tally record)",
				 (int64_t)q->info.unwound_recorded);
	else if (q->method == UNW_FP)
		prof_set_counter(p, "unwind: --unwind=fp (most callers lost in code built "
				    "without frame pointers)",
				 (int64_t)s->samples);
	for (int e = 1; e < UNW_END_COUNT; e++)
		if (s->ends[e]) {
			snprintf(name, sizeof(name), "unwind: truncated, %s",
				 unw_end_name((enum unw_end)e));
			prof_set_counter(p, name, (int64_t)s->ends[e]);
		}
	for (int k = 0; k < 3 && q->stop_counts[k]; k++) {
		snprintf(name, sizeof(name), "unwind: stopped in %s", q->stop_modules[k]);
		prof_set_counter(p, name, (int64_t)q->stop_counts[k]);
	}
	for (size_t i = 0; i < q->ncounted; i++)
		prof_set_counter(p, q->counted[i].name, (int64_t)q->counted[i].value);
}

/* Whether every sample is one hit of a probe: tally's usdt recordings (the uprobe PMU,
 * sampled at every hit) and perf's tracepoint ones. The uprobe PMU's type is a number the
 * recording machine gave it, so it is looked up in the file's PMU mappings, never in this
 * machine's /sys: a file without them (tally's before it wrote them) is not hits. */
static bool is_hits(const struct perf_data *d, const struct perf_event_attr *a)
{
	if (a->freq || a->sample_period != 1)
		return false;
	if (a->type == PERF_TYPE_TRACEPOINT)
		return true;
	const char *pmu = a->type >= PERF_TYPE_MAX ? perf_data_pmu_name(d, a->type) : NULL;
	return pmu && !strcmp(pmu, "uprobe");
}

int replay_profile(struct perf_data *d, enum unw_method method, struct prof **out)
{
	struct prof *p;
	int r = prof_new(&p);
	if (r)
		return r;
	const struct perf_event_attr *a = &d->attrs[0].attr;
	bool clock = a->type == PERF_TYPE_SOFTWARE && (a->config == PERF_COUNT_SW_CPU_CLOCK ||
						       a->config == PERF_COUNT_SW_TASK_CLOCK);
	if (prof_add_metric(p, is_hits(d, a) ? "hits" : "samples", "count") < 0 ||
	    prof_add_metric(p, clock ? "cpu" : "events", clock ? "nanoseconds" : "count") < 0) {
		prof_free(p);
		return err_set(-ENOMEM, "out of memory");
	}
	struct build b = { .p = p, .memo = malloc(FRAME_MEMO * sizeof(*b.memo)),
			  .thread = PROF_NONE };
	if (!b.memo) {
		prof_free(p);
		return err_set(-ENOMEM, "out of memory");
	}
	if ((r = replay_offcpu_scan(d, &b.offcpu)) ||
	    (b.offcpu && prof_add_metric(p, PROF_OFF_CPU_METRIC, "nanoseconds") < 0)) {
		free(b.memo);
		replay_offcpu_free(b.offcpu);
		prof_free(p);
		return r ? r : err_set(-ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < FRAME_MEMO; i++)
		b.memo[i].id = PROF_NONE;
	struct replay_quality q;
	r = replay_symbolized_data(d, method, on_stack, &b, &q);
	free(b.memo);
	replay_offcpu_free(b.offcpu);
	if (r == -ENOMEM)
		err_set(r, "%s: out of memory", d->path);
	vec_free(&b.locs);
	for (size_t i = 0; i < b.known.n; i++)
		free(b.known.v[i].locs);
	vec_free(&b.known);
	if (!r) {
		counters(p, &q);
		if (b.jit_frames)
			prof_set_counter(p, PROF_COUNTER_JIT_FRAMES, (int64_t)b.jit_frames);
		if (b.jit_stops)
			prof_set_counter(p, PROF_COUNTER_JIT_STOPS, (int64_t)b.jit_stops);
		if (b.offcpu)
			prof_set_counter(p, "off-CPU intervals", (int64_t)b.offcpu_intervals);
		if (b.source[0])
			prof_set_source(p, b.source);
		if (b.last_time > b.first_time)
			prof_set_times(p, 0, (int64_t)(b.last_time - b.first_time));
		prof_set_default_metric(p, 0);
		r = prof_finish(p);
	}
	if (r) {
		prof_free(p);
		return r;
	}
	*out = p;
	return 0;
}
