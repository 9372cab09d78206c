/*
 * Bump allocator: see arena.h. Chunks grow geometrically to 1 MiB in all, then are 4 MiB
 * each; a request larger than a chunk gets a chunk of its own. Chunks of 2 MiB and more
 * are huge pages (base/bulk.h): a large arena, such as the abbreviation tables of a big
 * library, is faulted in a few pages at a time instead of thousands.
 */
#include "base/arena.h"
#include "base/bulk.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BIG_CHUNK ((size_t)2 << 20)
#define MAX_CHUNK ((size_t)4 << 20)

struct arena_chunk {
	struct arena_chunk *next;
	void *map; /* the mapping of a huge-page chunk, else NULL (malloc) */
	size_t map_len;
	size_t size;
	alignas(max_align_t) unsigned char data[];
};

static struct arena_chunk *new_chunk(size_t size)
{
	void *map = NULL;
	size_t len = 0;
	struct arena_chunk *c = size >= BIG_CHUNK ? huge_map(sizeof(*c) + size, &map, &len)
						  : malloc(sizeof(*c) + size);
	if (c) {
		c->map = map;
		c->map_len = len;
	}
	return c;
}

/* size bytes, not cleared. */
static void *take(struct arena *a, size_t size)
{
	const size_t align = alignof(max_align_t);
	size = (size + align - 1) & ~(align - 1);
	if (!a->head || a->head->size - a->used < size) {
		size_t want = a->head ? a->head->size * 2 : 4096;
		if (a->total >= BIG_CHUNK / 2)
			want = MAX_CHUNK; /* a large arena: straight to huge pages */
		if (want > MAX_CHUNK)
			want = MAX_CHUNK;
		if (want < size)
			want = size;
		struct arena_chunk *c = new_chunk(want);
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
	return p;
}

void *arena_alloc(struct arena *a, size_t size)
{
	void *p = take(a, size);
	if (p)
		memset(p, 0, size);
	return p;
}

void *arena_copy(struct arena *a, const void *src, size_t size)
{
	void *p = take(a, size);
	if (p && size)
		memcpy(p, src, size);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = take(a, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
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
		if (c->map)
			munmap(c->map, c->map_len);
		else
			free(c);
		c = next;
	}
	memset(a, 0, sizeof(*a));
}
