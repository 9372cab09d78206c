/*
 * The agent's lifecycle (include/tally/agent.h): options, start, pause, stop, free, the
 * paths with "%p" in them and where outputs nobody named go. start and stop run the
 * sampler (sampler.c) and write the exact profile (exact.c); a forked child's agents were
 * stopped by thread.c's fork handler.
 */
#include "agent/agent_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/opts.h"
#include "profile/profile.h"

char *agent_path(const char *pattern, pid_t pid)
{
	char num[16];
	int nlen = snprintf(num, sizeof(num), "%d", (int)pid);
	size_t n = 1;
	for (const char *s = pattern; *s; s++)
		n += s[0] == '%' && s[1] == 'p' ? (size_t)nlen : 1;
	char *out = malloc(n), *o = out;
	if (!out) {
		err_set(-ENOMEM, "out of memory");
		return NULL;
	}
	for (const char *s = pattern; *s; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			memcpy(o, num, (size_t)nlen);
			o += nlen;
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
	return out;
}

/* The sampler's wait for its next drain, on the monotonic clock (a child's anew: the
 * parent's sampler may have held the lock at the fork). */
void agent_wake_init(struct tally_agent *a)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&a->wake, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&a->wake_lock, NULL);
}

/* The agents made in this process so far: each one's number names its mixed-mode registry
 * (process-wide, like the list of live agents in thread.c). */
static uint32_t agents_made;

static int dup_opt(const char **s, const char *dflt)
{
	*s = strdup(*s ? *s : dflt);
	return *s ? 0 : err_set(-ENOMEM, "out of memory");
}

/* An output the caller did not name goes to $TMPDIR (else /tmp), never into the working
 * directory: a program the agent was loaded into (lua5.4 -ltally) may run anywhere, and
 * would leave a file wherever it ran (docs/agent.md). */
static int dup_output(const char **s, const char *file)
{
	if (*s)
		return dup_opt(s, NULL);
	const char *dir = secure_getenv("TMPDIR");
	char *path;
	if (asprintf(&path, "%s/%s", dir && *dir ? dir : "/tmp", file) < 0) {
		*s = NULL;
		return err_set(-ENOMEM, "out of memory");
	}
	*s = path;
	return 0;
}

static void free_opts(struct tally_agent_opts *o)
{
	free((char *)o->output);
	free((char *)o->exact_output);
	free((char *)o->exact_metric);
	free((char *)o->jit_dir);
	free((char *)o->sample_pprof);
	free((char *)o->listing);
}

/* Fills the defaults and checks the ranges. */
static int defaults(struct tally_agent_opts *o)
{
	if (!o->mode)
		o->mode = TALLY_AGENT_SAMPLE;
	if (o->mode & ~(unsigned)(TALLY_AGENT_SAMPLE | TALLY_AGENT_EXACT | TALLY_AGENT_MIXED))
		return err_set(-EINVAL, "agent: unknown mode bits %#x", o->mode);
	if (!o->freq_hz)
		o->freq_hz = 999;
	if (!o->flush_ms)
		o->flush_ms = 100;
	if (!o->max_threads)
		o->max_threads = 64;
	if (!o->max_depth)
		o->max_depth = 512;
	if (o->freq_hz > 100000 || o->max_threads > 4096 || o->max_depth > 65536)
		return err_set(-EINVAL, "agent: freq_hz (at most 100000), max_threads (4096) or "
					"max_depth (65536) out of range");
	return 0;
}

int tally_agent_new(const struct tally_agent_opts *opts, struct tally_agent **out)
{
	struct tally_agent *a = calloc(1, sizeof(*a));
	if (!a)
		return err_set(-ENOMEM, "out of memory");
	int rc = OPTS_READ(tally_agent_opts, caller_samples, &a->o, opts);
	struct tally_agent_opts *o = &a->o;
	if (rc || (rc = defaults(o))) {
		free(a);
		return rc;
	}
	const char *jit = o->jit_dir;
	o->jit_dir = NULL;
	if (o->sample_pprof && !(o->sample_pprof = strdup(o->sample_pprof)))
		rc = err_set(-ENOMEM, "out of memory");
	if (o->listing && !(o->listing = strdup(o->listing)))
		rc = err_set(-ENOMEM, "out of memory");
	/* Every string is copied, even after a failure, so that free_opts frees only copies. */
	const int copied[] = { dup_output(&o->output, "tally-agent-%p.folded"),
			       dup_output(&o->exact_output, "tally-agent-%p.pb.gz"),
			       dup_opt(&o->exact_metric, "instructions"), dup_opt(&jit, "/tmp") };
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
		rc = rc ? rc : copied[i];
	o->jit_dir = jit;
	a->threads = calloc(o->max_threads, sizeof(*a->threads));
	a->frames = calloc((size_t)o->max_threads * o->max_depth, sizeof(*a->frames));
	a->sample.frames = calloc(o->max_depth, sizeof(*a->sample.frames));
	if (o->caller_samples)
		a->rings = calloc(o->max_threads, sizeof(*a->rings));
	if (!rc && (!a->threads || !a->frames || !a->sample.frames ||
		    (o->caller_samples && !a->rings)))
		rc = err_set(-ENOMEM, "out of memory");
	if (rc) {
		free_opts(o);
		free(a->threads);
		free(a->frames);
		free(a->sample.frames);
		free(a->rings);
		free(a);
		return rc;
	}
	pthread_mutex_init(&a->lock, NULL);
	agent_wake_init(a);
	a->next_id = 1;
	a->fd = -1;
	a->perfmap_fd = -1;
	a->jitdump_fd = -1;
	a->vmdump_fd = -1;
	a->number = __atomic_add_fetch(&agents_made, 1, __ATOMIC_RELAXED);
	agent_live_add(a);
	*out = a;
	return 0;
}

int tally_agent_start(struct tally_agent *a)
{
	pthread_mutex_lock(&a->lock);
	int rc = 0;
	if (a->running)
		rc = err_set(-EALREADY, "agent: already started");
	else if (a->o.mode & TALLY_AGENT_SAMPLE)
		rc = agent_sampler_start(a);
	if (!rc)
		a->running = true;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int tally_agent_pause(struct tally_agent *a, bool paused)
{
	__atomic_store_n(&a->paused, paused, __ATOMIC_RELAXED);
	return 0;
}

int tally_agent_stop(struct tally_agent *a)
{
	pthread_mutex_lock(&a->lock);
	int rc = 0;
	if (!a->running) {
		rc = err_set(-EINVAL, "agent: not started");
	} else {
		a->running = false;
		if (a->o.mode & TALLY_AGENT_SAMPLE)
			rc = agent_sampler_stop(a);
		if (a->o.mode & TALLY_AGENT_EXACT) {
			int erc = agent_exact_write(a);
			rc = rc ? rc : erc;
		}
		if (a->o.listing) {
			int lrc = agent_listing_write(a);
			rc = rc ? rc : lrc;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

void tally_agent_free(struct tally_agent *a)
{
	if (!a)
		return;
	if (a->running)
		tally_agent_stop(a);
	agent_live_remove(a);
	for (uint32_t i = 0; i < a->o.max_threads; i++)
		agent_exact_thread_free(&a->threads[i]);
	agent_registry_free(a);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->wake_lock);
	pthread_cond_destroy(&a->wake);
	agent_rings_free(a);
	free_opts(&a->o);
	free(a->threads);
	free(a->frames);
	free(a->sample.frames);
	free(a->buf);
	free(a->locs);
	prof_free(a->sprof);
	free(a);
}

struct tally_agent_thread *tally_agent_loop_begin(struct tally_agent *a,
						  struct tally_agent_loop *loop,
						  struct tally_agent_frame *frames, uint32_t nframes)
{
	if (!a || !(a->o.mode & TALLY_AGENT_MIXED))
		return NULL;
	*loop = (struct tally_agent_loop){
		.self = (uint64_t)(uintptr_t)loop,
		.agent = a->number,
		.version = TALLY_AGENT_LOOP_VERSION,
		.state = { .max_depth = nframes, .frames = frames },
	};
	/* Last: a sample taken before this store sees no record, not half of one. */
	__atomic_store_n(&loop->magic, TALLY_AGENT_LOOP_MAGIC, __ATOMIC_RELEASE);
	return &loop->state;
}

int tally_agent_stats(struct tally_agent *a, struct tally_agent_stats *out)
{
	if (!out || out->sz < sizeof(out->sz))
		return err_set(-EINVAL, "agent: stats need their size");
	struct tally_agent_stats s = {
		.sz = out->sz,
		.samples = __atomic_load_n(&a->samples, __ATOMIC_RELAXED),
		.dropped = __atomic_load_n(&a->dropped, __ATOMIC_RELAXED),
		.missed = __atomic_load_n(&a->missed, __ATOMIC_RELAXED),
		.off_cpu = __atomic_load_n(&a->off_cpu, __ATOMIC_RELAXED),
		.sampler_cpu_ns = __atomic_load_n(&a->sampler_cpu_ns, __ATOMIC_RELAXED),
	};
	size_t n = out->sz < sizeof(s) ? out->sz : sizeof(s);
	memcpy(out, &s, n);
	return 0;
}
