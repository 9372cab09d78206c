/*
 * The reorder queue of live unwinding (record/reorder.h): records come back in time order
 * whatever ring order they were pushed in, ties in push order; a flush gives back only
 * what is timed at or before its bound; the byte bound pushes the oldest out early, still
 * in order, and counts them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "record/reorder.h"

struct got {
	uint64_t v[64];
	uint32_t flags[64];
	size_t n;
};

/* Each test record is a u64 tag. */
static int collect(const void *rec, size_t size, uint32_t flags, void *arg)
{
	struct got *g = arg;
	assert_int_equal(size, 8);
	memcpy(&g->v[g->n], rec, 8);
	g->flags[g->n++] = flags;
	return 0;
}

static void push(struct rec_reorder *q, uint64_t time, uint64_t tag)
{
	assert_int_equal(rec_reorder_push(q, time, &tag, 8, (uint32_t)tag), 0);
}

static void rings_come_back_in_time_order(void **state)
{
	(void)state;
	struct got g = { 0 };
	struct rec_reorder q;
	rec_reorder_init(&q, 0, collect, &g);
	/* Ring 0 then ring 1, each in order: an mmap at 15 drained after a sample at 20. */
	push(&q, 10, 1);
	push(&q, 20, 2);
	push(&q, 30, 3);
	push(&q, 15, 4);
	push(&q, 25, 5);
	assert_int_equal(rec_reorder_flush(&q, UINT64_MAX), 0);
	uint64_t want[] = { 1, 4, 2, 5, 3 };
	assert_int_equal(g.n, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(g.v[i], want[i]);
		assert_int_equal(g.flags[i], (uint32_t)want[i]);
	}
	assert_int_equal(q.n, 0);
	rec_reorder_free(&q);
}

static void ties_keep_push_order(void **state)
{
	(void)state;
	struct got g = { 0 };
	struct rec_reorder q;
	rec_reorder_init(&q, 0, collect, &g);
	for (uint64_t i = 0; i < 40; i++) /* synthesized records are all at time 0 */
		push(&q, i % 2 ? 0 : 7, i);
	assert_int_equal(rec_reorder_flush(&q, UINT64_MAX), 0);
	assert_int_equal(g.n, 40);
	for (size_t i = 0; i < 20; i++) {
		assert_int_equal(g.v[i], 2 * i + 1);
		assert_int_equal(g.v[20 + i], 2 * i);
	}
	rec_reorder_free(&q);
}

static void flush_stops_at_its_bound(void **state)
{
	(void)state;
	struct got g = { 0 };
	struct rec_reorder q;
	rec_reorder_init(&q, 0, collect, &g);
	push(&q, 100, 1);
	push(&q, 300, 3);
	push(&q, 200, 2);
	assert_int_equal(rec_reorder_flush(&q, 200), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.v[0], 1);
	assert_int_equal(g.v[1], 2);
	/* A later round brings an older record: it still goes before what is held. */
	push(&q, 250, 4);
	assert_int_equal(rec_reorder_flush(&q, 1000), 0);
	assert_int_equal(g.n, 4);
	assert_int_equal(g.v[2], 4);
	assert_int_equal(g.v[3], 3);
	rec_reorder_free(&q);
}

static void bound_pushes_oldest_out(void **state)
{
	(void)state;
	struct got g = { 0 };
	struct rec_reorder q;
	rec_reorder_init(&q, 24, collect, &g); /* three records of 8 bytes */
	push(&q, 40, 4);
	push(&q, 10, 1);
	push(&q, 30, 3);
	assert_int_equal(g.n, 0);
	push(&q, 20, 2);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.v[0], 1);
	assert_int_equal(q.forced, 1);
	assert_int_equal(q.peak_bytes, 32);
	assert_int_equal(rec_reorder_flush(&q, UINT64_MAX), 0);
	uint64_t want[] = { 1, 2, 3, 4 };
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(g.v[i], want[i]);
	rec_reorder_free(&q);
}

static int stop_at_2(const void *rec, size_t size, uint32_t flags, void *arg)
{
	(void)size;
	(void)flags;
	uint64_t v;
	memcpy(&v, rec, 8);
	++*(int *)arg;
	return v == 2 ? -5 : 0;
}

static void failure_stops_flush_and_frees(void **state)
{
	(void)state;
	int calls = 0;
	struct rec_reorder q;
	rec_reorder_init(&q, 0, stop_at_2, &calls);
	for (uint64_t i = 1; i <= 4; i++) {
		uint64_t tag = i;
		assert_int_equal(rec_reorder_push(&q, i, &tag, 8, 0), 0);
	}
	assert_int_equal(rec_reorder_flush(&q, UINT64_MAX), -5);
	assert_int_equal(calls, 2);
	assert_int_equal(q.n, 2);
	rec_reorder_free(&q); /* the rest freed (ASan checks) */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rings_come_back_in_time_order),
		cmocka_unit_test(ties_keep_push_order),
		cmocka_unit_test(flush_stops_at_its_bound),
		cmocka_unit_test(bound_pushes_oldest_out),
		cmocka_unit_test(failure_stops_flush_and_frees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
