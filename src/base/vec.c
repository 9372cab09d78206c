/*
 * Growth for VEC(T): doubling, starting at 16 elements, with overflow checks.
 */
#include "base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *vec_push_grow(void **v, size_t *n, size_t *cap, size_t elem_size)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	if (ncap > SIZE_MAX / elem_size)
		return NULL;
	void *nv = realloc(*v, ncap * elem_size);
	if (!nv)
		return NULL;
	*v = nv;
	*cap = ncap;
	return vec_push_raw(v, n, cap, elem_size);
}

bool vec_reserve_grow(void **v, size_t n, size_t *cap, size_t elem_size, size_t more)
{
	if (more > SIZE_MAX / elem_size - n)
		return false;
	size_t ncap = *cap ? *cap : 16;
	while (ncap - n < more)
		ncap = ncap > SIZE_MAX / 2 ? SIZE_MAX : ncap * 2;
	if (ncap > SIZE_MAX / elem_size)
		ncap = n + more;
	void *nv = realloc(*v, ncap * elem_size);
	if (!nv)
		return false;
	*v = nv;
	*cap = ncap;
	return true;
}
