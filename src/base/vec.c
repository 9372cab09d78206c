/*
 * Growth for VEC(T): doubling, starting at 16 elements, with overflow checks.
 */
#include "base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *vec_push_raw(void **v, size_t *n, size_t *cap, size_t elem_size)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		if (ncap > SIZE_MAX / elem_size)
			return NULL;
		void *nv = realloc(*v, ncap * elem_size);
		if (!nv)
			return NULL;
		*v = nv;
		*cap = ncap;
	}
	void *slot = (char *)*v + (*n)++ * elem_size;
	memset(slot, 0, elem_size);
	return slot;
}
