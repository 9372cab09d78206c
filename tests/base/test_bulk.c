/*
 * Bulk memory (base/bulk.h) and the arena's huge chunks: every block is aligned, blocks
 * never overlap (each is filled with its own pattern and checked after all the others were
 * written), a request larger than a chunk gets one of its own, threads allocating at once
 * get disjoint blocks, large mappings start on a huge-page boundary, and small ones come
 * from malloc.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/arena.h"
#include "base/bulk.h"

struct block {
	unsigned char *p;
	size_t size;
	unsigned char mark;
};

/* Sizes from a few bytes to past a chunk, in a fixed pseudo-random order. */
static size_t size_of(unsigned i)
{
	static const size_t sizes[] = { 1, 24, 100, 4096, 65536, 300000, 1 << 20, 3 << 20 };
	return sizes[(i * 7u + 3u) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void fill_and_check(struct block *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		memset(b[i].p, b[i].mark, b[i].size);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < b[i].size; k += 509)
			assert_int_equal(b[i].p[k], b[i].mark);
}

static void bulk_blocks_are_aligned_and_disjoint(void **state)
{
	(void)state;
	struct bulk bk;
	bulk_init(&bk);
	struct block b[64];
	for (unsigned i = 0; i < 64; i++) {
		b[i] = (struct block){ bulk_alloc(&bk, size_of(i)), size_of(i), (unsigned char)i };
		assert_non_null(b[i].p);
		assert_int_equal((uintptr_t)b[i].p % alignof(max_align_t), 0);
	}
	fill_and_check(b, 64);
	bulk_free(&bk);
}

static void bulk_copy_copies(void **state)
{
	(void)state;
	struct bulk bk;
	bulk_init(&bk);
	const char text[] = "line rows";
	char *c = bulk_copy(&bk, text, sizeof(text));
	assert_non_null(c);
	assert_string_equal(c, text);
	assert_ptr_not_equal(c, text);
	bulk_free(&bk);
}

struct worker {
	struct bulk *bk;
	struct block b[200];
	unsigned char id;
};

static void *allocate(void *arg)
{
	struct worker *w = arg;
	for (unsigned i = 0; i < 200; i++) {
		size_t size = size_of(i) % 70000 + 1;
		w->b[i] = (struct block){ bulk_alloc(w->bk, size), size, w->id };
		if (w->b[i].p)
			memset(w->b[i].p, w->id, size);
	}
	return NULL;
}

static void bulk_threads_get_disjoint_blocks(void **state)
{
	(void)state;
	struct bulk bk;
	bulk_init(&bk);
	static struct worker w[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ .bk = &bk, .id = (unsigned char)(i + 1) };
		assert_int_equal(pthread_create(&th[i], NULL, allocate, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++) {
		for (unsigned k = 0; k < 200; k++) {
			assert_non_null(w[i].b[k].p);
			for (size_t j = 0; j < w[i].b[k].size; j += 97)
				assert_int_equal(w[i].b[k].p[j], w[i].id);
		}
	}
	bulk_free(&bk);
}

static void huge_map_aligns_large_mappings(void **state)
{
	(void)state;
	void *map;
	size_t len;
	size_t size = (3u << 20) + 12345;
	unsigned char *p = huge_map(size, &map, &len);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % (2u << 20), 0);
	assert_true(p >= (unsigned char *)map && p + size <= (unsigned char *)map + len);
	p[0] = 1;
	p[size - 1] = 2; /* the whole request is mapped and writable */
	assert_int_equal(p[1], 0);
	huge_unmap(map, len);
}

/* Below HUGE_MAP_MIN the room is malloc's: nothing to unmap (len 0), freed by huge_unmap
 * (the sanitizers' build says whether that pairs with malloc). */
static void huge_map_of_a_small_size_is_malloced(void **state)
{
	(void)state;
	void *map;
	size_t len = 1;
	size_t size = HUGE_MAP_MIN - 1;
	unsigned char *p = huge_map(size, &map, &len);
	assert_non_null(p);
	assert_int_equal(len, 0);
	assert_ptr_equal(p, map);
	memset(p, 0x5a, size);
	huge_unmap(map, len);
}

static void arena_past_a_mebibyte_stays_zeroed_and_disjoint(void **state)
{
	(void)state;
	struct arena a = { 0 };
	struct block b[40];
	for (unsigned i = 0; i < 40; i++) {
		size_t size = 100000 + i;
		b[i] = (struct block){ arena_alloc(&a, size), size, (unsigned char)(i + 1) };
		assert_non_null(b[i].p);
		for (size_t k = 0; k < size; k += 4096)
			assert_int_equal(b[i].p[k], 0);
	}
	fill_and_check(b, 40);
	assert_true(a.total >= 4000000);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bulk_blocks_are_aligned_and_disjoint),
		cmocka_unit_test(bulk_copy_copies),
		cmocka_unit_test(bulk_threads_get_disjoint_blocks),
		cmocka_unit_test(huge_map_aligns_large_mappings),
		cmocka_unit_test(huge_map_of_a_small_size_is_malloced),
		cmocka_unit_test(arena_past_a_mebibyte_stays_zeroed_and_disjoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
