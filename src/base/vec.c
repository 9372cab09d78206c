/*
 * Growth for VEC(T): doubling, starting at 16 elements, with overflow checks.
 */
#include "base/vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int vec_grow(void **v, size_t *cap, size_t n, size_t elem_size)
{
	if (n < *cap) {
		memset((char *)*v + n * elem_size, 0, elem_size);
		return 0;
	}
	size_t ncap = *cap ? *cap * 2 : 16;
	if (ncap > SIZE_MAX / elem_size)
		return -ENOMEM;
	void *nv = realloc(*v, ncap * elem_size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	memset((char *)nv + n * elem_size, 0, elem_size);
	return 0;
}
