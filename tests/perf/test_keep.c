/*
 * What a recording keeps beside its perf.data (perf/keep.h): the JIT directory's name, which
 * tally record writes and reports read, and the names of the agent registries kept in it.
 * The kallsyms copy is tested with its reader (tests/replay/test_kallsyms.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jit_dir_is_beside_the_data),
		cmocka_unit_test(jit_dir_too_long_is_named),
		cmocka_unit_test(vm_registry_names_are_told_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
