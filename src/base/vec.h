/*
 * Growable arrays: VEC(T) declares { T *v; size_t n, cap; }. vec_push() returns a pointer to
 * the new zeroed slot, or NULL when out of memory (the vector is then unchanged).
 */
#ifndef TALLY_BASE_VEC_H
#define TALLY_BASE_VEC_H

#include <stddef.h>

#define VEC(T)            \
	struct {          \
		T *v;     \
		size_t n; \
		size_t cap; \
	}

/* Makes room for one more element of elem_size bytes; 0 or -ENOMEM. */
int vec_grow(void **v, size_t *cap, size_t n, size_t elem_size);

#define vec_push(vec)                                                                  \
	(vec_grow((void **)&(vec)->v, &(vec)->cap, (vec)->n, sizeof(*(vec)->v)) ? NULL \
										: &(vec)->v[(vec)->n++])
#define vec_free(vec) (free((vec)->v), (vec)->v = NULL, (vec)->n = (vec)->cap = 0)

#endif
