/*
 * The pid/tid map: values survive growth, keys 0 and large ids work, updates replace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/idmap.h"

static void idmap_keeps_values_through_growth(void **state)
{
	struct idmap m = { 0 };
	assert_int_equal(idmap_get(&m, 0), IDMAP_NONE);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(idmap_put(&m, i * 7919u, i), 0);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(idmap_get(&m, i * 7919u), i);
	assert_int_equal(idmap_get(&m, 1), IDMAP_NONE);
	assert_int_equal(m.n, 5000);
	assert_int_equal(idmap_put(&m, 0, 42), 0);
	assert_int_equal(idmap_get(&m, 0), 42);
	assert_int_equal(m.n, 5000);
	assert_int_equal(idmap_put(&m, UINT32_MAX - 1, 7), 0);
	assert_int_equal(idmap_get(&m, UINT32_MAX - 1), 7);
	idmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idmap_keeps_values_through_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
