/*
 * Memory for large tables that live as long as their owner and are written once (line
 * tables, unit indexes), from transparent huge pages. Memory first touched is faulted in by
 * the kernel page by page, and at 4 KiB a page those faults cost more than building the
 * tables in them; a 2 MiB page takes one fault. Thread-safe; freed all at once.
 */
#ifndef TALLY_BASE_BULK_H
#define TALLY_BASE_BULK_H

#include <pthread.h>
#include <stddef.h>

struct bulk_chunk;

struct bulk {
	pthread_mutex_t lock;
	struct bulk_chunk *head;
	size_t used; /* bytes used in head */
};

void bulk_init(struct bulk *b);
/* size bytes aligned for any type (contents undefined), or NULL when out of memory. */
void *bulk_alloc(struct bulk *b, size_t size);
/* A copy of size bytes at src, or NULL. */
void *bulk_copy(struct bulk *b, const void *src, size_t size);
void bulk_free(struct bulk *b);

/* At least size bytes: from HUGE_MAP_MIN on, a mapping of its own on huge pages (zeroed);
 * below it, from malloc (contents undefined), whose heap the tally command keeps on huge
 * pages (heap_on_huge_pages): a smaller mapping of its own would be faulted in 4 KiB at a
 * time (a symbol table of 500 KB took 59 faults of a first report so). *map and *len are
 * what huge_unmap() takes. NULL when out of memory. */
#define HUGE_MAP_MIN ((size_t)1 << 20)
void *huge_map(size_t size, void **map, size_t *len);
void huge_unmap(void *map, size_t len);

/* Maps size bytes of zeroed memory on small pages, each faulted in when first touched: for
 * sparse tables of which a run touches a few slots (a symbol table's demangled names, a
 * pointer per symbol). calloc() would clear the whole block when it reuses heap memory.
 * A cache whose entries are large is better served by base/slot_cache.h, which packs the
 * entries used. NULL when out of memory; sparse_unmap() frees. */
void *sparse_map(size_t size);
void sparse_unmap(void *p, size_t size);

/* For a program that owns its process (the tally command, not the library): the next size
 * bytes of malloc's heap, on transparent huge pages. Process-wide, once: call it before
 * the heap grows, with malloc's mmap threshold above 2 MiB; it keeps a block of up to
 * 2 MiB (never touched) for good. Nothing where malloc does not grow the heap with brk (a
 * sanitizer's malloc, another C library). */
void heap_on_huge_pages(size_t size);

#endif
