/* Stable radix sort by a 64-bit key: see radix.h. */
#include "base/radix.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int radix_sort(void *base, size_t n, size_t size, size_t key_at)
{
	if (n < 2)
		return 0;
	struct sort_key *keys = malloc(2 * n * sizeof(*keys));
	unsigned char *out = malloc(n * size);
	if (!keys || !out) {
		free(keys);
		free(out);
		return -ENOMEM;
	}
	unsigned char *b = base;
	for (size_t i = 0; i < n; i++) {
		uint64_t key;
		memcpy(&key, b + i * size + key_at, sizeof(key));
		keys[i] = (struct sort_key){ key, i };
	}
	const struct sort_key *sorted = sort_keys(keys, keys + n, n);
	for (size_t i = 0; i < n; i++)
		memcpy(out + i * size, b + sorted[i].idx * size, size);
	memcpy(base, out, n * size);
	free(keys);
	free(out);
	return 0;
}
