/*
 * The public symbolization API (include/tally/tally.h): errors name the file, frames come
 * innermost first, and lookups from several threads at once agree with one thread's.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tally/tally.h"

static char dir[] = "/tmp/tally-api-XXXXXX";
static char prog[300];

static int setup(void **state)
{
	if (!mkdtemp(dir))
		return -1;
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "cc -O2 -g tests/elf/src/inline.c -o %s", prog);
	return system(cmd);
}

static int teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static uint64_t symbol(const char *name)
{
	char cmd[400], out[64] = "";
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" { print $1 }'", prog, name);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, sizeof(out), p));
	pclose(p);
	return strtoull(out, NULL, 16);
}

static void api_missing_file_names_it(void **state)
{
	struct tally_symbolizer *s;
	assert_true(tally_symbolizer_open("/nonexistent/x", NULL, &s) < 0);
	assert_non_null(strstr(tally_errmsg(), "/nonexistent/x"));
}

static void api_inlined_square_is_innermost(void **state)
{
	struct tally_symbolizer *s;
	TALLY_OPTS(tally_symbolizer_opts, o);
	assert_int_equal(tally_symbolizer_open(prog, &o, &s), 0);
	uint64_t leaf = symbol("leaf");
	bool seen = false;
	for (uint64_t a = leaf; a < leaf + 64 && !seen; a++) {
		struct tally_frame f[8];
		int n = tally_symbolize(s, a, f, 8);
		assert_true(n >= 1);
		assert_string_equal(f[n - 1].function, "leaf");
		assert_false(f[n - 1].inlined);
		if (n == 3 && !strcmp(f[0].function, "square")) {
			assert_true(f[0].inlined);
			assert_string_equal(f[1].function, "quad");
			seen = true;
		}
	}
	assert_true(seen);
	tally_symbolizer_close(s);
}

struct job {
	struct tally_symbolizer *s;
	uint64_t lo, hi;
	char *out; /* function names of every address, joined */
};

static void *symbolize_range(void *arg)
{
	struct job *j = arg;
	size_t cap = 1 << 16, len = 0;
	j->out = calloc(cap, 1);
	for (uint64_t a = j->lo; a < j->hi && j->out; a++) {
		struct tally_frame f[16];
		int n = tally_symbolize(j->s, a, f, 16);
		for (int i = 0; i < n && i < 16 && len + 300 < cap; i++)
			len += (size_t)snprintf(j->out + len, cap - len, "%s:%u;",
						f[i].function ? f[i].function : "?", f[i].line);
	}
	return NULL;
}

static void api_concurrent_lookups_agree(void **state)
{
	struct tally_symbolizer *alone, *shared;
	assert_int_equal(tally_symbolizer_open(prog, NULL, &alone), 0);
	assert_int_equal(tally_symbolizer_open(prog, NULL, &shared), 0);
	uint64_t lo = symbol("main"), hi = lo + 200;
	struct job one = { alone, lo, hi, NULL }, many[4];
	symbolize_range(&one);
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		many[i] = (struct job){ shared, lo, hi, NULL };
		assert_int_equal(pthread_create(&th[i], NULL, symbolize_range, &many[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_string_equal(many[i].out, one.out);
		free(many[i].out);
	}
	free(one.out);
	tally_symbolizer_close(alone);
	tally_symbolizer_close(shared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(api_missing_file_names_it),
		cmocka_unit_test(api_inlined_square_is_innermost),
		cmocka_unit_test(api_concurrent_lookups_agree),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
