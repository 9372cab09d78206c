/*
 * The symbolizer's printer on this test's own binary: a batch, printed on several threads
 * when it is large, gives the same bytes as its addresses printed one at a time, in every
 * style, with the lines that are not addresses reported where they stand.
 */
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "symbolize/print.h"

/* The main program's load bias: what turns this code's addresses into the file's. */
static int main_program_bias(struct dl_phdr_info *info, size_t size, void *bias)
{
	(void)size;
	*(uintptr_t *)bias = info->dlpi_addr;
	return 1;
}

static void report_bad(size_t i, void *out)
{
	fprintf(out, "bad line %zu\n", i);
}

/* n addresses from this file's code on, 3 bytes apart; every 97th line is not one. */
static void check_batch(enum sym_print_style style, size_t n)
{
	uintptr_t bias = 0;
	dl_iterate_phdr(main_program_bias, &bias);
	struct sym_opts opts = { 0 };
	struct sym_module *m;
	assert_int_equal(sym_open("/proc/self/exe", &opts, &m), 0);
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	bool *ok = calloc(n, sizeof(*ok));
	assert_non_null(addrs);
	assert_non_null(ok);
	char *want, *got;
	size_t want_len, got_len;
	FILE *want_f = open_memstream(&want, &want_len), *got_f = open_memstream(&got, &got_len);
	for (size_t i = 0; i < n; i++) {
		addrs[i] = (uintptr_t)report_bad - bias + 3 * i;
		ok[i] = i % 97 != 5;
		if (ok[i])
			sym_print(want_f, m, style, addrs[i]);
		else
			report_bad(i, want_f);
	}
	const struct sym_print_batch b = { .addrs = addrs, .ok = ok, .n = n,
					   .on_bad = report_bad, .ctx = got_f };
	assert_int_equal(sym_print_batch(got_f, m, style, &b), 0);
	fclose(want_f);
	fclose(got_f);
	assert_true(want_len > 0);
	assert_string_equal(got, want);
	free(want);
	free(got);
	free(addrs);
	free(ok);
	sym_close(m);
}

static void print_large_batch_matches_one_address_at_a_time(void **state)
{
	(void)state;
	check_batch(SYM_PRINT_LLVM, 4 * SYM_PRINT_MANY);
	check_batch(SYM_PRINT_GNU, 4 * SYM_PRINT_MANY);
	check_batch(SYM_PRINT_JSON, 4 * SYM_PRINT_MANY);
}

static void print_small_batch_matches_one_address_at_a_time(void **state)
{
	(void)state;
	check_batch(SYM_PRINT_LLVM, 100);
	check_batch(SYM_PRINT_GNU, 100);
	check_batch(SYM_PRINT_JSON, 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(print_large_batch_matches_one_address_at_a_time),
		cmocka_unit_test(print_small_batch_matches_one_address_at_a_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
