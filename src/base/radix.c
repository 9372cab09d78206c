/* Stable radix sort by a 64-bit key: see radix.h. */
#include "base/radix.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/bulk.h"

/* A key and where its element stands, as the passes move them. */
struct sort_key {
	uint64_t key;
	size_t idx;
};

#define RADIX_MAX 12

/* Sorts keys, stably, in as few passes of at most RADIX_MAX bits as cover the bits in which
 * keys differ, moving them between keys and tmp; returns whichever of the two holds them
 * sorted. */
static struct sort_key *sort_keys(struct sort_key *keys, struct sort_key *tmp, size_t n)
{
	uint64_t differ = 0;
	for (size_t i = 1; i < n; i++)
		differ |= keys[i].key ^ keys[0].key;
	if (!differ)
		return keys;
	unsigned low = (unsigned)__builtin_ctzll(differ);
	unsigned high = 64 - (unsigned)__builtin_clzll(differ);
	unsigned passes = (high - low + RADIX_MAX - 1) / RADIX_MAX;
	unsigned bits = (high - low + passes - 1) / passes;
	size_t mask = ((size_t)1 << bits) - 1;
	for (unsigned shift = low; shift < high; shift += bits) {
		size_t count[1u << RADIX_MAX] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[keys[i].key >> shift & mask]++;
		for (size_t v = 0, at = 0, c; v <= mask; v++, at += c) {
			c = count[v];
			count[v] = at;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[keys[i].key >> shift & mask]++] = keys[i];
		struct sort_key *sorted = tmp;
		tmp = keys;
		keys = sorted;
	}
	return keys;
}

/* Puts the element sorted[i].idx at i, for every i, in place: each cycle of the
 * permutation is followed with one element held aside (hold, size bytes), and sorted's
 * indexes are set to their own places as they are filled. A copy of the whole array (as
 * large as the array, first touched here) cost more page faults than the sort itself. */
static void permute(unsigned char *b, size_t size, struct sort_key *sorted, size_t n,
		    unsigned char *hold)
{
	for (size_t i = 0; i < n; i++) {
		if (sorted[i].idx == i)
			continue;
		memcpy(hold, b + i * size, size);
		size_t j = i;
		for (size_t from = sorted[j].idx; from != i; j = from, from = sorted[j].idx) {
			memcpy(b + j * size, b + from * size, size);
			sorted[j].idx = j;
		}
		memcpy(b + j * size, hold, size);
		sorted[j].idx = j;
	}
}

/* Room for the keys: from the heap when small, else on a huge page (rounded up to one),
 * whose single fault costs less than the small pages' of 256 KiB or more (python3.11d's
 * symbol table: 190 faults). */
#define KEYS_ON_HUGE_PAGE (256u << 10)

static struct sort_key *key_room(size_t bytes, void **map, size_t *len)
{
	if (bytes < KEYS_ON_HUGE_PAGE)
		return malloc(bytes);
	return huge_map(bytes < (1u << 20) ? 1u << 20 : bytes, map, len);
}

static void free_key_room(struct sort_key *keys, void *map, size_t len)
{
	if (map)
		munmap(map, len);
	else
		free(keys);
}

size_t radix_scratch_size(size_t n)
{
	return 2 * n * sizeof(struct sort_key);
}

int radix_sort_in(void *base, size_t n, size_t size, size_t key_at, void *scratch)
{
	if (n < 2)
		return 0;
	void *map = NULL;
	size_t len = 0;
	struct sort_key *keys = scratch ? scratch : key_room(radix_scratch_size(n), &map, &len);
	unsigned char *hold = malloc(size);
	if (!keys || !hold) {
		if (!scratch)
			free_key_room(keys, map, len);
		free(hold);
		return -ENOMEM;
	}
	unsigned char *b = base;
	for (size_t i = 0; i < n; i++) {
		uint64_t key;
		memcpy(&key, b + i * size + key_at, sizeof(key));
		keys[i] = (struct sort_key){ key, i };
	}
	permute(b, size, sort_keys(keys, keys + n, n), n, hold);
	if (!scratch)
		free_key_room(keys, map, len);
	free(hold);
	return 0;
}

int radix_sort(void *base, size_t n, size_t size, size_t key_at)
{
	return radix_sort_in(base, n, size, key_at, NULL);
}
