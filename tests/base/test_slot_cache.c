/*
 * Slot caches: an unused slot's entry comes zeroed, a used slot gives the same entry again
 * (with what was written to it), entries of different slots do not overlap and stay where
 * they are as others are added, and there are only as many entries as slots were used.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/slot_cache.h"

struct entry {
	uint64_t key;
	unsigned char fill[100]; /* not a multiple of 8: entries of odd sizes */
};

static void unused_slot_gives_a_zeroed_entry_used_one_the_same(void **state)
{
	(void)state;
	struct slot_cache c;
	assert_int_equal(slot_cache_init(&c, 64, sizeof(struct entry)), 0);
	struct entry *e = slot_cache_entry(&c, 17);
	assert_non_null(e);
	static const struct entry zero;
	assert_memory_equal(e, &zero, sizeof(zero));
	e->key = 17;
	memset(e->fill, 0xab, sizeof(e->fill));
	assert_ptr_equal(slot_cache_entry(&c, 17), e);
	assert_int_equal(((struct entry *)slot_cache_entry(&c, 17))->key, 17);
	assert_int_equal(c.nentries, 1);
	slot_cache_free(&c);
}

static void entries_are_disjoint_and_stay_put(void **state)
{
	(void)state;
	enum { SLOTS = 1000 };
	struct slot_cache c;
	assert_int_equal(slot_cache_init(&c, SLOTS, sizeof(struct entry)), 0);
	struct entry *seen[SLOTS] = { 0 };
	/* every slot once, in an order that is not the slots' */
	for (size_t i = 0; i < SLOTS; i++) {
		size_t slot = i * 7 % SLOTS;
		struct entry *e = slot_cache_entry(&c, slot);
		assert_non_null(e);
		assert_int_equal(e->key, 0);
		e->key = slot + 1;
		memset(e->fill, (int)(slot & 0xff), sizeof(e->fill));
		seen[slot] = e;
	}
	assert_int_equal(c.nentries, SLOTS);
	for (size_t slot = 0; slot < SLOTS; slot++) {
		struct entry *e = slot_cache_entry(&c, slot);
		assert_ptr_equal(e, seen[slot]);
		assert_int_equal(e->key, slot + 1);
		for (size_t k = 0; k < sizeof(e->fill); k++)
			assert_int_equal(e->fill[k], slot & 0xff);
	}
	assert_int_equal(c.nentries, SLOTS);
	slot_cache_free(&c);
}

static void free_of_an_unused_cache_is_safe(void **state)
{
	(void)state;
	struct slot_cache c;
	assert_int_equal(slot_cache_init(&c, 4096, 8), 0);
	slot_cache_free(&c);
	slot_cache_free(&c); /* freed twice: the second finds nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unused_slot_gives_a_zeroed_entry_used_one_the_same),
		cmocka_unit_test(entries_are_disjoint_and_stay_put),
		cmocka_unit_test(free_of_an_unused_cache_is_safe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
