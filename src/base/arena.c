/*
 * Bump allocator: see arena.h. Chunks grow geometrically up to 1 MiB; a request larger than
 * a chunk gets a chunk of its own.
 */
#include "base/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t size;
	alignas(max_align_t) unsigned char data[];
};

void *arena_alloc(struct arena *a, size_t size)
{
	const size_t align = alignof(max_align_t);
	size = (size + align - 1) & ~(align - 1);
	if (!a->head || a->head->size - a->used < size) {
		size_t want = a->head ? a->head->size * 2 : 4096;
		if (want > (1u << 20))
			want = 1u << 20;
		if (want < size)
			want = size;
		struct arena_chunk *c = malloc(sizeof(*c) + want);
		if (!c)
			return NULL;
		c->next = a->head;
		c->size = want;
		a->head = c;
		a->used = 0;
		a->total += want;
	}
	void *p = a->head->data + a->used;
	a->used += size;
	memset(p, 0, size);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	if (d)
		memcpy(d, s, n);
	return d;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	memset(a, 0, sizeof(*a));
}
