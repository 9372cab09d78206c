/*
 * The unwind-quality shares: never rounded to 0% or 100% unless exact, one decimal where
 * that is honest; the report's summary line is derived from the profile's counters, which
 * stay counts so that merged profiles add up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "profile/counters.h"
#include "report/report.h"

static void share_is_never_rounded_to_zero_or_whole(void **state)
{
	char b[32];
	assert_string_equal(rep_share(b, sizeof(b), 0, 1000), "0%");
	assert_string_equal(rep_share(b, sizeof(b), 1000, 1000), "100%");
	assert_string_equal(rep_share(b, sizeof(b), 3, 1000), "0.3%");
	assert_string_equal(rep_share(b, sizeof(b), 999, 1000), "99.9%");
	assert_string_equal(rep_share(b, sizeof(b), 125, 1000), "12.5%");
	assert_string_equal(rep_share(b, sizeof(b), 1, 100000), "0.001%");
	assert_string_equal(rep_share(b, sizeof(b), 99999, 100000), "99.999%");
	assert_string_equal(rep_share(b, sizeof(b), 19999, 20000), "99.995%");
	assert_string_equal(rep_share(b, sizeof(b), 0, 0), "0%");
}

static void summary_line_comes_from_counts(void **state)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	rep_quality_summary(f, p); /* no counters: nothing */
	fflush(f);
	assert_int_equal(size, 0);
	prof_set_counter(p, PROF_COUNTER_SAMPLES, 1156);
	prof_set_counter(p, PROF_COUNTER_COMPLETE, 1155);
	prof_set_counter(p, PROF_COUNTER_TRUNCATED, 1);
	prof_set_counter(p, PROF_COUNTER_SINGLE, 0);
	prof_set_counter(p, PROF_COUNTER_FRAMES, 19884);
	rep_quality_summary(f, p);
	fclose(f);
	assert_string_equal(text, "unwind:   1156 stacks: 99.9% complete, 0.1% truncated, 0% "
				  "single-frame, average depth 17.2\n");
	free(text);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(share_is_never_rounded_to_zero_or_whole),
		cmocka_unit_test(summary_line_comes_from_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
