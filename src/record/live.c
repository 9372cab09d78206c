/*
 * Live unwinding (live.h). Samples are unwound as the reorder queue gives them back, so
 * each sees the mappings of its instant, whichever ring the mapping came through. A sample
 * whose frames a report names from more than the chain keeps its copy (keep_raw).
 */
#include "record/live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/idmap.h"
#include "perf/keep.h"
#include "record/modules.h"
#include "record/record.h"
#include "record/reorder.h"
#include "tally/agent.h"
#include "unwind/procs.h"

/* The queue's bound: 32 rounds of 8 MiB rings on 2 CPUs, or about a second of 32 KiB
 * samples at 1 kHz on 64 CPUs; past it the oldest records go out early (counted). */
#define QUEUE_MAX_BYTES (512u << 20)
/* A record timed just before a round began may still be being written into its ring while
 * the round reads that ring (the kernel takes the time, then copies the record): records
 * within this margin of the round's start wait for the next round. */
#define ROUND_MARGIN_NS 1000000ull
/* Frames per stack, as replay's limit. */
#define MAX_FRAMES 512
/* Modules no process maps any more that the unwinder keeps open (unw_ctx_bound_unused):
 * a library mapped again soon (each process's libc) is not read again, while a program
 * that maps ever new files (tests/record/mapchurn.c: thousands a second) does not make
 * tally hold them all. */
#define UNUSED_MODULES 256
/* Processes whose main thread exited, remembered so that their other threads' samples
 * keep their copies: threads outlive their main thread by moments, not by this many
 * process exits, past which the list starts anew. */
#define EXITED_MAX 65536

struct rec_live {
	const char *name;
	struct perf_attr_info attr; /* the sampling events', no ids: records are read by it */
	struct unw_ctx *ctx;
	struct unw_procs procs;
	struct idmap jitdump; /* pids that mapped a jitdump's marker (perf_jitdump_marker) */
	struct idmap exited;  /* pids whose main thread exited (their spaces are freed) */
	struct unw_space no_space; /* for the walks of such pids' samples without registers */
	struct rec_reorder q;
	int (*emit)(const void *rec, size_t size, void *arg);
	void *arg;
	uint64_t last_time, prev_round_time; /* without a known clock (rec_live_round) */
	struct rec_live_stats st;
	struct unw_frame frames[MAX_FRAMES];
	uint64_t pcs[MAX_FRAMES];
	uint8_t out[65536];
};

static uint64_t thread_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Whether the copy holds a loop record of libtally's agent (tally/agent.h: the magic, then
 * the record's own address, as the report's VM source takes it): its VM frames are read
 * from the copy when the file is read, so the sample must keep it. */
static bool agent_loop_in(const struct perf_event_rec *ev, uint64_t sp)
{
	for (uint64_t off = (8 - sp % 8) % 8; off + 16 <= ev->stack_total; off += 8) {
		uint64_t w[2];
		memcpy(w, ev->stack + off, sizeof(w));
		if (w[0] == TALLY_AGENT_LOOP_MAGIC && w[1] == sp + off)
			return true;
	}
	return false;
}

/* Why a walked sample keeps its copy, or NULL: the agent's VM frames in it, or code a JIT
 * wrote with a jitdump, whose unwinding information the report reads from the dump (the
 * walk here knows no JIT code, and went into memory no ELF file backs, or stopped). */
static uint64_t *keep_raw(struct rec_live *l, const struct perf_event_rec *ev, uint64_t sp,
			  size_t n, enum unw_end end)
{
	if (agent_loop_in(ev, sp))
		return &l->st.raw_agent;
	if (idmap_get(&l->jitdump, ev->pid) == IDMAP_NONE)
		return NULL;
	bool anon = end != UNW_END_OUTERMOST;
	for (size_t i = 0; i < n && !anon; i++) /* no ELF file: anonymous memory (//anon) */
		anon = !l->frames[i].mod || !l->frames[i].mod->elf;
	return anon ? &l->st.raw_jitdump : NULL;
}

/* A sample with a stack copy, unwound and written with its chain and how the walk ended
 * instead, or as it is where keep_raw says so. A sample that does not decode or rewrite is
 * dropped: the file's readers could not tell its layout. */
static int unwind_sample(struct rec_live *l, const struct perf_event_rec *ev)
{
	/* A thread that outlived its process's main thread, whose space is gone: the report
	 * keeps every space, and unwinds it. A sample without user registers (a task taken
	 * in the kernel's end of its exit, after its EXIT record) has nothing to unwind: its
	 * walk needs no space. */
	bool gone = idmap_get(&l->exited, ev->pid) != IDMAP_NONE;
	if (gone && ev->regs_abi) {
		l->st.raw_exited++;
		return l->emit(ev->raw, ev->size, l->arg);
	}
	uint64_t t0 = thread_ns();
	struct unw_proc *p = gone ? NULL : unw_procs_get(&l->procs, ev->pid);
	if (!gone && !p)
		return err_set(-ENOMEM, "out of memory");
	const struct unw_arch *a = unw_ctx_arch(l->ctx);
	struct unw_regs regs;
	unw_regs_from_perf(a, ev->regs_abi, ev->regs_mask, ev->regs, &regs);
	enum unw_end end;
	size_t n = unw_unwind(l->ctx, p ? &p->space : &l->no_space, &regs, ev->stack,
			      ev->stack_total, l->frames, MAX_FRAMES, &end);
	uint64_t *raw = keep_raw(l, ev, regs.r[a->sp], n, end);
	if (raw) {
		++*raw;
		l->st.unwind_ns += thread_ns() - t0;
		return l->emit(ev->raw, ev->size, l->arg);
	}
	for (size_t i = 0; i < n; i++)
		l->pcs[i] = l->frames[i].pc;
	size_t size;
	int r = perf_sample_unwound(ev, l->pcs, n, unw_walk_note(end, l->frames, n), l->out,
				    sizeof(l->out), &size);
	l->st.unwind_ns += thread_ns() - t0;
	if (r) {
		l->st.dropped++;
		return 0;
	}
	l->st.samples++;
	l->st.bytes_in += ev->size;
	l->st.bytes_out += size;
	return l->emit(l->out, size, l->arg);
}

/* A process that maps a jitdump's marker, and its children (which inherit the JIT's code
 * and the mapping), until it execs. */
static int note_jitdump(struct rec_live *l, const struct perf_event_rec *ev)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return perf_jitdump_marker(ev->filename) ? idmap_put(&l->jitdump, ev->pid, 1) : 0;
	case PERF_RECORD_COMM:
		if ((ev->misc & PERF_RECORD_MISC_COMM_EXEC) && ev->pid == ev->tid)
			idmap_del(&l->jitdump, ev->pid);
		return 0;
	case PERF_RECORD_FORK:
		return ev->pid != ev->ppid && idmap_get(&l->jitdump, ev->ppid) != IDMAP_NONE
			       ? idmap_put(&l->jitdump, ev->pid, 1)
			       : 0;
	}
	return 0;
}

/* A process's main thread exited: its space is freed, and its remaining threads' samples
 * keep their copies. */
static int process_exited(struct rec_live *l, uint32_t pid)
{
	unw_procs_exit(&l->procs, pid);
	idmap_del(&l->jitdump, pid);
	if (l->exited.n >= EXITED_MAX)
		idmap_free(&l->exited);
	return idmap_put(&l->exited, pid, 1);
}

/* The address-space records change the processes' spaces before going out. */
static int track(struct rec_live *l, const struct perf_event_rec *ev)
{
	int r = 0;
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (idmap_get(&l->exited, ev->pid) == IDMAP_NONE)
			r = unw_procs_map(l->ctx, &l->procs, ev->pid, ev->map_start, ev->map_len,
					  ev->map_pgoff, ev->map_prot, ev->filename);
		break;
	case PERF_RECORD_EXIT:
		if (ev->pid == ev->tid)
			r = process_exited(l, ev->pid);
		break;
	case PERF_RECORD_COMM:
		/* An exec from a thread other than the main one ends the main thread first
		 * (its EXIT record comes before): the process lives on in the new image. */
		if ((ev->misc & PERF_RECORD_MISC_COMM_EXEC) && ev->pid == ev->tid) {
			idmap_del(&l->exited, ev->pid);
			r = unw_procs_exec(&l->procs, ev->pid);
		}
		break;
	case PERF_RECORD_FORK:
		if (ev->pid != ev->ppid) /* a new process, perhaps with an old one's pid */
			idmap_del(&l->exited, ev->pid);
		r = unw_procs_fork(&l->procs, ev->pid, ev->ppid);
		break;
	}
	return r == -ENOMEM ? err_set(r, "out of memory") : r;
}

static int on_ordered(const void *rec, size_t size, uint32_t flags, void *arg)
{
	struct rec_live *l = arg;
	struct perf_event_rec ev;
	if (flags & REC_LIVE_OPAQUE)
		return l->emit(rec, size, l->arg);
	if (perf_record_decode(l->name, 0, &l->attr, 1, rec, size, &ev)) {
		err_clear();
		const struct perf_event_header *h = rec;
		if (h->type == PERF_RECORD_SAMPLE) { /* not in the layout the file says */
			l->st.dropped++;
			return 0;
		}
		return l->emit(rec, size, l->arg);
	}
	if (ev.type == PERF_RECORD_SAMPLE)
		return unwind_sample(l, &ev);
	int r = track(l, &ev);
	if (!r && note_jitdump(l, &ev))
		r = err_set(-ENOMEM, "out of memory");
	return r ? r : l->emit(rec, size, l->arg);
}

int rec_live_new(const char *name, const struct perf_event_attr *attr,
		 int (*emit)(const void *rec, size_t size, void *arg), void *arg,
		 struct rec_live **out)
{
	if (!(attr->sample_type & PERF_SAMPLE_STACK_USER) ||
	    !(attr->sample_type & PERF_SAMPLE_REGS_USER) ||
	    !perf_sample_unwound_supports(attr->sample_type))
		return err_set(-EINVAL, "unwinding while recording: the sampling event has no user "
					"stack copies to unwind (with --call-graph fp the kernel's chain "
					"is already what is stored)");
	struct rec_live *l = calloc(1, sizeof(*l));
	if (!l)
		return err_set(-ENOMEM, "out of memory");
	l->name = name;
	l->attr.attr = *attr;
	l->emit = emit;
	l->arg = arg;
	if (unw_ctx_new(UNW_AUTO, &l->ctx)) {
		free(l);
		return err_set(-ENOMEM, "out of memory");
	}
	unw_ctx_bound_unused(l->ctx, UNUSED_MODULES);
	rec_reorder_init(&l->q, QUEUE_MAX_BYTES, on_ordered, l);
	*out = l;
	return 0;
}

/* A record's time by the sampling events' layout: 0 when it does not decode (it then goes
 * out first, and is dealt with as on_ordered says). */
static uint64_t time_of(struct rec_live *l, const void *rec, size_t size)
{
	struct perf_event_rec ev;
	if (perf_record_decode(l->name, 0, &l->attr, 1, rec, size, &ev)) {
		err_clear();
		return 0;
	}
	return ev.time;
}

int rec_live_add(struct rec_live *l, const void *rec, size_t size, uint32_t flags,
		 uint64_t time)
{
	if (!(flags & REC_LIVE_OPAQUE))
		time = time_of(l, rec, size);
	if (time > l->last_time)
		l->last_time = time;
	return rec_reorder_push(&l->q, time, rec, size, flags);
}

int rec_live_round(struct rec_live *l, uint64_t round_start)
{
	uint64_t until;
	if (round_start) {
		until = round_start > ROUND_MARGIN_NS ? round_start - ROUND_MARGIN_NS : 0;
	} else { /* perf's rule: what the round before had is all in now */
		until = l->prev_round_time;
		l->prev_round_time = l->last_time;
	}
	return rec_reorder_flush(&l->q, until);
}

int rec_live_finish(struct rec_live *l)
{
	return rec_reorder_flush(&l->q, UINT64_MAX);
}

int rec_live_expect_build_id(struct rec_live *l, const char *path, const uint8_t *id,
			     size_t len)
{
	return unw_ctx_expect_build_id(l->ctx, path, id, len) ? err_set(-ENOMEM, "out of memory")
							       : 0;
}

void rec_live_stats(const struct rec_live *l, struct rec_live_stats *out)
{
	*out = l->st;
	out->forced = l->q.forced;
	out->peak_bytes = l->q.peak_bytes;
}

int rec_live_modules(struct rec_live *l, const struct rec_modules *m, size_t *seen)
{
	for (; *seen < m->n; ++*seen) {
		const struct rec_module *e = &m->v[*seen];
		int r = e->len ? rec_live_expect_build_id(l, e->path, e->id, e->len) : 0;
		if (r)
			return r;
	}
	return 0;
}

uint64_t rec_live_clock(const struct perf_event_attr *attr)
{
	struct timespec t;
	if (!attr->use_clockid || attr->clockid != CLOCK_MONOTONIC ||
	    clock_gettime(CLOCK_MONOTONIC, &t))
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

void rec_live_result(const struct rec_live *l, struct rec_result *res)
{
	struct rec_live_stats st;
	rec_live_stats(l, &st);
	const struct unw_stats *u = unw_ctx_stats(l->ctx);
	res->live = (struct rec_live_result){ .samples = st.samples, .dropped = st.dropped,
					      .complete = u->complete, .truncated = u->truncated,
					      .unwind_ns = st.unwind_ns,
					      .raw_agent = st.raw_agent,
					      .raw_jitdump = st.raw_jitdump,
					      .raw_exited = st.raw_exited,
					      .peak_bytes = st.peak_bytes, .forced = st.forced };
	res->bytes -= st.bytes_in - st.bytes_out;
	res->samples -= st.dropped;
}

void rec_live_free(struct rec_live *l)
{
	if (!l)
		return;
	rec_reorder_free(&l->q);
	unw_procs_free(&l->procs);
	idmap_free(&l->jitdump);
	idmap_free(&l->exited);
	unw_ctx_free(l->ctx);
	free(l);
}
