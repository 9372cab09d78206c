/*
 * The sampler thread and the folded stream. Each tick, on an absolute deadline of the
 * monotonic clock (start + k periods) moved by a random jitter of up to a quarter period
 * either way, so that a program with a period of its own is not sampled in lockstep with
 * it, the thread reads every registered thread's state and appends one folded line per
 * sample to a buffer that start allocated: reading takes no lock and allocates nothing.
 * A state is read between two equal even values of its sequence word (the writer makes it
 * odd while its stack changes); a stack that keeps changing through READ_TRIES reads is
 * dropped and counted. The buffer is written at least every flush_ms with write(2), so a
 * process killed at any point leaves whole lines up to the last flush (docs/agent.md says
 * why folded stacks: a pprof or perf.data file needs a header or trailer written last).
 *
 * A thread is sampled at a tick only when it ran since the previous one (its published
 * state changed, or its CPU clock moved): a thread that waits, or that the machine's other
 * work keeps off the CPU, would otherwise give the same instant again and again, and its
 * samples would come in bursts, not independently.
 *
 * A line is "thread TID;OUTER;...;INNER 1": frames by registered name (";" and line breaks
 * in names become "_"), "[unregistered]" for an id no longer known, "[truncated]" innermost
 * when the stack was deeper than max_depth. Lines are in the order the samples were taken
 * (the format has no field for a time).
 *
 * With sample_pprof, the sampler also adds each sample to a profile with its pcs (the
 * published pc innermost, each caller at the call site the frame above was pushed with)
 * and their lines, written as pprof at stop: the per-instruction view of the samples,
 * which a folded line cannot hold, but which only a clean stop writes.
 *
 * With caller_samples the threads take their samples themselves (ring.c) and this thread
 * takes none: it waits flush_ms at a time (stop wakes it) and writes what their rings
 * hold, through the same formatting.
 */
#include "agent/agent_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/err.h"
#include "profile/profile.h"
#include "report/report.h"

#define NAME_MAX_BYTES 256
/* A push or pop takes nanoseconds; a stack still changing after this many reads (a few
 * microseconds) belongs to a writer the machine stopped in the middle: dropped, counted. */
#define READ_TRIES 1000
#define BUF_MIN (256 * 1024)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* xorshift64: the jitter needs no quality beyond not being periodic. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A pause between reads of a stack being changed, for the writer to finish. */
static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Copies t's stack and pc into s; false when it kept changing. */
static bool read_thread(struct agent_thread *t, struct agent_sample *s, uint32_t max_depth)
{
	for (int tries = 0; tries < READ_TRIES; tries++) {
		uint32_t seq = __atomic_load_n(&t->pub.seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			relax();
			continue;
		}
		uint32_t depth = __atomic_load_n(&t->pub.depth, __ATOMIC_RELAXED);
		uint32_t n = depth < max_depth ? depth : max_depth;
		for (uint32_t i = 0; i < n; i++) {
			s->frames[i].function =
				__atomic_load_n(&t->pub.frames[i].function, __ATOMIC_RELAXED);
			s->frames[i].call_pc = __atomic_load_n(&t->pub.frames[i].call_pc, __ATOMIC_RELAXED);
		}
		s->pc = __atomic_load_n(&t->pub.pc, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&t->pub.seq, __ATOMIC_RELAXED) == seq) {
			s->depth = depth;
			s->n = n;
			s->tid = t->tid;
			return true;
		}
	}
	return false;
}

/* Writes the buffer out; false when the stream failed (the data is dropped). */
static bool flush(struct tally_agent *a)
{
	size_t off = 0;
	while (off < a->len) {
		ssize_t w = write(a->fd, a->buf + off, a->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			a->len = 0;
			return false;
		}
		off += (size_t)w;
	}
	a->len = 0;
	return true;
}

static void put(struct tally_agent *a, const char *s, size_t n)
{
	memcpy(a->buf + a->len, s, n);
	a->len += n;
}

static void put_name(struct tally_agent *a, const char *name)
{
	size_t n = strnlen(name, NAME_MAX_BYTES);
	char *o = a->buf + a->len;
	for (size_t i = 0; i < n; i++)
		o[i] = name[i] == ';' || name[i] == '\n' || name[i] == '\r' ? '_' : name[i];
	a->len += n;
	if (!n)
		put(a, "[unnamed]", 9);
}

/* The longest line a sample can make: what start sized the buffer from. */
static size_t max_line(uint32_t max_depth)
{
	return 64 + ((size_t)max_depth + 1) * (NAME_MAX_BYTES + 1);
}

static void put_sample(struct tally_agent *a, const struct agent_sample *s)
{
	if (a->cap - a->len < max_line(a->o.max_depth))
		flush(a);
	char num[32];
	const char *sep = "";
	if (!a->o.omit_thread) {
		put(a, num, (size_t)snprintf(num, sizeof(num), "thread %d", (int)s->tid));
		sep = ";";
	}
	for (uint32_t i = 0; i < s->n; i++) {
		put(a, sep, strlen(sep));
		const struct agent_fn *f = agent_fn_get(a, s->frames[i].function);
		put_name(a, f ? f->name : "[unregistered]");
		sep = ";";
	}
	if (s->depth > s->n) {
		put(a, sep, strlen(sep));
		put(a, "[truncated]", 11);
	}
	put(a, " 1\n", 3);
}

static uint32_t named_frame(struct prof *p, enum prof_kind kind, const char *name)
{
	struct prof_frame_desc d = { .kind = kind, .function = name, .module = PROF_NONE };
	return prof_frame(p, &d);
}

/* One sample into sprof, innermost frame first. */
static int add_to_profile(struct tally_agent *a, const struct agent_sample *s)
{
	struct prof *p = a->sprof;
	struct prof_loc *l = a->locs;
	size_t n = 0;
	if (s->depth > s->n)
		l[n++] = (struct prof_loc){ named_frame(p, PROF_TRUNCATED, "[truncated]"), 0, 0 };
	for (uint32_t i = s->n; i-- > 0;) {
		const struct agent_fn *f = agent_fn_get(a, s->frames[i].function);
		uint64_t pc = i + 1 == s->depth ? s->pc : i + 1 < s->n ? s->frames[i + 1].call_pc : 0;
		if (pc == TALLY_AGENT_PC_ENTRY) /* pushed, its first instruction not begun */
			pc = f ? f->start : 0;
		l[n++] = (struct prof_loc){ agent_fn_frame(p, f), f ? agent_fn_line(f, pc) : 0, pc };
	}
	if (!a->o.omit_thread) {
		char name[32];
		snprintf(name, sizeof(name), "thread %d", (int)s->tid);
		l[n++] = (struct prof_loc){ named_frame(p, PROF_NATIVE, name), 0, 0 };
	}
	for (size_t i = 0; i < n; i++)
		if (l[i].frame == PROF_NONE)
			return -ENOMEM;
	int64_t one = 1;
	return prof_add_stack(p, l, n, &one);
}

/* Whether t ran since the previous tick. A published pc or stack that changed says so at
 * the cost of two loads; only an unchanged one (blocked, descheduled, or in a long native
 * call) is decided by the thread's CPU-time clock, a system call that was half of a tick's
 * work when made for every thread (bench/agent.sh). That clock was last read at the
 * previous tick only if the state was unchanged then too: at the first unchanged tick
 * after a change, the thread counts as having run, so a thread that blocks is sampled at
 * most once more at the instant it blocked, and one in a long native call loses no sample.
 * A clock that cannot be read is a thread that exited unregistered: its state is frozen,
 * sampling it would count an instant over and over. */
static bool ran_since_last_tick(struct agent_thread *t)
{
	uint64_t pc = __atomic_load_n(&t->pub.pc, __ATOMIC_RELAXED);
	uint32_t seq = __atomic_load_n(&t->pub.seq, __ATOMIC_RELAXED);
	bool changed = pc != t->last_pc || seq != t->last_seq;
	t->last_pc = pc;
	t->last_seq = seq;
	if (changed) {
		t->cpu_known = false;
		return true;
	}
	struct timespec cpu;
	if (clock_gettime(t->cpu_clock, &cpu))
		return false;
	uint64_t ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
	bool ran = !t->cpu_known || ns != t->last_cpu_ns;
	t->last_cpu_ns = ns;
	t->cpu_known = true;
	return ran;
}

static void sample_all(struct tally_agent *a)
{
	struct agent_sample *s = &a->sample;
	for (uint32_t i = 0; i < a->o.max_threads; i++) {
		struct agent_thread *t = &a->threads[i];
		if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) != THREAD_ACTIVE)
			continue;
		if (!ran_since_last_tick(t)) {
			__atomic_fetch_add(&a->off_cpu, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (!read_thread(t, s, a->o.max_depth)) {
			__atomic_fetch_add(&a->dropped, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (!s->depth) /* not in the VM */
			continue;
		agent_sampler_emit(a, s);
	}
}

void agent_sampler_emit(struct tally_agent *a, const struct agent_sample *s)
{
	put_sample(a, s);
	if (a->sprof && !a->sprof_rc)
		a->sprof_rc = add_to_profile(a, s);
	__atomic_fetch_add(&a->samples, 1, __ATOMIC_RELAXED);
}

static void flush_counted(struct tally_agent *a)
{
	if (!flush(a))
		__atomic_fetch_add(&a->dropped, 1, __ATOMIC_RELAXED);
}

/* With caller_samples: every flush_ms (or when stop says so), the rings to the stream. */
static void drain_rings(struct tally_agent *a)
{
	uint64_t every = a->o.flush_ms * 1000000ull, next = now_ns() + every;
	pthread_mutex_lock(&a->wake_lock);
	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };
		if (pthread_cond_timedwait(&a->wake, &a->wake_lock, &ts) == ETIMEDOUT) {
			agent_rings_drain(a);
			flush_counted(a);
			next += every;
			uint64_t now = now_ns();
			if (next < now)
				next = now + every;
		}
	}
	pthread_mutex_unlock(&a->wake_lock);
}

static void add_own_cpu(struct tally_agent *a)
{
	struct timespec cpu;
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu))
		__atomic_fetch_add(&a->sampler_cpu_ns,
				   (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec,
				   __ATOMIC_RELAXED);
}

static void *sampler_main(void *arg)
{
	struct tally_agent *a = arg;
	if (a->o.caller_samples) {
		drain_rings(a);
		add_own_cpu(a);
		return NULL;
	}
	uint64_t period = 1000000000u / a->o.freq_hz, flush_every = a->o.flush_ms * 1000000ull;
	uint64_t rnd = now_ns() | 1, start = now_ns(), last_flush = start;
	for (uint64_t k = 1; !__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE); k++) {
		uint64_t deadline = start + k * period;
		uint64_t jitter = next_random(&rnd) % (period / 2 + 1);
		uint64_t wake = deadline - period / 4 + jitter, now = now_ns();
		if (now > deadline + period) {
			/* late by whole periods: skip those deadlines, counting them */
			uint64_t behind = (now - deadline) / period;
			__atomic_fetch_add(&a->missed, behind, __ATOMIC_RELAXED);
			k += behind;
		} else if (wake > now) {
			sleep_until(wake);
		}
		if (!__atomic_load_n(&a->paused, __ATOMIC_RELAXED))
			sample_all(a);
		now = now_ns();
		if (now - last_flush >= flush_every) {
			flush_counted(a);
			last_flush = now;
		}
	}
	add_own_cpu(a);
	return NULL;
}

int agent_sampler_start(struct tally_agent *a)
{
	size_t need = max_line(a->o.max_depth) * 2;
	if (need < BUF_MIN)
		need = BUF_MIN;
	if (a->cap < need) {
		char *b = realloc(a->buf, need);
		if (!b)
			return err_set(-ENOMEM, "out of memory");
		a->buf = b;
		a->cap = need;
	}
	a->len = 0;
	if (a->o.sample_pprof) {
		prof_free(a->sprof);
		a->sprof = NULL;
		a->sprof_rc = 0;
		int mrc = prof_new(&a->sprof);
		if (!mrc && !a->locs && !(a->locs = calloc(a->o.max_depth + 2, sizeof(*a->locs))))
			mrc = -ENOMEM;
		mrc = mrc ? mrc : prof_add_metric(a->sprof, "samples", "count");
		mrc = mrc < 0 ? mrc : prof_set_source(a->sprof, "agent: sampled");
		if (mrc < 0)
			return err_set(mrc, "out of memory");
	}
	char *path = agent_path(a->o.output, getpid());
	if (!path)
		return -ENOMEM;
	a->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = a->fd < 0 ? err_set(-errno, "%s: %s", path, strerror(errno)) : 0;
	free(path);
	if (rc)
		return rc;
	__atomic_store_n(&a->stop, 0, __ATOMIC_RELEASE);
	if (a->o.caller_samples) {
		agent_rings_reset(a); /* samples queued while stopped are no part of this run */
		__atomic_store_n(&a->taking, 1, __ATOMIC_RELEASE);
	}
	/* The sampler takes no signal of the process: a handler the program installed for its
	 * own threads must not run on ours. It inherits this mask from its creator. */
	sigset_t all, before;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	rc = pthread_create(&a->sampler, NULL, sampler_main, a);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (rc) {
		__atomic_store_n(&a->taking, 0, __ATOMIC_RELEASE);
		close(a->fd);
		a->fd = -1;
		return err_set(-rc, "agent: cannot start the sampler thread: %s", strerror(rc));
	}
	a->sampler_started = true;
	return 0;
}

/* The sampled profile with its pcs, to sample_pprof (atomically). */
static int write_profile(struct tally_agent *a)
{
	if (a->sprof_rc)
		return err_set(a->sprof_rc, "agent: out of memory keeping the sampled profile");
	char *path = agent_path(a->o.sample_pprof, getpid());
	struct afile *f = NULL;
	int rc = path ? prof_finish(a->sprof) : -ENOMEM;
	if (!rc && !(rc = afile_open(path, 0, &f))) {
		/* commit frees f whether it succeeds or not */
		rc = rep_pprof(afile_stream(f), a->sprof);
		if (rc)
			afile_abort(f);
		else
			rc = afile_commit(f);
	}
	if (rc && path)
		err_prefix(rc, "%s", path);
	free(path);
	return rc;
}

int agent_sampler_stop(struct tally_agent *a)
{
	int rc = 0;
	__atomic_store_n(&a->taking, 0, __ATOMIC_RELEASE);
	if (a->sampler_started) {
		pthread_mutex_lock(&a->wake_lock);
		__atomic_store_n(&a->stop, 1, __ATOMIC_RELEASE);
		pthread_cond_signal(&a->wake);
		pthread_mutex_unlock(&a->wake_lock);
		pthread_join(a->sampler, NULL);
		a->sampler_started = false;
	}
	if (a->fd >= 0 && a->o.caller_samples)
		agent_rings_drain(a); /* the sampler is gone: the rings are ours */
	if (a->fd >= 0) {
		if (!flush(a))
			rc = err_set(-EIO, "agent: the sample stream could not be written");
		if (close(a->fd))
			rc = rc ? rc : err_set(-errno, "agent: closing the sample stream: %s",
					       strerror(errno));
		a->fd = -1;
	}
	if (a->sprof) {
		int prc = write_profile(a);
		rc = rc ? rc : prc;
		prof_free(a->sprof);
		a->sprof = NULL;
	}
	return rc;
}
