/*
 * A process's address space as mapping events describe it: a sorted array of mappings,
 * where a new mapping cuts away whatever it overlaps (as mmap with MAP_FIXED does). JIT code
 * (jit.c) is kept apart: a JIT changes its code's protection, which the recording sees as new
 * mappings, and its code stays.
 */
#include "base/search.h"
#include "base/vec.h"
#include "unwind/unwind_internal.h"

#include <elf.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"

/* A stamp no space has had: walks noted in a space are reused only while it is unchanged
 * (memo.c), and a space's memory may be another's later. */
void unw_space_restamp(struct unw_space *s)
{
	static atomic_uint_fast64_t stamps;
	s->stamp = atomic_fetch_add_explicit(&stamps, 1, memory_order_relaxed) + 1;
}

static int reserve(struct unw_space *s, size_t extra)
{
	if (s->n + extra <= s->cap)
		return 0;
	return vec_reserve_grow((void **)&s->maps, s->n, &s->cap, sizeof(*s->maps), extra)
		       ? 0
		       : -ENOMEM;
}

/* The first executable PT_LOAD segment whose file bytes the mapping covers. */
static const struct elf_segment *text_segment(const struct unw_module *m, uint64_t pgoff,
					      uint64_t len)
{
	if (!m || m->failed)
		return NULL;
	for (size_t i = 0; i < m->elf->nsegments; i++) {
		const struct elf_segment *g = &m->elf->segments[i];
		if (g->type == PT_LOAD && (g->flags & PF_X) && g->offset < pgoff + len &&
		    pgoff < g->offset + g->filesz)
			return g;
	}
	return NULL;
}

int unw_space_map(struct unw_ctx *c, struct unw_space *s, uint64_t start, uint64_t end,
		  uint64_t pgoff, uint32_t prot, const char *path)
{
	if (end <= start)
		return 0;
	if (reserve(s, 2))
		return -ENOMEM;
	unw_space_restamp(s);
	c->ticks++;
	struct unw_module *mod = unw_module_get(c, path);
	if (mod)
		mod->refs++;
	struct unw_mapping nm = { start, end, pgoff, prot, mod,
				  text_segment(mod, pgoff, end - start) };
	size_t out = 0, n = s->n;
	struct unw_mapping *v = s->maps;
	/* Cut the overlapped parts out of existing mappings; a mapping that the new one splits
	 * in the middle leaves a tail, appended and sorted below. */
	struct unw_mapping tail = { 0 };
	bool have_tail = false;
	for (size_t i = 0; i < n; i++) {
		struct unw_mapping m = v[i];
		if (m.end <= start || m.start >= end) {
			v[out++] = m;
			continue;
		}
		if (m.start < start && m.end > end) {
			tail = m;
			tail.pgoff += end - m.start;
			tail.start = end;
			have_tail = true;
			if (m.mod)
				m.mod->refs++;
		}
		if (m.start < start) {
			m.end = start;
			v[out++] = m;
		} else if (m.end > end) {
			m.pgoff += end - m.start;
			m.start = end;
			v[out++] = m;
		} else if (m.mod) { /* wholly replaced */
			m.mod->refs--;
		}
	}
	v[out++] = nm;
	if (have_tail)
		v[out++] = tail;
	s->n = out;
	/* Insertion sort: the array is sorted but for the one or two appended entries. */
	for (size_t i = 1; i < s->n; i++)
		for (size_t k = i; k > 0 && v[k - 1].start > v[k].start; k--) {
			struct unw_mapping t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	return 0;
}

/* The modules of s's mappings lose those references. */
static void unref_all(struct unw_space *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->maps[i].mod)
			s->maps[i].mod->refs--;
	s->n = 0;
}

int unw_space_copy(struct unw_space *dst, const struct unw_space *src)
{
	unw_space_restamp(dst);
	unref_all(dst);
	if (reserve(dst, src->n))
		return -ENOMEM;
	if (src->n)
		memcpy(dst->maps, src->maps, src->n * sizeof(*src->maps));
	dst->n = src->n;
	for (size_t i = 0; i < dst->n; i++)
		if (dst->maps[i].mod)
			dst->maps[i].mod->refs++;
	/* A child's memory is a copy of its parent's, JIT code included. */
	dst->njits = 0;
	if (src->njits > dst->capjits &&
	    !vec_reserve_grow((void **)&dst->jits, 0, &dst->capjits, sizeof(*dst->jits),
			      src->njits))
		return -ENOMEM;
	if (src->njits)
		memcpy(dst->jits, src->jits, src->njits * sizeof(*src->jits));
	dst->njits = src->njits;
	return 0;
}

void unw_space_clear(struct unw_space *s)
{
	unref_all(s);
	free(s->maps);
	free(s->jits);
	memset(s, 0, sizeof(*s));
	unw_space_restamp(s);
}

const struct unw_mapping *unw_space_find(const struct unw_space *s, uint64_t addr)
{
	size_t lo = UPPER_BOUND(s->maps, s->n, .start, addr);
	if (lo == 0 || addr >= s->maps[lo - 1].end)
		return NULL;
	return &s->maps[lo - 1];
}
