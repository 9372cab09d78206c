/*
 * The radix sort (base/radix.h) against qsort ordering by (key, original position): equal
 * keys keep their order, every element is kept, for keys that differ in low bits only, in
 * high bits only, in all 64, for one pass and several, for elements of odd sizes (moved in
 * place, cycle by cycle); arena copies (arena_copy) hold what they copied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/arena.h"
#include "base/radix.h"

struct elem {
	uint64_t key;
	uint32_t pos;
	char pad[3]; /* an element size that is no power of two */
};

static int by_key_then_pos(const void *a, const void *b)
{
	const struct elem *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static uint64_t next(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005u + 1442695040888963407u;
	return *seed >> 11 ^ *seed << 40;
}

/* Keys drawn from r, masked by mask and shifted: few or many distinct values. */
static void check_sort(size_t n, uint64_t mask, unsigned shift, uint64_t seed)
{
	struct elem *a = calloc(n ? n : 1, sizeof(*a)), *want = calloc(n ? n : 1, sizeof(*a));
	assert_non_null(a);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		a[i] = (struct elem){ .key = (next(&seed) & mask) << shift, .pos = (uint32_t)i };
	memcpy(want, a, n * sizeof(*a));
	qsort(want, n, sizeof(*want), by_key_then_pos);
	assert_int_equal(radix_sort(a, n, sizeof(*a), offsetof(struct elem, key)), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].key, want[i].key);
		assert_int_equal(a[i].pos, want[i].pos);
	}
	free(a);
	free(want);
}

static void radix_sort_matches_a_stable_sort(void **state)
{
	(void)state;
	check_sort(0, ~0ull, 0, 1);
	check_sort(1, ~0ull, 0, 2);
	check_sort(2, 1, 0, 3);
	check_sort(1000, 0, 0, 4);            /* all keys equal */
	check_sort(1000, 7, 0, 5);            /* many equal keys, one pass */
	check_sort(5000, 0xfff, 4, 6);        /* 12 bits: one full pass */
	check_sort(5000, 0x1fff, 0, 7);       /* 13 bits: two passes */
	check_sort(20000, 0xffffff, 2, 8);    /* an address space's 24 bits */
	check_sort(3000, 0xff, 56, 9);        /* the top byte only */
	check_sort(3000, ~0ull, 0, 10);       /* all 64 bits */
}

static void arena_copy_holds_its_bytes(void **state)
{
	(void)state;
	struct arena a = { 0 };
	char text[100];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	char *p = arena_copy(&a, text, sizeof(text));
	char *q = arena_copy(&a, text + 10, 0);
	char *s = arena_strndup(&a, text, 5);
	assert_non_null(p);
	assert_non_null(q);
	assert_memory_equal(p, text, sizeof(text));
	assert_string_equal(s, "abcde");
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(radix_sort_matches_a_stable_sort),
		cmocka_unit_test(arena_copy_holds_its_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
