/*
 * Recording at USDT probe hits (usdt.h). The probes session (probes/probes.h) finds the
 * probe sites, attaches one uprobe event per site and task, and follows the target; here
 * each event is made a sampling one (sample_period 1: every hit) with the native
 * recorder's sample type, and its records go into the perf.data.
 *
 * Why per-task events and ptrace, not per-CPU events (pid -1) filtered to the target: a
 * uprobe event without a task is installed in every process that maps the file, so its
 * semaphore would be raised and its breakpoint hit in every python3.11 (or every process,
 * for a libc probe) on the machine while tally records, and all those hits would cross the
 * ring buffers only to be dropped. A per-task event touches the target alone. Its cost is
 * that uprobe events cannot be inherited (probes/attach.h says why), so new threads and
 * children are followed with ptrace and get their events before their first instruction.
 *
 * One ring buffer per task (the events of all sites of a task share it): a per-task event
 * on any CPU can only share a ring with events of the same task. That the rings never
 * overflow is the session's doing (the pacer events of probes/session.c).
 *
 * Stacks are unwound as the hits are recorded, as session.c does for timer samples
 * (record/live.h), unless o->unwound is false: the records of every ring go through the
 * live unwinder, a drain of all the rings being its round.
 */
#include "record/usdt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/vec.h"
#include "probes/probes.h"
#include "record/live.h"
#include "record/modules.h"
#include "record/sideband.h"

/* 16 MiB per task while there are at most 16: a task stops for tally to drain whenever it
 * has filled half its ring (probes/session.c), every 1000 samples of 8 KiB, so the size
 * sets how often the target waits, not whether samples are lost. Tasks beyond get 1 MiB, so
 * that a program with thousands of threads does not pin gigabytes. A task's ring goes when
 * the task ends. */
#define RING_PAGES 4096
#define RING_PAGES_LATER 256
#define BIG_RINGS 16
#define MIN_RING_PAGES 16
/* perf's own default for --call-graph dwarf: probe hits can come millions of times a
 * second, and every byte of stack copied is copied at each of them. */
#define DEFAULT_STACK 8192

struct task_ring {
	pid_t tid;
	struct perf_ring ring;
};

struct usdt_rec {
	struct perf_event_attr attr;
	struct perf_writer *w;
	struct rec_modules modules;
	struct rec_result *res;
	VEC(struct task_ring) rings;
	struct rec_live *live; /* NULL: stacks kept raw */
	size_t live_modules;   /* of modules, those whose build-ids live has */
};

bool rec_usdt_pattern(const char *spec, char *out, size_t len)
{
	if (strncmp(spec, "usdt:", 5))
		return false;
	spec += 5;
	snprintf(out, len, strchr(spec, ':') ? "%s" : "%s:*", spec);
	return true;
}

static int store(const void *rec, size_t size, void *arg)
{
	struct usdt_rec *u = arg;
	return perf_writer_add(u->w, rec, size);
}

/* A record of the rings or of /proc: to the file, or first through the live unwinder (the
 * mappings' build-ids handed to it before, so that it opens what the process mapped). */
static int emit(const void *rec, size_t size, void *arg)
{
	struct usdt_rec *u = arg;
	rec_account(u->res, &u->modules, rec, size);
	if (!u->live)
		return store(rec, size, u);
	int r = rec_live_modules(u->live, &u->modules, &u->live_modules);
	return r ? r : rec_live_add(u->live, rec, size, 0, 0);
}

static int on_event(void *ctx, int fd, pid_t tid, bool first)
{
	struct usdt_rec *u = ctx;
	if (!first) {
		for (size_t i = u->rings.n; i-- > 0;)
			if (u->rings.v[i].tid == tid)
				return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, u->rings.v[i].ring.fd) < 0
					       ? err_set(-errno, "perf_event_open: redirecting output: %s",
							 strerror(errno))
					       : 0;
		return err_set(-EINVAL, "thread %d: no ring buffer", (int)tid);
	}
	if (!vec_reserve(&u->rings, 1))
		return err_set(-ENOMEM, "out of memory");
	size_t want = u->rings.n < BIG_RINGS ? RING_PAGES : RING_PAGES_LATER, pages = want;
	struct task_ring *t = &u->rings.v[u->rings.n];
	int r;
	while ((r = perf_ring_map(&t->ring, fd, pages)) && pages > MIN_RING_PAGES)
		pages /= 2;
	if (r)
		return r;
	if (pages != want)
		err_clear(); /* the larger sizes' failures: a smaller ring serves */
	t->tid = tid;
	u->rings.n++;
	return 0;
}

/* Samples of the largest size (registers, the whole stack copy, a short callchain) that
 * tid's ring holds. */
static uint64_t capacity(void *ctx, pid_t tid)
{
	struct usdt_rec *u = ctx;
	uint64_t sample = 512 + u->attr.sample_stack_user;
	for (size_t i = u->rings.n; i-- > 0;)
		if (u->rings.v[i].tid == tid)
			return u->rings.v[i].ring.size / sample;
	return 1;
}

static void task_done(void *ctx, pid_t tid)
{
	struct usdt_rec *u = ctx;
	for (size_t i = 0; i < u->rings.n; i++)
		if (u->rings.v[i].tid == tid) {
			perf_ring_unmap(&u->rings.v[i].ring);
			u->rings.v[i] = u->rings.v[--u->rings.n];
			return;
		}
}

/* 1 once the file cannot be written (a full disk): the session stops, the target runs on,
 * and what was written stays a valid recording (perf_writer_close). */
static int drain(void *ctx)
{
	struct usdt_rec *u = ctx;
	int r = 0;
	for (size_t i = 0; !r && i < u->rings.n; i++)
		r = perf_ring_drain(&u->rings.v[i].ring, emit, u);
	if (!r && u->live)
		r = rec_live_round(u->live, 0);
	return r && perf_writer_error(u->w) ? 1 : r;
}

/* The native recorder's sample (session.c), taken at every hit: user registers and stack
 * for DWARF unwinding, or the kernel's frame-pointer walk with --call-graph fp. */
static void setup_attr(const struct rec_opts *o, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (!o->fp) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = PERF_X86_REGS_USER_MASK;
		a->sample_stack_user = o->stack_size ? o->stack_size : DEFAULT_STACK;
		a->exclude_callchain_user = 1;
	}
	a->mmap = a->mmap2 = a->mmap_data = 1;
	a->comm = a->comm_exec = a->task = 1;
	a->sample_id_all = 1;
	/* Samples are taken in the target's own context: no kernel stack to walk. */
	a->exclude_callchain_kernel = 1;
}

/* The file's attribute: the uprobe PMU, without the pointer and offset of any one site;
 * its samples as the live unwinder stores them, when it does. */
static int open_writer(struct usdt_rec *u, const struct rec_opts *o)
{
	struct uprobe_pmu pmu;
	int r = uprobe_pmu_probe(&pmu);
	if (!r && o->unwound)
		r = rec_live_new(o->output, &u->attr, store, u, &u->live);
	if (r)
		return r;
	struct perf_event_attr file = u->attr;
	if (u->live)
		perf_sample_attr_unwound(&u->attr, &file);
	file.type = (uint32_t)pmu.type;
	return perf_writer_open(o->output, &file, &u->w);
}

/* What the live unwinder still holds, then its figures (res's samples and bytes made the
 * file's). */
static int finish_live(struct usdt_rec *u)
{
	if (!u->live)
		return 0;
	int r = rec_live_finish(u->live);
	rec_live_result(u->live, u->res);
	return r;
}

/* What the kernel reported before the events existed: mappings and thread names (threads
 * that come later inherit theirs through FORK records). */
static int synth_comm(int pid, int tid, void *arg)
{
	return rec_synth_comm(pid, tid, emit, arg);
}

static int synth_process(struct usdt_rec *u, int pid)
{
	int r = rec_each_task(pid, synth_comm, u);
	return r ? r : rec_synth_maps(pid, emit, u);
}

int rec_usdt_run(const struct rec_opts *o, char *const *patterns, size_t npatterns,
		 struct rec_result *res, struct usdt_count_result *hits)
{
	memset(res, 0, sizeof(*res));
	memset(hits, 0, sizeof(*hits));
	if (o->npids > 1)
		return err_set(-EINVAL, "-e usdt: records one process (-p PID) or one command");
	struct usdt_rec u = { .res = res };
	setup_attr(o, &u.attr);
	int r = open_writer(&u, o);
	if (!r && o->npids)
		r = synth_process(&u, o->pids[0]);
	if (r) {
		if (u.w)
			perf_writer_abort(u.w);
		rec_live_free(u.live);
		return r;
	}
	struct usdt_recorder hooks = { &u.attr, on_event, capacity, task_done, drain, &u };
	struct usdt_count_opts co = {
		.pid = o->npids ? o->pids[0] : 0,
		.cmd = o->argv,
		.patterns = patterns,
		.npatterns = npatterns,
		.recorder = &hooks,
		.log = o->quiet ? NULL : stderr,
	};
	r = usdt_count(&co, hits);
	if (!r)
		r = finish_live(&u);
	if (!r && (res->write_error = perf_writer_error(u.w)))
		res->samples = perf_writer_samples(u.w);
	if (!r) {
		rec_modules_write(&u.modules, u.w, true);
		r = perf_writer_close(u.w, NULL, 0);
		if (!r)
			rec_modules_cache_debug(&u.modules);
	} else {
		perf_writer_abort(u.w);
	}
	for (size_t i = 0; i < u.rings.n; i++)
		perf_ring_unmap(&u.rings.v[i].ring);
	vec_free(&u.rings);
	rec_modules_free(&u.modules);
	rec_live_free(u.live);
	int st = hits->cmd_status;
	if (o->argv)
		res->exit_status = WIFEXITED(st)     ? WEXITSTATUS(st)
				   : WIFSIGNALED(st) ? 128 + WTERMSIG(st)
						     : 1;
	return r;
}
