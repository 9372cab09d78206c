/*
 * Growable arrays (base/vec.h): vec_reserve makes room that writes can fill directly, keeps
 * what was there, and refuses a request past the address space with the vector unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/vec.h"

static void vec_reserve_makes_room_and_keeps_contents(void **state)
{
	(void)state;
	VEC(uint32_t) v = { 0 };
	for (uint32_t round = 0; round < 50; round++) {
		assert_true(vec_reserve(&v, 37));
		assert_true(v.cap - v.n >= 37);
		for (uint32_t k = 0; k < 37; k++)
			v.v[v.n++] = round * 37 + k;
	}
	for (size_t i = 0; i < v.n; i++)
		assert_int_equal(v.v[i], i);
	size_t n = v.n, cap = v.cap;
	uint32_t *p = v.v;
	assert_false(vec_reserve(&v, SIZE_MAX / 2));
	assert_int_equal(v.n, n);
	assert_int_equal(v.cap, cap);
	assert_ptr_equal(v.v, p);
	vec_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vec_reserve_makes_room_and_keeps_contents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
