/*
 * Id map: see idmap.h. Linear probing in a power-of-two table kept at most half full;
 * deletion shifts the entries after a removed one back (no tombstones), so that a map whose
 * keys come and go (the pids of a long recording) never fills up with dead slots.
 */
#include "base/idmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t slot(uint32_t key, size_t cap) { return (key * 2654435761u) & (cap - 1); }

uint32_t idmap_get(const struct idmap *m, uint32_t key)
{
	if (!m->cap)
		return IDMAP_NONE;
	for (size_t i = slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == IDMAP_NONE)
			return IDMAP_NONE;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static void insert(uint32_t *keys, uint32_t *vals, size_t cap, uint32_t key, uint32_t val)
{
	size_t i = slot(key, cap);
	while (vals[i] != IDMAP_NONE && keys[i] != key)
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	vals[i] = val;
}

int idmap_put(struct idmap *m, uint32_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint32_t *keys = malloc(cap * sizeof(*keys)), *vals = malloc(cap * sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		memset(vals, 0xff, cap * sizeof(*vals));
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i] != IDMAP_NONE)
				insert(keys, vals, cap, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	if (idmap_get(m, key) == IDMAP_NONE)
		m->n++;
	insert(m->keys, m->vals, m->cap, key, val);
	return 0;
}

void idmap_del(struct idmap *m, uint32_t key)
{
	if (!m->cap)
		return;
	size_t mask = m->cap - 1, i = slot(key, m->cap);
	for (;; i = (i + 1) & mask) {
		if (m->vals[i] == IDMAP_NONE)
			return;
		if (m->keys[i] == key)
			break;
	}
	m->n--;
	for (size_t j = i;;) {
		m->vals[i] = IDMAP_NONE;
		size_t home;
		do { /* the next entry that may fill the hole: its home not in (i, j] */
			j = (j + 1) & mask;
			if (m->vals[j] == IDMAP_NONE)
				return;
			home = slot(m->keys[j], m->cap);
		} while (i <= j ? (home > i && home <= j) : (home > i || home <= j));
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
