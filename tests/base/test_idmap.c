/*
 * The pid/tid map: values survive growth, keys 0 and large ids work, updates replace,
 * deletions leave every other key found (across wrapped probe runs too).
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

static void idmap_del_keeps_the_others(void **state)
{
	struct idmap m = { 0 };
	/* Keys that collide (multiples of the table size share a home) and wrap around. */
	for (uint32_t round = 0; round < 50; round++) {
		for (uint32_t i = 0; i < 3000; i++)
			assert_int_equal(idmap_put(&m, i * 64u + round, i), 0);
		for (uint32_t i = 0; i < 3000; i += 3)
			idmap_del(&m, i * 64u + round);
		for (uint32_t i = 0; i < 3000; i++)
			assert_int_equal(idmap_get(&m, i * 64u + round),
					 i % 3 ? i : IDMAP_NONE);
		for (uint32_t i = 0; i < 3000; i++)
			idmap_del(&m, i * 64u + round);
		assert_int_equal(m.n, 0);
	}
	idmap_del(&m, 12345); /* absent */
	size_t cap = m.cap;
	for (uint32_t i = 0; i < 100000; i++) { /* ids that come and go: the table stays */
		assert_int_equal(idmap_put(&m, i, 1), 0);
		if (i >= 10)
			idmap_del(&m, i - 10);
	}
	assert_int_equal(m.n, 10);
	assert_int_equal(m.cap, cap);
	for (uint32_t i = 99990; i < 100000; i++)
		assert_int_equal(idmap_get(&m, i), 1);
	idmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idmap_keeps_values_through_growth),
		cmocka_unit_test(idmap_del_keeps_the_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
