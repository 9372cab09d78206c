/*
 * Samples the interpreter threads take of themselves (opts.caller_samples): each thread
 * appends its state to a ring of its own (tally_agent_sample, which a timer's signal
 * handler or an interpreter's hook calls: no lock, no allocation, async-signal-safe), and
 * the sampler thread, waking every flush_ms, writes the rings to the stream as it writes
 * its own samples, merged in the order of their times. One producer and one consumer per
 * ring: head is written by the thread only, tail by the sampler only, each published with
 * a release store and read with an acquire load by the other side.
 */
#include "agent/agent_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"

#define RING_MIN (256 * 1024) /* 100 ms at 1 kHz of stacks 150 frames deep */

static size_t record_size(uint32_t n)
{
	return sizeof(struct agent_ring_rec) + (size_t)n * sizeof(struct tally_agent_frame);
}

int agent_ring_alloc(struct tally_agent *a, uint32_t i)
{
	struct agent_ring *r = &a->rings[i];
	if (r->bytes)
		return 0;
	uint64_t size = RING_MIN;
	while (size < 4 * record_size(a->o.max_depth))
		size *= 2;
	unsigned char *b = malloc(size);
	if (!b)
		return err_set(-ENOMEM, "out of memory");
	r->size = size;
	r->head = r->tail = 0;
	/* last: the sampler drains rings whose bytes it sees */
	__atomic_store_n(&r->bytes, b, __ATOMIC_RELEASE);
	return 0;
}

/* Bytes at pos (a byte count) of r, wrapping. */
static void ring_put(struct agent_ring *r, uint64_t pos, const void *src, size_t n)
{
	size_t at = (size_t)(pos & (r->size - 1)), first = r->size - at < n ? r->size - at : n;
	memcpy(r->bytes + at, src, first);
	memcpy(r->bytes, (const unsigned char *)src + first, n - first);
}

static void ring_get(const struct agent_ring *r, uint64_t pos, void *dst, size_t n)
{
	size_t at = (size_t)(pos & (r->size - 1)), first = r->size - at < n ? r->size - at : n;
	memcpy(dst, r->bytes + at, first);
	memcpy((unsigned char *)dst + first, r->bytes, n - first);
}

int tally_agent_sample(struct tally_agent_thread *pub)
{
	struct agent_thread *t = (struct agent_thread *)pub;
	struct tally_agent *a = t->agent;
	if (!a->o.caller_samples)
		return -EINVAL;
	if (!__atomic_load_n(&a->taking, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&a->paused, __ATOMIC_RELAXED))
		return 0;
	struct agent_ring *r = &a->rings[t - a->threads];
	/* On the thread itself the stack is not changing under us, unless we interrupted
	 * the change: then it is half written, and no retry can finish it. */
	uint32_t seq = __atomic_load_n(&pub->seq, __ATOMIC_RELAXED);
	uint32_t depth = __atomic_load_n(&pub->depth, __ATOMIC_RELAXED);
	uint32_t n = depth < pub->max_depth ? depth : pub->max_depth;
	uint64_t head = r->head, tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	size_t need = record_size(n);
	if ((seq & 1) || !r->bytes || r->size - (head - tail) < need) {
		__atomic_fetch_add(&a->dropped, 1, __ATOMIC_RELAXED);
		return -EAGAIN;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	struct agent_ring_rec rec = {
		.time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
		.pc = __atomic_load_n(&pub->pc, __ATOMIC_RELAXED),
		.tid = t->tid,
		.depth = depth,
		.n = n,
	};
	ring_put(r, head, &rec, sizeof(rec));
	ring_put(r, head + sizeof(rec), pub->frames, (size_t)n * sizeof(*pub->frames));
	__atomic_store_n(&r->head, head + need, __ATOMIC_RELEASE);
	return 0;
}

void agent_rings_reset(struct tally_agent *a)
{
	for (uint32_t i = 0; a->rings && i < a->o.max_threads; i++)
		__atomic_store_n(&a->rings[i].tail, __atomic_load_n(&a->rings[i].head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
}

/* The oldest record of every ring, until none is left: rings are few, a scan of them per
 * sample is cheap next to writing its line. */
void agent_rings_drain(struct tally_agent *a)
{
	struct agent_sample *s = &a->sample;
	for (;;) {
		struct agent_ring *oldest = NULL;
		struct agent_ring_rec rec = { 0 }, next;
		for (uint32_t i = 0; i < a->o.max_threads; i++) {
			struct agent_ring *r = &a->rings[i];
			if (!__atomic_load_n(&r->bytes, __ATOMIC_ACQUIRE) ||
			    r->tail == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE))
				continue;
			ring_get(r, r->tail, &next, sizeof(next));
			if (!oldest || next.time_ns < rec.time_ns) {
				oldest = r;
				rec = next;
			}
		}
		if (!oldest)
			return;
		/* n was at most the thread's max_depth, the agent's */
		ring_get(oldest, oldest->tail + sizeof(rec), s->frames, (size_t)rec.n * sizeof(*s->frames));
		__atomic_store_n(&oldest->tail, oldest->tail + record_size(rec.n), __ATOMIC_RELEASE);
		s->tid = rec.tid;
		s->pc = rec.pc;
		s->depth = rec.depth;
		s->n = rec.n;
		if (s->depth) /* in the VM */
			agent_sampler_emit(a, s);
	}
}

void agent_rings_free(struct tally_agent *a)
{
	for (uint32_t i = 0; a->rings && i < a->o.max_threads; i++)
		free(a->rings[i].bytes);
	free(a->rings);
	a->rings = NULL;
}
