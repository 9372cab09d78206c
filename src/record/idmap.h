/*
 * A map from process or thread ids to array indexes (open addressing), so that replaying a
 * recording of thousands of processes does not search a list per record.
 */
#ifndef TALLY_RECORD_IDMAP_H
#define TALLY_RECORD_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define REC_IDMAP_NONE UINT32_MAX

struct rec_idmap {
	uint32_t *keys;
	uint32_t *vals; /* REC_IDMAP_NONE: free slot */
	size_t cap, n;
};

uint32_t rec_idmap_get(const struct rec_idmap *m, uint32_t key);
/* 0 or -ENOMEM. */
int rec_idmap_put(struct rec_idmap *m, uint32_t key, uint32_t val);
void rec_idmap_free(struct rec_idmap *m);

#endif
