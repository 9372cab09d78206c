/*
 * A map from 32-bit ids (process and thread ids, line offsets) to array indexes (open
 * addressing), so that replaying or recording thousands of processes does not search a
 * list per record.
 */
#ifndef TALLY_BASE_IDMAP_H
#define TALLY_BASE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define IDMAP_NONE UINT32_MAX

struct idmap {
	uint32_t *keys;
	uint32_t *vals; /* IDMAP_NONE: free slot */
	size_t cap, n;
};

uint32_t idmap_get(const struct idmap *m, uint32_t key);
/* 0 or -ENOMEM. */
int idmap_put(struct idmap *m, uint32_t key, uint32_t val);
/* Removes key (nothing when absent); the table keeps its size. */
void idmap_del(struct idmap *m, uint32_t key);
void idmap_free(struct idmap *m);

#endif
