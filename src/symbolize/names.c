/*
 * Subroutine names. A concrete or inlined instance usually names itself only through
 * DW_AT_abstract_origin or DW_AT_specification, so the search follows those links the way
 * LLVM's findRecursively does (a linkage name anywhere on the chain beats a plain name).
 * Results are cached by DIE offset: the inlined copies of one function share an origin.
 */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf/dwarf_consts.h"
#include "symbolize/symbolize_internal.h"

/* Open addressing from DIE offset to name (NULL name: looked up, none found). */
struct sym_name_cache {
	uint64_t *keys; /* offset + 1; 0 marks an empty slot */
	const char **vals;
	size_t cap, n;
};

static size_t slot(const struct sym_name_cache *c, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (c->cap - 1);
	while (c->keys[i] && c->keys[i] != key)
		i = (i + 1) & (c->cap - 1);
	return i;
}

static bool cache_get(struct sym_module *m, uint64_t off, const char **name)
{
	pthread_mutex_lock(&m->names_lock);
	struct sym_name_cache *c = m->names;
	bool found = false;
	if (c && c->cap) {
		size_t i = slot(c, off + 1);
		if ((found = c->keys[i] != 0))
			*name = c->vals[i];
	}
	pthread_mutex_unlock(&m->names_lock);
	return found;
}

static void cache_insert(struct sym_module *m, uint64_t off, const char *name)
{
	struct sym_name_cache *c = m->names;
	if (!c && !(c = m->names = calloc(1, sizeof(*c))))
		return;
	if (2 * (c->n + 1) > c->cap) {
		struct sym_name_cache g = { .cap = c->cap ? c->cap * 2 : 1024 };
		g.keys = calloc(g.cap, sizeof(*g.keys));
		g.vals = calloc(g.cap, sizeof(*g.vals));
		if (!g.keys || !g.vals) {
			free(g.keys);
			free(g.vals);
			return; /* a cache miss later costs time, not correctness */
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->keys[i])
				continue;
			size_t j = slot(&g, c->keys[i]);
			g.keys[j] = c->keys[i];
			g.vals[j] = c->vals[i];
		}
		g.n = c->n;
		free(c->keys);
		free(c->vals);
		*c = g;
	}
	size_t i = slot(c, off + 1);
	if (!c->keys[i])
		c->n++;
	c->keys[i] = off + 1;
	c->vals[i] = name;
}

/* Two threads may resolve the same DIE at once; both find the same name. */
static void cache_put(struct sym_module *m, uint64_t off, const char *name)
{
	pthread_mutex_lock(&m->names_lock);
	cache_insert(m, off, name);
	pthread_mutex_unlock(&m->names_lock);
}

void sym_names_free(struct sym_module *m)
{
	if (!m->names)
		return;
	free(m->names->keys);
	free(m->names->vals);
	free(m->names);
	m->names = NULL;
}

const char *sym_demangle(struct sym_module *m, const char *name)
{
	if (m->opts.no_demangle || (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)))
		return name;
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!d)
		return name;
	pthread_mutex_lock(&m->names_lock);
	const char *kept = arena_strdup(&m->arena, d);
	pthread_mutex_unlock(&m->names_lock);
	free(d);
	return kept ? kept : name;
}

/* LLVM's findRecursively: depth-first over the DIE, then its specification, then its
 * abstract origin, each DIE visited once. One walk serves both of LLVM's searches (a
 * linkage name, else a plain name): it stops at the first linkage name and remembers the
 * first plain name met on the way, which is where a walk for the plain name alone would
 * have stopped. first is the DIE at off already decoded, or NULL. */
#define MAX_CHAIN 16

struct found {
	const char *linkage, *name;
};

static bool string_attr(const struct dwarf_die *die, uint16_t at, const char **out)
{
	const struct dwarf_value *v = dwarf_die_attr(die, at);
	if (!v || v->cls != DWC_STRING)
		return false;
	*out = v->str;
	return true;
}

static struct found find_recursively(struct sym_module *m, uint64_t off,
				     const struct dwarf_die *first)
{
	uint64_t work[MAX_CHAIN], seen[MAX_CHAIN];
	int nwork = 0, nseen = 0;
	work[nwork++] = seen[nseen++] = off;
	struct dwarf_die other;
	struct found f = { 0 };
	while (nwork) {
		struct dwarf_unit *u;
		uint64_t at = work[--nwork];
		const struct dwarf_die *die = &other;
		if (at == off && first)
			die = first;
		else if (dwarf_die_at(m->dwarf, at, &other, &u) || !other.abbrev)
			continue;
		if (string_attr(die, DW_AT_MIPS_linkage_name, &f.linkage) ||
		    string_attr(die, DW_AT_linkage_name, &f.linkage))
			return f;
		if (!f.name)
			string_attr(die, DW_AT_name, &f.name);
		const uint16_t links[2] = { DW_AT_abstract_origin, DW_AT_specification };
		for (int i = 0; i < 2; i++) {
			const struct dwarf_value *v = dwarf_die_attr(die, links[i]);
			if (!v || v->cls != DWC_REF || nseen == MAX_CHAIN)
				continue;
			bool dup = false;
			for (int j = 0; j < nseen; j++)
				dup |= seen[j] == v->u;
			if (!dup)
				work[nwork++] = seen[nseen++] = v->u;
		}
	}
	return f;
}

/* An instance that names itself only through its abstract origin shares the origin's name,
 * and so its cache entry. */
static bool only_origin(const struct dwarf_die *die, uint64_t off, uint64_t *origin)
{
	const struct dwarf_value *o = dwarf_die_attr(die, DW_AT_abstract_origin);
	if (!o || o->cls != DWC_REF || o->u == off || dwarf_die_attr(die, DW_AT_specification) ||
	    dwarf_die_attr(die, DW_AT_name) || dwarf_die_attr(die, DW_AT_linkage_name) ||
	    dwarf_die_attr(die, DW_AT_MIPS_linkage_name))
		return false;
	*origin = o->u;
	return true;
}

/* The DIE at off decoded into die, or NULL when it cannot be. */
static const struct dwarf_die *decode(struct sym_module *m, uint64_t off, struct dwarf_die *die)
{
	struct dwarf_unit *u;
	return dwarf_die_at(m->dwarf, off, die, &u) || !die->abbrev ? NULL : die;
}

static const char *die_name(struct sym_module *m, uint64_t off, int depth)
{
	const char *name;
	if (cache_get(m, off, &name))
		return name;
	struct dwarf_die die;
	const struct dwarf_die *first = decode(m, off, &die);
	uint64_t origin;
	if (depth < MAX_CHAIN && first && only_origin(first, off, &origin)) {
		name = die_name(m, origin, depth + 1);
	} else {
		struct found f = find_recursively(m, off, first);
		name = f.linkage ? f.linkage : f.name;
		if (name)
			name = sym_demangle(m, name);
	}
	cache_put(m, off, name);
	return name;
}

bool sym_die_has_linkage_name(struct sym_module *m, uint64_t off)
{
	return find_recursively(m, off, NULL).linkage != NULL;
}

const char *sym_die_name(struct sym_module *m, uint64_t off)
{
	return die_name(m, off, 0);
}
