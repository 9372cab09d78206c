/*
 * Threads and the sample log: samples keep their thread and time, a thread's own profile
 * holds only its samples, transforms carry the log over (focus drops, hide re-points,
 * merges add threads), a thread keeps its latest name, and the samples of one GIL state
 * make a profile of their own. Expected values are worked out
 * by hand from the samples added.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "profile/profile.h"

static uint32_t frame(struct prof *p, const char *name)
{
	struct prof_frame_desc d = { .kind = PROF_NATIVE, .function = name, .module = PROF_NONE };
	return prof_frame(p, &d);
}

/* main;work (thread A, 3 samples of weight 10) main;wait (thread B, 2 of 5), main;work (B, 1 of 7) */
static struct prof *two_threads(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_true(prof_add_metric(p, "cpu", "nanoseconds") >= 0);
	uint32_t a = prof_thread(p, 10, 10, "first"), b = prof_thread(p, 10, 11, "worker");
	assert_int_equal(prof_thread(p, 10, 10, "renamed"), a); /* same thread, new name */
	uint32_t m = frame(p, "main"), w = frame(p, "work"), z = frame(p, "wait");
	struct prof_loc work[2] = { { w, 0, 0x20 }, { m, 0, 0x10 } };
	struct prof_loc wait[2] = { { z, 0, 0x30 }, { m, 0, 0x14 } };
	int64_t w10 = 10, w5 = 5, w7 = 7;
	uint32_t kept = PROF_NONE, kept2 = PROF_NONE, kept3 = PROF_NONE;
	for (int i = 0; i < 3; i++)
		assert_int_equal(prof_add_sample(p, a, 100 + (uint64_t)i, work, 2, &w10, &kept), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(prof_add_sample(p, b, 200 + (uint64_t)i, wait, 2, &w5, &kept2), 0);
	assert_int_equal(prof_add_sample(p, b, 300, work, 2, &w7, &kept3), 0);
	assert_int_equal(prof_finish(p), 0);
	return p;
}

static int64_t total(const struct prof *p)
{
	int64_t t;
	prof_grand_total(p, &t);
	return t;
}

static void samples_keep_thread_time_and_node(void **state)
{
	(void)state;
	struct prof *p = two_threads();
	assert_int_equal(prof_nthreads(p), 2);
	assert_string_equal(prof_str(p, prof_thread_at(p, 0)->name), "renamed");
	assert_int_equal(prof_thread_at(p, 1)->tid, 11);
	assert_int_equal(prof_nsamples(p), 6);
	const struct prof_sample *s = prof_sample_at(p, 4);
	assert_int_equal(s->thread, 1);
	assert_int_equal(s->time, 201);
	assert_string_equal(prof_frame_label(p, prof_node_at(p, s->node)->frame), "wait");
	assert_int_equal(prof_pcw_at(p, s->pcw)->pc, 0x30);
	assert_int_equal(prof_sample_weights(p, 4)[0], 5);
	/* the same stack in two threads is one node of the tree */
	assert_int_equal(prof_sample_at(p, 0)->node, prof_sample_at(p, 5)->node);
	assert_int_equal(total(p), 47);
	prof_free(p);
}

static void thread_profile_holds_only_its_samples(void **state)
{
	(void)state;
	struct prof *p = two_threads(), *b;
	assert_int_equal(prof_thread_profile(p, 1, &b), 0);
	assert_int_equal(total(b), 17);
	assert_int_equal(prof_nsamples(b), 3);
	assert_int_equal(prof_nthreads(b), 1);
	assert_string_equal(prof_str(b, prof_thread_at(b, 0)->name), "worker");
	struct prof_funcs f;
	assert_int_equal(prof_func_stats(b, &f), 0);
	for (size_t i = 0; i < f.n; i++) {
		const char *l = prof_frame_label(b, f.frame[i]);
		int64_t want = !strcmp(l, "main") ? 17 : !strcmp(l, "wait") ? 10 : 7;
		assert_int_equal(f.total[i], want);
	}
	prof_funcs_free(&f);
	assert_int_not_equal(prof_thread_profile(p, 2, &b), 0);
	prof_free(b);
	prof_free(p);
}

static bool is_work(const struct prof *p, uint32_t fr, void *ctx)
{
	(void)ctx;
	return !strcmp(prof_frame_label(p, fr), "work");
}

static bool is_any(const struct prof *p, uint32_t fr, void *ctx)
{
	(void)p, (void)fr, (void)ctx;
	return true;
}

static void transforms_carry_the_log(void **state)
{
	(void)state;
	struct prof *p = two_threads(), *f, *h, *all;
	assert_int_equal(prof_focus(p, is_work, NULL, &f), 0);
	assert_int_equal(prof_nsamples(f), 4); /* the waits are gone */
	int64_t sum = 0;
	for (size_t i = 0; i < prof_nsamples(f); i++) {
		sum += prof_sample_weights(f, i)[0];
		assert_string_equal(prof_frame_label(f, prof_node_at(f, prof_sample_at(f, i)->node)->frame), "work");
	}
	assert_int_equal(sum, total(f));
	assert_int_equal(sum, 37);
	/* hiding every frame leaves the weight on [hidden], samples with it */
	assert_int_equal(prof_hide(p, is_any, NULL, &h), 0);
	assert_int_equal(prof_nsamples(h), 6);
	assert_string_equal(prof_frame_label(h, prof_node_at(h, prof_sample_at(h, 5)->node)->frame), "[hidden]");
	/* a merge adds the other profile's threads and samples */
	assert_int_equal(prof_new(&all), 0);
	assert_int_equal(prof_merge(all, p), 0);
	assert_int_equal(prof_merge(all, f), 0);
	assert_int_equal(prof_finish(all), 0);
	assert_int_equal(prof_nthreads(all), 2);
	assert_int_equal(prof_nsamples(all), 10);
	assert_int_equal(total(all), 84);
	prof_free(all);
	prof_free(h);
	prof_free(f);
	prof_free(p);
}

/* Thread A's 3 samples of main;work (10 each) held the GIL, B's 2 of main;wait (5 each)
 * did not, B's main;work (7) is of unknown state. */
static struct prof *gil_states(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_true(prof_add_metric(p, "cpu", "nanoseconds") >= 0);
	uint32_t a = prof_thread(p, 10, 10, "a"), b = prof_thread(p, 10, 11, "b");
	uint32_t m = frame(p, "main"), w = frame(p, "work"), z = frame(p, "wait");
	struct prof_loc work[2] = { { w, 0, 0x20 }, { m, 0, 0x10 } };
	struct prof_loc wait[2] = { { z, 0, 0x30 }, { m, 0, 0x14 } };
	int64_t w10 = 10, w5 = 5, w7 = 7;
	uint32_t kept = PROF_NONE, kept2 = PROF_NONE, kept3 = PROF_NONE;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(prof_add_sample(p, a, 100 + (uint64_t)i, work, 2, &w10, &kept), 0);
		prof_set_last_sample_gil(p, PROF_GIL_HELD);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(prof_add_sample(p, b, 200 + (uint64_t)i, wait, 2, &w5, &kept2), 0);
		prof_set_last_sample_gil(p, PROF_GIL_NOT_HELD);
	}
	assert_int_equal(prof_add_sample(p, b, 300, work, 2, &w7, &kept3), 0);
	assert_int_equal(prof_finish(p), 0);
	return p;
}

static void gil_profile_holds_only_samples_in_that_state(void **state)
{
	(void)state;
	struct prof *p = gil_states(), *held, *not_held, *f;
	assert_int_equal(prof_gil_profile(p, PROF_GIL_HELD, &held), 0);
	assert_int_equal(total(held), 30);
	assert_int_equal(prof_nsamples(held), 3);
	assert_int_equal(prof_nthreads(held), 1);
	for (size_t i = 0; i < prof_nsamples(held); i++)
		assert_int_equal(prof_sample_at(held, i)->gil, PROF_GIL_HELD);
	assert_int_equal(prof_gil_profile(p, PROF_GIL_NOT_HELD, &not_held), 0);
	assert_int_equal(total(not_held), 10);
	assert_int_equal(prof_nsamples(not_held), 2);
	assert_string_equal(prof_str(not_held, prof_thread_at(not_held, 0)->name), "b");
	/* other transforms carry each sample's state */
	assert_int_equal(prof_focus(p, is_work, NULL, &f), 0);
	assert_int_equal(prof_nsamples(f), 4);
	assert_int_equal(prof_sample_at(f, 0)->gil, PROF_GIL_HELD);
	assert_int_equal(prof_sample_at(f, 3)->gil, PROF_GIL_UNKNOWN);
	assert_string_equal(prof_gil_name(PROF_GIL_NOT_HELD), "not held");
	assert_null(prof_gil_name(PROF_GIL_UNKNOWN));
	prof_free(f);
	prof_free(not_held);
	prof_free(held);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_keep_thread_time_and_node),
		cmocka_unit_test(thread_profile_holds_only_its_samples),
		cmocka_unit_test(transforms_carry_the_log),
		cmocka_unit_test(gil_profile_holds_only_samples_in_that_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
