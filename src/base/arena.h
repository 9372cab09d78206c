/*
 * Bump allocator for parse results that live as long as the file they came from: many small
 * allocations, freed in one call. Memory is zeroed. Not thread-safe; an arena has one owner.
 */
#ifndef TALLY_BASE_ARENA_H
#define TALLY_BASE_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;
	size_t used;  /* bytes used in head */
	size_t total; /* bytes obtained from malloc, for memory accounting */
};

/* Returns zeroed memory aligned for any type, or NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t size);
/* A copy of size bytes at src (not cleared first), or NULL when out of memory. */
void *arena_copy(struct arena *a, const void *src, size_t size);
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_free(struct arena *a);

#endif
