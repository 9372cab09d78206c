/*
 * Slot caches: see slot_cache.h. Chunks never move, so an entry stays where it is for as
 * long as the cache lives, whatever is added after it.
 */
#include "base/slot_cache.h"

#include <errno.h>
#include <stdlib.h>

int slot_cache_init(struct slot_cache *c, size_t nslots, size_t esize)
{
	size_t nchunks = (nslots + SLOT_CACHE_CHUNK - 1) / SLOT_CACHE_CHUNK;
	*c = (struct slot_cache){ .nslots = nslots, .esize = esize };
	if (nslots > UINT32_MAX || !(c->slots = calloc(nslots ? nslots : 1, sizeof(*c->slots))) ||
	    !(c->chunks = calloc(nchunks ? nchunks : 1, sizeof(*c->chunks)))) {
		slot_cache_free(c);
		return -ENOMEM;
	}
	return 0;
}

void slot_cache_free(struct slot_cache *c)
{
	for (size_t i = 0; c->chunks && i * SLOT_CACHE_CHUNK < c->nentries; i++)
		free(c->chunks[i]);
	free(c->chunks);
	free(c->slots);
	*c = (struct slot_cache){ 0 };
}

/* The slow half of slot_cache_entry(): an unused slot gets the next entry. There are never
 * more entries than slots, as a slot keeps its entry once it has one. */
void *slot_cache_add(struct slot_cache *c, size_t slot)
{
	size_t k = c->nentries, at = k % SLOT_CACHE_CHUNK;
	unsigned char **chunk = &c->chunks[k / SLOT_CACHE_CHUNK];
	if (!at && !(*chunk = calloc(SLOT_CACHE_CHUNK, c->esize)))
		return NULL;
	c->nentries++;
	c->slots[slot] = (uint32_t)k + 1;
	return *chunk + at * c->esize;
}
