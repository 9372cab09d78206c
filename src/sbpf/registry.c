/*
 * The function registry: a small open-addressed map from a 32-bit key to a pc (and name).
 * Keys are already murmur3 hashes (or pcs), so they are spread by one multiplication.
 * Adding a key that is present with another pc is the reference's SymbolHashCollision.
 */
#include "sbpf/program.h"

#include <errno.h>
#include <stdlib.h>

static size_t slot_of(uint32_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b1u) & (uint32_t)(cap - 1));
}

static size_t find(const struct sbpf_registry *r, uint32_t key)
{
	size_t i = slot_of(key, r->cap);
	while (r->used[i] && r->v[i].key != key)
		i = (i + 1) & (r->cap - 1);
	return i;
}

static int grow(struct sbpf_registry *r)
{
	size_t cap = r->cap ? r->cap * 2 : 64;
	struct sbpf_func *v = calloc(cap, sizeof(*v));
	uint8_t *used = calloc(cap, 1);
	if (!v || !used) {
		free(v);
		free(used);
		return -ENOMEM;
	}
	struct sbpf_registry n = { v, used, cap, 0 };
	for (size_t i = 0; i < r->cap; i++) {
		if (!r->used[i])
			continue;
		size_t j = find(&n, r->v[i].key);
		n.v[j] = r->v[i];
		n.used[j] = 1;
		n.n++;
	}
	free(r->v);
	free(r->used);
	*r = n;
	return 0;
}

int sbpf_registry_add(struct sbpf_registry *r, uint32_t key, uint32_t pc, const char *name)
{
	if ((r->n + 1) * 2 > r->cap && grow(r))
		return -ENOMEM;
	size_t i = find(r, key);
	if (r->used[i])
		return r->v[i].pc == pc ? 0 : -EEXIST;
	r->used[i] = 1;
	r->v[i] = (struct sbpf_func){ key, pc, name ? name : "" };
	r->n++;
	return 0;
}

const struct sbpf_func *sbpf_registry_get(const struct sbpf_registry *r, uint32_t key)
{
	if (!r->cap)
		return NULL;
	size_t i = find(r, key);
	return r->used[i] ? &r->v[i] : NULL;
}

/* Removal re-inserts the rest of the probe run so lookups never stop early. */
bool sbpf_registry_remove(struct sbpf_registry *r, uint32_t key)
{
	if (!r->cap)
		return false;
	size_t i = find(r, key);
	if (!r->used[i])
		return false;
	r->used[i] = 0;
	r->n--;
	for (size_t j = (i + 1) & (r->cap - 1); r->used[j]; j = (j + 1) & (r->cap - 1)) {
		struct sbpf_func f = r->v[j];
		r->used[j] = 0;
		size_t k = find(r, f.key);
		r->v[k] = f;
		r->used[k] = 1;
	}
	return true;
}

void sbpf_registry_free(struct sbpf_registry *r)
{
	free(r->v);
	free(r->used);
	r->v = NULL;
	r->used = NULL;
	r->cap = r->n = 0;
}
