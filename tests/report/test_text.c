/*
 * The text report: header facts (source, totals, duration, a recorder's figures), kind
 * marks, time scaling, and the tree's threshold. Expected text checked by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "report/report.h"

static struct prof *make(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	assert_int_equal(prof_add_metric(p, "cpu", "nanoseconds"), 1);
	assert_int_equal(prof_set_source(p, "perf.data: ./app"), 0);
	prof_set_times(p, 0, 1500000000);
	assert_int_equal(prof_set_counter(p, "unwind.cfi", 990), 0);
	assert_int_equal(prof_set_counter(p, "unwind.truncated", 10), 0);
	struct prof_frame_desc dm = { PROF_NATIVE, "main", "app.c", 10, PROF_NONE, 0 };
	struct prof_frame_desc di = { PROF_INLINE, "step", "app.c", 3, PROF_NONE, 0 };
	struct prof_frame_desc dk = { PROF_KERNEL, "do_sys_poll", NULL, 0, PROF_NONE, 0 };
	uint32_t m = prof_frame(p, &dm), i = prof_frame(p, &di), k = prof_frame(p, &dk);
	struct prof_loc a[] = { { i, 4, 0 }, { m, 12, 0 } }, b[] = { { k, 0, 0 }, { m, 13, 0 } };
	int64_t wa[] = { 990, 990000000 }, wb[] = { 10, 10000000 };
	assert_int_equal(prof_add_stack(p, a, 2, wa), 0);
	assert_int_equal(prof_add_stack(p, b, 2, wb), 0);
	assert_int_equal(prof_finish(p), 0);
	return p;
}

static char *run(const struct prof *p, const struct rep_text_opts *o)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(rep_text(f, p, o), 0);
	fclose(f);
	return buf;
}

static void text_report_header_tables_and_marks(void **state)
{
	struct prof *p = make();
	struct rep_text_opts o = { .metric = 1, .top = 2 };
	char *out = run(p, &o);
	assert_string_equal(out,
		"source:   perf.data: ./app\n"
		"total:    1000 samples/count\n"
		"          1000000000 cpu/nanoseconds (1.00s) (shown)\n"
		"duration: 1.500 s\n"
		"figures:  unwind.cfi 990\n"
		"          unwind.truncated 10\n"
		"\n"
		"Top functions by self cpu:\n"
		"   self%         self   total%        total  function\n"
		"  99.00%     990.00ms   99.00%     990.00ms  step [inline]  (app.c:3)\n"
		"   1.00%      10.00ms    1.00%      10.00ms  do_sys_poll [kernel]\n"
		"\n"
		"Top functions by total cpu:\n"
		"   self%         self   total%        total  function\n"
		"   0.00%          0ns  100.00%        1.00s  main  (app.c:10)\n"
		"  99.00%     990.00ms   99.00%     990.00ms  step [inline]  (app.c:3)\n");
	free(out);
	prof_free(p);
}

static void text_tree_hides_nodes_under_threshold(void **state)
{
	struct prof *p = make();
	struct rep_text_opts o = { .metric = 0, .tree = true, .threshold = 2 };
	char *out = run(p, &o);
	const char *tree = strstr(out, "Call tree");
	assert_non_null(tree);
	assert_string_equal(tree,
		"Call tree (samples; nodes under 2.00% of the total hidden):\n"
		"  total%    self%  function\n"
		" 100.00%    0.00%  main  (app.c:10)\n"
		"  99.00%   99.00%    step [inline]  (app.c:3)\n");
	free(out);
	prof_free(p);
}

static void text_names_the_object_when_no_source_is_known(void **state)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	uint32_t m = prof_module(p, "/lib/x86_64-linux-gnu/libc.so.6", "", 0x7f0000000000);
	struct prof_frame_desc d = { PROF_NATIVE, "memcpy", NULL, 0, m, 0x9a0 };
	struct prof_frame_desc u = { PROF_NATIVE, NULL, NULL, 0, m, 0x1234 };
	struct prof_loc l[] = { { prof_frame(p, &d), 0, 0x9a8 } }, v[] = { { prof_frame(p, &u), 0, 0x1234 } };
	int64_t w = 4;
	assert_int_equal(prof_add_stack(p, l, 1, &w), 0);
	assert_int_equal(prof_add_stack(p, v, 1, &w), 0);
	assert_int_equal(prof_finish(p), 0);
	struct rep_text_opts o = { .metric = -1, .top = 2 };
	char *out = run(p, &o);
	assert_non_null(strstr(out, "  50.00%            4   50.00%            4  memcpy  (libc.so.6)\n"));
	assert_non_null(strstr(out, "  50.00%            4   50.00%            4  libc.so.6+0x1234\n"));
	free(out);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_report_header_tables_and_marks),
		cmocka_unit_test(text_tree_hides_nodes_under_threshold),
		cmocka_unit_test(text_names_the_object_when_no_source_is_known),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
