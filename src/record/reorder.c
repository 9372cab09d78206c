/*
 * The reorder queue (reorder.h): a binary heap of record copies keyed by (time, arrival).
 */
#include "record/reorder.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

static bool before(const struct rec_queued *a, const struct rec_queued *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void swap(struct rec_queued *a, struct rec_queued *b)
{
	struct rec_queued t = *a;
	*a = *b;
	*b = t;
}

void rec_reorder_init(struct rec_reorder *q, size_t max_bytes, rec_reorder_fn fn, void *arg)
{
	*q = (struct rec_reorder){ .max_bytes = max_bytes, .fn = fn, .arg = arg };
}

/* Gives back the oldest record. */
static int pop(struct rec_reorder *q)
{
	struct rec_queued top = q->heap[0];
	q->heap[0] = q->heap[--q->n];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < q->n && before(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->n && before(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		swap(&q->heap[i], &q->heap[m]);
		i = m;
	}
	q->bytes -= top.size;
	int rc = q->fn(top.rec, top.size, top.flags, q->arg);
	free(top.rec);
	return rc;
}

int rec_reorder_push(struct rec_reorder *q, uint64_t time, const void *rec, size_t size,
		     uint32_t flags)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 256;
		struct rec_queued *h = realloc(q->heap, cap * sizeof(*h));
		if (!h)
			return err_set(-ENOMEM, "out of memory");
		q->heap = h;
		q->cap = cap;
	}
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return err_set(-ENOMEM, "out of memory");
	memcpy(copy, rec, size);
	size_t i = q->n++;
	q->heap[i] = (struct rec_queued){ time, q->seq++, copy, (uint32_t)size, flags };
	while (i && before(&q->heap[i], &q->heap[(i - 1) / 2])) {
		swap(&q->heap[i], &q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	q->bytes += size;
	if (q->bytes > q->peak_bytes)
		q->peak_bytes = q->bytes;
	while (q->max_bytes && q->bytes > q->max_bytes && q->n) {
		q->forced++;
		int rc = pop(q);
		if (rc)
			return rc;
	}
	return 0;
}

int rec_reorder_flush(struct rec_reorder *q, uint64_t until)
{
	while (q->n && q->heap[0].time <= until) {
		int rc = pop(q);
		if (rc)
			return rc;
	}
	return 0;
}

void rec_reorder_free(struct rec_reorder *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->heap[i].rec);
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = q->bytes = 0;
}
