/*
 * The diff table on exact profiles (compute units from CCT events, as the sBPF VM makes
 * them): one more instruction in one function shows up as exactly +1 there, and in the
 * totals of its callers, and nowhere else.
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

/* entrypoint -> process (-> helper, -> sol_log_ syscall); helper runs extra more CUs. */
static struct prof *run(int extra, uint64_t helper_addr)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "cu", "count"), 0);
	assert_int_equal(prof_set_source(p, extra ? "after" : "before"), 0);
	uint32_t mod = prof_module(p, "prog.so", "", 0);
	struct prof_frame_desc e = { PROF_PROGRAM, "entrypoint", NULL, 0, mod, 0x120 };
	struct prof_frame_desc pr = { PROF_NATIVE, "process", "lib.rs", 40, mod, 0x400 };
	struct prof_frame_desc h = { PROF_NATIVE, "helper", "lib.rs", 90, mod, helper_addr };
	struct prof_frame_desc s = { PROF_SYSCALL, "sol_log_", NULL, 0, PROF_NONE, 0 };
	struct prof_cct *c;
	assert_int_equal(prof_cct_new(&c), 0);
	assert_int_equal(prof_cct_enter(c, prof_frame(p, &e), 0), 1);
	assert_int_equal(prof_cct_cost(c, 0x120, 100), 0);
	assert_int_equal(prof_cct_enter(c, prof_frame(p, &pr), 0x128), 1);
	for (int i = 0; i < 10 + extra; i++)
		if (i != 3 || !extra) /* the changed build runs one instruction elsewhere */
			assert_int_equal(prof_cct_cost(c, 0x400 + 8 * (uint64_t)i, 1), 0);
	assert_int_equal(prof_cct_enter(c, prof_frame(p, &h), 0x410), 1);
	for (int i = 0; i < 20 + extra; i++)
		assert_int_equal(prof_cct_cost(c, helper_addr + 8 * (uint64_t)i, 1), 0);
	assert_int_equal(prof_cct_exit(c), 0);
	assert_int_equal(prof_cct_enter(c, prof_frame(p, &s), 0x418), 1);
	assert_int_equal(prof_cct_cost(c, 0, 100), 0);
	assert_int_equal(prof_cct_build(c, p, 0, NULL), 0);
	prof_cct_free(c);
	assert_int_equal(prof_finish(p), 0);
	return p;
}

static void diff_shows_one_instruction_exactly(void **state)
{
	/* The after build also moved helper: matching is by name, not address. */
	struct prof *a = run(0, 0x800), *b = run(1, 0x840);
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct rep_diff_opts o = { -1, -1, 0 };
	assert_int_equal(rep_diff(f, a, b, &o), 0);
	fclose(f);
	assert_string_equal(buf,
		"before:   before: 230\n"
		"after:    after: 231 (+1, +0.4%)\n"
		"metric:   cu/count\n"
		"\n"
		" self before   self after  self change          total before  total after total change           function\n"
		"          20           21           +1    +5.0%           20           21           +1    +5.0%  helper\n"
		"         100          100           +0       0%          230          231           +1    +0.4%  entrypoint [program]\n"
		"          10           10           +0       0%          130          131           +1    +0.8%  process\n");
	free(buf);
	prof_free(a);
	prof_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff_shows_one_instruction_exactly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
