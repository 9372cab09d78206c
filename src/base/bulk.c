/*
 * Huge-page bulk memory: see bulk.h. The first chunk is 256 KiB, from malloc (a small
 * module takes no huge page of its own), the next ones 4 MiB; a request larger than a
 * quarter of that gets a mapping of its own, so that little is left unused at the end of
 * a chunk.
 */
#include "base/bulk.h"
#include "base/mutex.h"

#include <limits.h>
#include <malloc.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define FIRST_CHUNK ((size_t)256 << 10)
#define MAX_CHUNK ((size_t)4 << 20)

struct bulk_chunk {
	struct bulk_chunk *next;
	void *map;
	size_t len;  /* of map */
	size_t size; /* usable bytes at data */
	alignas(max_align_t) unsigned char data[];
};

void *huge_map(size_t size, void **map, size_t *len)
{
	*len = 0;
	if (size < HUGE_MAP_MIN)
		return *map = malloc(size ? size : 1);
	/* Rounding up to whole huge pages costs less zeroing than the small pages' faults
	 * would; the mapping has room to align the start. */
	size_t rounded = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	size_t n = rounded + HUGE_PAGE;
	uint8_t *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	uint8_t *p = (uint8_t *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	madvise(p, rounded, MADV_HUGEPAGE);
	*map = m;
	*len = n;
	return p;
}

void huge_unmap(void *map, size_t len)
{
	if (len)
		munmap(map, len);
	else
		free(map);
}

void *sparse_map(size_t size)
{
	void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_NOHUGEPAGE); /* a huge page would be cleared whole */
	return p;
}

void sparse_unmap(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}

/* The block that fills the heap up to the first huge page boundary: see
 * heap_on_huge_pages. Kept here so that leak checkers see it held; volatile, or the
 * compiler drops a store nothing reads, and the allocation with it. */
static void *volatile heap_pin;

void heap_on_huge_pages(size_t size)
{
#ifdef __GLIBC__
	/* A report or a batch of addresses fills tens of megabytes of heap with its tables,
	 * and a page fault costs 5 to 10 us on a virtual machine: a third of a first report's
	 * time went to faults. glibc grows its heap with brk, by the request and M_TOP_PAD:
	 * the first block grows it by the pad at once. The pin fills the top up to a huge
	 * page boundary, so that the blocks after it are on huge pages, and the headers it
	 * writes lie below the boundary (a page touched before madvise keeps its 2 MiB range
	 * on small pages: one run in two took 500 more faults so). Growth past the room is on
	 * small pages, as before. (glibc's own way, the glibc.malloc.hugetlb tunable, is
	 * read from the environment at start only.) */
	if (size > INT_MAX || mallopt(M_TOP_PAD, (int)size) != 1)
		return;
	void *volatile probe = malloc(1); /* where the top is: after it */
	uintptr_t at = (uintptr_t)probe;
	uintptr_t start = (at + 4096 + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	size_t pin = start - at - 128; /* room for the headers of the two blocks and the top */
	heap_pin = probe ? malloc(pin) : NULL;
	free(probe);
	uintptr_t hi = (uintptr_t)sbrk(0);
	mallopt(M_TOP_PAD, (int)HUGE_PAGE);
	if (!heap_pin || hi == (uintptr_t)-1)
		return;
	/* Where the pin really ended (a block freed earlier may have held the probe). */
	start = ((uintptr_t)heap_pin + pin + 64 + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t end = hi & ~(uintptr_t)(HUGE_PAGE - 1);
	if (end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)size;
#endif
}

void bulk_init(struct bulk *b)
{
	*b = (struct bulk){ 0 };
	mutex_init_adaptive(&b->lock);
}

/* Prepends a chunk with room for size bytes; it becomes the head unless it is a request's
 * own, which goes behind the head so that the head's free room stays in use. */
static struct bulk_chunk *add_chunk(struct bulk *b, size_t size)
{
	size_t want = b->head ? MAX_CHUNK : FIRST_CHUNK;
	bool own = size > MAX_CHUNK / 4;
	if (own || want < size)
		want = size;
	void *map;
	size_t len;
	struct bulk_chunk *c = huge_map(sizeof(*c) + want, &map, &len);
	if (!c)
		return NULL;
	c->map = map;
	c->len = len;
	c->size = want;
	if (own && b->head) {
		c->next = b->head->next;
		b->head->next = c;
	} else {
		c->next = b->head;
		b->head = c;
		b->used = 0;
	}
	return c;
}

void *bulk_alloc(struct bulk *b, size_t size)
{
	const size_t align = alignof(max_align_t);
	size = (size + align - 1) & ~(align - 1);
	void *p = NULL;
	pthread_mutex_lock(&b->lock);
	if (b->head && b->head->size - b->used >= size) {
		p = b->head->data + b->used;
		b->used += size;
	} else {
		struct bulk_chunk *c = add_chunk(b, size);
		if (c && c == b->head) {
			p = c->data;
			b->used = size;
		} else if (c) {
			p = c->data;
		}
	}
	pthread_mutex_unlock(&b->lock);
	return p;
}

void *bulk_copy(struct bulk *b, const void *src, size_t size)
{
	void *p = bulk_alloc(b, size);
	if (p && size)
		memcpy(p, src, size);
	return p;
}

void bulk_free(struct bulk *b)
{
	for (struct bulk_chunk *c = b->head, *next; c; c = next) {
		next = c->next;
		huge_unmap(c->map, c->len);
	}
	b->head = NULL;
	pthread_mutex_destroy(&b->lock);
}
