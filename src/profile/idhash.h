/*
 * Open-addressing hash set of uint32 ids, for interning: the table stores only ids and
 * their hashes, the keys live in the caller's arrays and are compared through a callback.
 * Linear probing, power-of-two capacity, grown at 50% load. The pprof writer in src/report
 * uses it too, for its string and location tables.
 */
#ifndef TALLY_PROFILE_IDHASH_H
#define TALLY_PROFILE_IDHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idhash {
	uint64_t *slot; /* hash << 32 | (id + 1); 0 is empty */
	size_t mask, n;
};

typedef bool (*idhash_eq)(const void *ctx, uint32_t id);

/* The id whose key equals, or UINT32_MAX. */
uint32_t idhash_find(const struct idhash *h, uint32_t hash, idhash_eq eq, const void *ctx);
/* Adds an id known to be absent; 0 or -ENOMEM. */
int idhash_add(struct idhash *h, uint32_t hash, uint32_t id);
void idhash_free(struct idhash *h);

/* Hashes for keys. */
uint32_t idhash_bytes(const void *s, size_t len);
uint32_t idhash_mix(uint64_t a, uint64_t b);

#endif
