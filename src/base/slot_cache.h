/*
 * The storage of a direct-mapped cache: a table of slots, where a slot's entry is
 * allocated, zeroed, the first time the slot is used, next to the entries allocated before
 * it, in chunks from the heap. A run touches a few hundred slots of thousands at random; had the
 * entries been the table (a 2 MB array of rule-cache rows, say), each would fault in a
 * page of its own, 10 to 20 us apiece on a virtual machine, while the same entries side
 * by side fill a few pages of heap that is mostly faulted in already. What an entry holds
 * and when it matches are the cache's own: a fresh entry is all zero bytes.
 */
#ifndef TALLY_BASE_SLOT_CACHE_H
#define TALLY_BASE_SLOT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define SLOT_CACHE_CHUNK 32 /* entries per chunk */

struct slot_cache {
	uint32_t *slots;        /* 0: unused, else the entry's index + 1 */
	unsigned char **chunks; /* of SLOT_CACHE_CHUNK entries each */
	size_t nslots, esize, nentries;
};

/* nslots slots for entries of esize bytes: 0, or -ENOMEM. */
int slot_cache_init(struct slot_cache *c, size_t nslots, size_t esize);
void slot_cache_free(struct slot_cache *c);
/* slot_cache_entry()'s slow half, for an unused slot. */
void *slot_cache_add(struct slot_cache *c, size_t slot);

/* The entry of slot (below nslots), zeroed when the slot was unused; NULL when there is no
 * memory for it, which the cache takes as a miss it cannot keep. */
static inline void *slot_cache_entry(struct slot_cache *c, size_t slot)
{
	uint32_t k = c->slots[slot];
	if (!k)
		return slot_cache_add(c, slot);
	k--;
	return c->chunks[k / SLOT_CACHE_CHUNK] + (size_t)(k % SLOT_CACHE_CHUNK) * c->esize;
}

#endif
