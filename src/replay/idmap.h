/*
 * A map from process or thread ids to array indexes (open addressing), so that replaying a
 * recording of thousands of processes does not search a list per record.
 */
#ifndef TALLY_REPLAY_IDMAP_H
#define TALLY_REPLAY_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define REPLAY_IDMAP_NONE UINT32_MAX

struct replay_idmap {
	uint32_t *keys;
	uint32_t *vals; /* REPLAY_IDMAP_NONE: free slot */
	size_t cap, n;
};

uint32_t replay_idmap_get(const struct replay_idmap *m, uint32_t key);
/* 0 or -ENOMEM. */
int replay_idmap_put(struct replay_idmap *m, uint32_t key, uint32_t val);
void replay_idmap_free(struct replay_idmap *m);

#endif
