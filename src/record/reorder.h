/*
 * The reorder queue of live unwinding (live.h): records of every CPU's ring, given back in
 * time order. Each ring is in time order but the rings are drained one after another, so
 * an MMAP2 on one CPU may be read after a sample on another that needs it. At the end of
 * each drain round everything timed at or before the moment the round began is in
 * (perf's finished-round rule, with the round's start for the bound): rec_reorder_flush
 * gives those back. The queue is bounded: past max_bytes its oldest records go out at
 * once (counted in forced), in order still, so memory holds however long the recording.
 *
 * Ownership: the queue owns copies of the records it holds.
 */
#ifndef TALLY_RECORD_REORDER_H
#define TALLY_RECORD_REORDER_H

#include <stddef.h>
#include <stdint.h>

/* Called with each record in time order; ties in the order they were pushed. A non-zero
 * return stops the flush and is returned (the record is dropped). */
typedef int (*rec_reorder_fn)(const void *rec, size_t size, uint32_t flags, void *arg);

struct rec_queued {
	uint64_t time, seq;
	uint8_t *rec;
	uint32_t size, flags;
};

struct rec_reorder {
	struct rec_queued *heap; /* a binary min-heap by (time, seq) */
	size_t n, cap;
	uint64_t seq;
	size_t bytes, max_bytes, peak_bytes;
	uint64_t forced; /* records given back early because the queue was full */
	rec_reorder_fn fn;
	void *arg;
};

void rec_reorder_init(struct rec_reorder *q, size_t max_bytes, rec_reorder_fn fn, void *arg);
/* Queues a copy of rec; flags are the caller's. 0, -ENOMEM, or what fn returned for a
 * record the bound pushed out. */
int rec_reorder_push(struct rec_reorder *q, uint64_t time, const void *rec, size_t size,
		     uint32_t flags);
/* Gives back every record timed at or before until (UINT64_MAX: all). */
int rec_reorder_flush(struct rec_reorder *q, uint64_t until);
void rec_reorder_free(struct rec_reorder *q);

#endif
