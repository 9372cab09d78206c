/*
 * Threads and the samples' timeline: the thread table (interned by pid and tid) and the
 * log of samples added with their thread and time. The weight itself goes into the tree
 * as for any stack; the log only says where each sample's weight went, so that outputs
 * with a notion of threads or of time can split the tree again.
 */
#include "profile/prof_internal.h"

#include <errno.h>
#include <string.h>

#include "base/err.h"

struct thread_key {
	const struct prof *p;
	uint32_t pid, tid;
};

static bool thread_eq(const void *ctx, uint32_t id)
{
	const struct thread_key *k = ctx;
	const struct prof_thread *t = &k->p->threads.v[id];
	return t->pid == k->pid && t->tid == k->tid;
}

uint32_t prof_thread(struct prof *p, uint32_t pid, uint32_t tid, const char *name)
{
	struct thread_key k = { p, pid, tid };
	uint32_t h = idhash_mix(pid, tid);
	uint32_t id = idhash_find(&p->thread_index, h, thread_eq, &k);
	uint32_t sname = prof_intern_cstr(p, name);
	if (sname == PROF_NONE)
		return PROF_NONE;
	if (id != PROF_NONE) {
		p->threads.v[id].name = sname;
		return id;
	}
	id = (uint32_t)p->threads.n;
	struct prof_thread *t = vec_push(&p->threads);
	if (!t || idhash_add(&p->thread_index, h, id)) {
		if (t)
			p->threads.n--;
		err_set(-ENOMEM, "out of memory building the profile");
		return PROF_NONE;
	}
	*t = (struct prof_thread){ pid, tid, sname };
	return id;
}

size_t prof_nthreads(const struct prof *p)
{
	return p->threads.n;
}

const struct prof_thread *prof_thread_at(const struct prof *p, uint32_t id)
{
	return &p->threads.v[id];
}

int prof_log_sample(struct prof *p, const struct prof_sample *s, const int64_t *weights)
{
	size_t nm = p->metrics.n;
	struct prof_sample *e = vec_push(&p->samples);
	if (!e || prof_grow_i64(&p->sample_w, p->samples.n * nm)) {
		if (e)
			p->samples.n--;
		return err_set(-ENOMEM, "out of memory building the profile");
	}
	*e = *s;
	memcpy(p->sample_w.v + (p->samples.n - 1) * nm, weights, nm * sizeof(*weights));
	return 0;
}

int prof_add_sample(struct prof *p, uint32_t thread, uint64_t time,
		    const struct prof_loc *stack, size_t n, const int64_t *weights,
		    uint32_t *kept)
{
	if (thread >= p->threads.n)
		return err_set(-EINVAL, "thread %u does not exist", thread);
	struct prof_sample s = { .time = time, .thread = thread };
	int rc = prof_add_stack_at(p, stack, n, weights, kept, &s.pcw);
	if (rc)
		return rc;
	s.node = p->pcw_node.v[s.pcw];
	return prof_log_sample(p, &s, weights);
}

size_t prof_nsamples(const struct prof *p)
{
	return p->samples.n;
}

const struct prof_sample *prof_sample_at(const struct prof *p, size_t i)
{
	return &p->samples.v[i];
}

const int64_t *prof_sample_weights(const struct prof *p, size_t i)
{
	return p->sample_w.v + i * p->metrics.n;
}

void prof_set_last_sample_gil(struct prof *p, enum prof_gil gil)
{
	if (p->samples.n)
		p->samples.v[p->samples.n - 1].gil = (uint8_t)gil;
}

const char *prof_gil_name(enum prof_gil g)
{
	return g == PROF_GIL_HELD ? "held" : g == PROF_GIL_NOT_HELD ? "not held" : NULL;
}
