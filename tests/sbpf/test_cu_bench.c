/*
 * The CU table (solana/cu_bench.c): the threshold's arithmetic at its edges, deltas with
 * Mollusk's thousands separators (num_format's en locale: "+2,361", "-1,355"), and counts
 * at the top of u64 read back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "solana/cu_bench.h"

static void thresholds_parse(void **state)
{
	struct sol_bench_threshold t;
	assert_int_equal(sol_bench_threshold_parse("25", &t), 0);
	assert_true(t.value == 25 && !t.percent);
	assert_int_equal(sol_bench_threshold_parse("3%", &t), 0);
	assert_true(t.value == 3 && t.percent);
	assert_int_not_equal(sol_bench_threshold_parse("", &t), 0);
	assert_int_not_equal(sol_bench_threshold_parse("%", &t), 0);
	assert_int_not_equal(sol_bench_threshold_parse("1,000", &t), 0);
	assert_int_not_equal(sol_bench_threshold_parse("-1", &t), 0);
	assert_int_not_equal(sol_bench_threshold_parse("1.5%", &t), 0);
}

static void growth_past_the_threshold(void **state)
{
	struct sol_bench_threshold cu = { 10, false }, pct = { 1, true }, none = { 0, false };
	assert_false(sol_bench_exceeds(&cu, 1000, 1010));
	assert_true(sol_bench_exceeds(&cu, 1000, 1011));
	assert_false(sol_bench_exceeds(&pct, 1000, 1010)); /* exactly 1% */
	assert_true(sol_bench_exceeds(&pct, 1000, 1011));
	assert_false(sol_bench_exceeds(&none, 1000, 1000));
	assert_false(sol_bench_exceeds(&none, 1000, 1));
	assert_true(sol_bench_exceeds(&pct, 0, 1));
	assert_true(sol_bench_exceeds(&(struct sol_bench_threshold){ 0, true }, UINT64_MAX - 1,
				      UINT64_MAX));
	assert_false(sol_bench_exceeds(&(struct sol_bench_threshold){ 100, true }, UINT64_MAX / 2,
				       UINT64_MAX - 1));
}

static void deltas_are_grouped(void **state)
{
	struct sol_bench prev, now = { 0 };
	const char *old = "| Name | CUs | Delta |\n|-|-|-|\n| a | 1,235,567 | -- |\n"
			  "| b | 18,446,744,073,709,551,615 | - new - |\n| c | 5 | +1 |\n";
	assert_int_equal(sol_bench_parse("t.md", old, strlen(old), &prev), 0);
	assert_int_equal(prev.n, 3);
	assert_true(sol_bench_find(&prev, "b")->cu == UINT64_MAX);
	assert_int_equal(sol_bench_add(&now, "a", 2001), 0);
	assert_int_equal(sol_bench_add(&now, "c", 2366), 0);
	assert_int_equal(sol_bench_add(&now, "d", 7), 0);
	assert_int_not_equal(sol_bench_add(&now, "x|y", 7), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	sol_bench_write(f, "D", "V", &now, &prev);
	fclose(f);
	assert_string_equal(text, "#### D\n\nSolana CLI Version: V\n\n| Name | CUs | Delta |\n"
				  "|------|------|-------|\n| a | 2001 | -1,233,566 |\n"
				  "| c | 2366 | +2,361 |\n| d | 7 | - new - |\n\n");
	free(text);
	sol_bench_free(&now);
	sol_bench_free(&prev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thresholds_parse),
		cmocka_unit_test(growth_past_the_threshold),
		cmocka_unit_test(deltas_are_grouped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
