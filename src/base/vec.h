/*
 * Growable arrays: VEC(T) declares { T *v; size_t n, cap; }. vec_push() returns a pointer to
 * the new zeroed slot, or NULL when out of memory (the vector is then unchanged).
 * vec_reserve() makes room for that many more elements, for a writer that fills them
 * itself: true, or false when out of memory (the vector unchanged).
 */
#ifndef TALLY_BASE_VEC_H
#define TALLY_BASE_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define VEC(T)            \
	struct {          \
		T *v;     \
		size_t n; \
		size_t cap; \
	}

void *vec_push_grow(void **v, size_t *n, size_t *cap, size_t elem_size);
bool vec_reserve_grow(void **v, size_t n, size_t *cap, size_t elem_size, size_t more);

/* Appends one zeroed element of elem_size bytes; returns it, or NULL. */
static inline void *vec_push_raw(void **v, size_t *n, size_t *cap, size_t elem_size)
{
	if (*n == *cap)
		return vec_push_grow(v, n, cap, elem_size);
	void *slot = (char *)*v + (*n)++ * elem_size;
	memset(slot, 0, elem_size);
	return slot;
}

#define vec_push(vec) \
	((__typeof__((vec)->v))vec_push_raw((void **)&(vec)->v, &(vec)->n, &(vec)->cap, \
					    sizeof(*(vec)->v)))
#define vec_reserve(vec, more)                                                              \
	((vec)->cap - (vec)->n >= (more) ||                                                  \
	 vec_reserve_grow((void **)&(vec)->v, (vec)->n, &(vec)->cap, sizeof(*(vec)->v), (more)))
#define vec_free(vec) (free((vec)->v), (vec)->v = NULL, (vec)->n = (vec)->cap = 0)

#endif
