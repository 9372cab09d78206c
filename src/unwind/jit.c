/*
 * JIT code and its CFI (unwind.h, unw_jit_code_new and unw_space_jit): the CFI of a piece of
 * code is a module without a file, its addresses counted from the code's start, so that code
 * a JIT moves keeps it; a space keeps, beside its mappings, the ranges that hold such code.
 */
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/search.h"

int unw_jit_code_new(struct unw_ctx *c, const struct unw_jit_cfi_opts *o,
		     struct unw_jit_code **out)
{
	if (!o || o->sz != sizeof(*o) || o->code_size > UINT64_MAX - 7)
		return err_set(-EINVAL, "JIT CFI: bad options");
	struct unw_jit_code *j = calloc(1, sizeof(*j));
	if (!j || !vec_reserve(&c->jits, 1) || !(j->mod.path = strdup(o->name ? o->name : "")))
		goto oom;
	/* Where perf inject puts them, after the code: see unwind.h. */
	uint64_t eh = (o->code_size + 7) & ~7ull;
	struct dwarf_cfi_src src = {
		.name = j->mod.path,
		.eh_frame = { o->eh_frame, o->eh_frame ? o->eh_frame_size : 0, eh },
		.eh_frame_hdr = { o->eh_frame_hdr, o->eh_frame_hdr ? o->eh_frame_hdr_size : 0,
				  eh + (o->eh_frame ? o->eh_frame_size : 0) },
		.addr_size = 8,
	};
	int r = dwarf_cfi_open(&src, &j->mod.cfi);
	if (r) {
		free(j->mod.path);
		free(j);
		return r;
	}
	j->mod.dbg_tried = true; /* no file, no separate debug file */
	j->size = o->code_size;
	c->jits.v[c->jits.n++] = j;
	*out = j;
	return 0;
oom:
	free(j);
	return err_set(-ENOMEM, "out of memory");
}

void unw_jit_free_all(struct unw_ctx *c)
{
	for (size_t i = 0; i < c->jits.n; i++) {
		dwarf_cfi_close(c->jits.v[i]->mod.cfi);
		free(c->jits.v[i]->mod.path);
		free(c->jits.v[i]);
	}
	vec_free(&c->jits);
}

int unw_space_jit(struct unw_space *s, uint64_t start, uint64_t end,
		  struct unw_jit_code *code)
{
	if (end <= start)
		return 0;
	if (s->njits == s->capjits &&
	    !vec_reserve_grow((void **)&s->jits, s->njits, &s->capjits, sizeof(*s->jits), 1))
		return -ENOMEM;
	unw_space_restamp(s);
	/* The ranges overlapping the new one are [lo, hi) (sorted and disjoint, their ends are
	 * sorted too); that code is gone, whole: its memory holds other code now. A JIT's
	 * addresses mostly grow, so the move is mostly short. */
	size_t lo = UPPER_BOUND(s->jits, s->njits, .end, start);
	size_t hi = LOWER_BOUND(s->jits, s->njits, .start, end);
	size_t keep = code ? 1 : 0;
	memmove(s->jits + lo + keep, s->jits + hi, (s->njits - hi) * sizeof(*s->jits));
	s->njits = s->njits - (hi - lo) + keep;
	if (code)
		s->jits[lo] = (struct unw_jit_range){ start, end, code };
	return 0;
}

const struct unw_jit_range *unw_jit_find(const struct unw_space *s, uint64_t addr)
{
	size_t lo = UPPER_BOUND(s->jits, s->njits, .start, addr);
	if (lo == 0 || addr >= s->jits[lo - 1].end)
		return NULL;
	return &s->jits[lo - 1];
}
