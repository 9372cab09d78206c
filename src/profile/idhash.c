/*
 * The id hash set: see idhash.h. Hashes are 32 bits, which is also the limit on ids.
 */
#include "profile/idhash.h"

#include <errno.h>
#include <stdlib.h>

uint32_t idhash_find(const struct idhash *h, uint32_t hash, idhash_eq eq, const void *ctx)
{
	if (!h->slot)
		return UINT32_MAX;
	for (size_t i = hash & h->mask;; i = (i + 1) & h->mask) {
		uint64_t s = h->slot[i];
		if (!s)
			return UINT32_MAX;
		uint32_t id = (uint32_t)s - 1;
		if ((uint32_t)(s >> 32) == hash && eq(ctx, id))
			return id;
	}
}

static void put(uint64_t *slot, size_t mask, uint64_t s)
{
	size_t i = (s >> 32) & mask;
	while (slot[i])
		i = (i + 1) & mask;
	slot[i] = s;
}

static int grow(struct idhash *h)
{
	size_t cap = h->slot ? (h->mask + 1) * 2 : 64;
	uint64_t *ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	if (h->slot) {
		for (size_t i = 0; i <= h->mask; i++)
			if (h->slot[i])
				put(ns, cap - 1, h->slot[i]);
		free(h->slot);
	}
	h->slot = ns;
	h->mask = cap - 1;
	return 0;
}

int idhash_add(struct idhash *h, uint32_t hash, uint32_t id)
{
	if (!h->slot || (h->n + 1) * 2 > h->mask + 1) {
		int rc = grow(h);
		if (rc)
			return rc;
	}
	put(h->slot, h->mask, (uint64_t)hash << 32 | ((uint64_t)id + 1));
	h->n++;
	return 0;
}

void idhash_free(struct idhash *h)
{
	free(h->slot);
	h->slot = NULL;
	h->mask = h->n = 0;
}

/* FNV-1a, finished with a multiply-xorshift so low bits (the probe start) are well mixed. */
uint32_t idhash_bytes(const void *s, size_t len)
{
	const unsigned char *b = s;
	uint64_t x = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		x = (x ^ b[i]) * 0x100000001b3ull;
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	return (uint32_t)(x ^ x >> 32);
}

uint32_t idhash_mix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	x ^= x >> 31;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 29;
	return (uint32_t)(x ^ x >> 32);
}
