/*
 * What a recording keeps beside its perf.data (perf/keep.h): the JIT directory's name, which
 * tally record writes and reports read, the names of the agent registries kept in it, and
 * the names of a --rotate series (UTC, fixed width: they sort in time), newest found.
 * The kallsyms copy is tested with its reader (tests/replay/test_kallsyms.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/err.h"
#include "perf/keep.h"

static void jit_dir_is_beside_the_data(void **state)
{
	char dir[64];
	assert_int_equal(perf_jit_dir("/tmp/run/perf.data", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/tmp/run/perf.data.jit");
}

static void jit_dir_too_long_is_named(void **state)
{
	char dir[16];
	assert_int_equal(perf_jit_dir("/tmp/run/perf.data", dir, sizeof(dir)), -ENAMETOOLONG);
	assert_string_equal(err_msg(), "/tmp/run/perf.data: name too long");
	err_clear();
}

static void vm_registry_names_are_told_apart(void **state)
{
	assert_true(perf_vm_registry_name("tally-vm-4242-1.dump"));
	assert_false(perf_vm_registry_name("tally-vm-.dump"));
	assert_false(perf_vm_registry_name("tally-vm-4242-1.dump.tmp"));
	assert_false(perf_vm_registry_name("perf-4242.map"));
	assert_false(perf_vm_registry_name("jit-4242.dump"));
}

static void series_names_are_utc_to_the_millisecond(void **state)
{
	char name[64];
	/* 2026-12-07 16:00:12.345 UTC; and the epoch, padded */
	assert_int_equal(perf_series_name("d/perf.data", 1796659212345ull, name, sizeof(name)), 0);
	assert_string_equal(name, "d/perf.data.20261207T160012.345Z");
	assert_int_equal(perf_series_name("p", 7, name, sizeof(name)), 0);
	assert_string_equal(name, "p.19700101T000000.007Z");
	assert_int_equal(perf_series_name("perf.data", 0, name, 20), -ENAMETOOLONG);
	err_clear();
}

static void series_newest_is_the_greatest_name(void **state)
{
	char dir[] = "/tmp/tally-keep-XXXXXX", path[128], newest[256];
	assert_non_null(mkdtemp(dir));
	const char *files[] = { "p.20261207T160012.345Z", "p.20261207T160013.001Z",
				"p.20261207T160013.001Z.jit", "p.20261207T160012.999Z",
				"p.29991207T160012.99Z", "q.20301207T160012.999Z", "p" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/p", dir);
	assert_true(perf_series_newest(path, newest, sizeof(newest)));
	snprintf(path, sizeof(path), "%s/p.20261207T160013.001Z", dir);
	assert_string_equal(newest, path);
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_false(perf_series_newest(path, newest, sizeof(newest)));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jit_dir_is_beside_the_data),
		cmocka_unit_test(jit_dir_too_long_is_named),
		cmocka_unit_test(vm_registry_names_are_told_apart),
		cmocka_unit_test(series_names_are_utc_to_the_millisecond),
		cmocka_unit_test(series_newest_is_the_greatest_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
