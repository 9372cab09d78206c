/*
 * The per-unit index: one walk over the unit's DIEs collects every subprogram and inlined
 * subroutine ("scope") with its enclosing scope and call site, and maps address ranges to
 * the innermost scope. The map is LLVM's (DWARFUnit's AddrDieMap): ranges are inserted
 * parents first, a child's range splits its parent's, and where ranges that are not nested
 * overlap, the later one wins from its start. Matching that keeps our answers equal to
 * llvm-symbolizer's even on oddly nested input. Built once, under the module lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "dwarf/dwarf_consts.h"
#include "symbolize/symbolize_internal.h"

/* Nesting deeper than this is not real code; the walk treats it as corrupt. */
#define MAX_DEPTH 4096

struct build {
	struct sym_module *m;
	struct dwarf_unit *u;
	VEC(struct sym_scope) scopes;
	VEC(struct sym_span) spans;
	int32_t current; /* the scope whose ranges are being inserted */
};

/* Index of the first span whose lo is greater than key. */
static size_t upper_bound(const struct build *b, uint64_t key)
{
	size_t lo = 0, hi = b->spans.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->spans.v[mid].lo <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* map[lo] = (hi, scope), inserting or overwriting. */
static int assign(struct build *b, uint64_t lo, uint64_t hi, int32_t scope)
{
	size_t i = upper_bound(b, lo);
	if (i > 0 && b->spans.v[i - 1].lo == lo) {
		b->spans.v[i - 1].hi = hi;
		b->spans.v[i - 1].scope = scope;
		return 0;
	}
	if (!vec_push(&b->spans))
		return -ENOMEM;
	memmove(&b->spans.v[i + 1], &b->spans.v[i], (b->spans.n - 1 - i) * sizeof(*b->spans.v));
	b->spans.v[i] = (struct sym_span){ lo, hi, scope };
	return 0;
}

static int insert_range(uint64_t lo, uint64_t hi, void *ctx)
{
	struct build *b = ctx;
	size_t i = upper_bound(b, lo);
	if (i > 0 && lo < b->spans.v[i - 1].hi) {
		struct sym_span prev = b->spans.v[i - 1];
		if (hi < prev.hi && assign(b, hi, prev.hi, prev.scope))
			return -ENOMEM;
		if (lo > prev.lo)
			b->spans.v[upper_bound(b, prev.lo) - 1].hi = lo;
	}
	return assign(b, lo, hi, b->current) ? -ENOMEM : 0;
}

static uint32_t const_attr(const struct dwarf_die *die, uint16_t at)
{
	const struct dwarf_value *v = dwarf_die_attr(die, at);
	return v && v->cls == DWC_CONST ? (uint32_t)v->u : 0;
}

static int add_scope(struct build *b, const struct dwarf_die *die, int32_t parent,
		     int32_t *index, bool *has_code)
{
	struct sym_scope *s = vec_push(&b->scopes);
	if (!s)
		return -ENOMEM;
	s->die_offset = die->offset;
	s->parent = parent;
	s->inlined = die->abbrev->tag == DW_TAG_inlined_subroutine;
	if (s->inlined) {
		s->call_file = const_attr(die, DW_AT_call_file);
		s->call_line = const_attr(die, DW_AT_call_line);
		s->call_column = const_attr(die, DW_AT_call_column);
	}
	*index = (int32_t)(b->scopes.n - 1);
	b->current = *index;
	size_t before = b->spans.n;
	int err = dwarf_die_ranges(b->m->dwarf, b->u, die, insert_range, b);
	*has_code = b->spans.n != before || dwarf_die_attr(die, DW_AT_ranges) ||
		    dwarf_die_attr(die, DW_AT_low_pc);
	return err == -ENOMEM ? err : 0; /* a bad range list loses that scope's ranges only */
}

/* Type DIEs hold members and declarations, never code: with a DW_AT_sibling to jump
 * by, their children are not read. */
static bool holds_no_code(uint16_t tag)
{
	switch (tag) {
	case DW_TAG_array_type:
	case DW_TAG_class_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_structure_type:
	case DW_TAG_subroutine_type:
	case DW_TAG_union_type:
		return true;
	}
	return false;
}

static int walk(struct build *b)
{
	struct dwarf *d = b->m->dwarf;
	struct dwarf_die *die = malloc(sizeof(*die));
	int32_t *stack = malloc(MAX_DEPTH * sizeof(*stack));
	int depth = 0, err = die && stack ? 0 : -ENOMEM;
	if (stack)
		stack[0] = -1;
	uint64_t off = b->u->first_die, next, sibling;
	const struct dwarf_abbrev *a;
	while (!err && off < b->u->end && !(err = dwarf_die_skip(d, b->u, off, &a, &sibling, &next))) {
		if (!a) {
			depth -= depth > 0; /* a null entry closes a sibling list */
			off = next;
			continue;
		}
		int32_t scope = stack[depth];
		bool has_code = true;
		if (a->tag == DW_TAG_subprogram || a->tag == DW_TAG_inlined_subroutine) {
			err = dwarf_die_read(d, b->u, off, die, &next);
			if (!err)
				err = add_scope(b, die, stack[depth], &scope, &has_code);
			/* An abstract instance or a declaration: nothing below it has code. */
			const struct dwarf_value *sib = dwarf_die_attr(die, DW_AT_sibling);
			if (!err && !has_code && a->has_children && sib && sib->cls == DWC_REF &&
			    sib->u > off && sib->u <= b->u->end) {
				off = sib->u;
				continue;
			}
		} else if (a->has_children && holds_no_code(a->tag) && sibling > off &&
			   sibling <= b->u->end) {
			off = sibling;
			continue;
		}
		off = next;
		if (!err && a->has_children) {
			if (++depth == MAX_DEPTH)
				err = err_set(-EINVAL, "%s: .debug_info at 0x%llx: DIEs nested too deep",
					      d->path, (unsigned long long)off);
			else
				stack[depth] = scope;
		}
	}
	free(die);
	free(stack);
	return err;
}

/* Names are resolved only for scopes some address can reach: those with ranges and their
 * enclosing scopes (declarations and abstract instances far outnumber them). */
static void name_scopes(struct build *b, struct sym_unit_index *ix)
{
	for (size_t i = 0; i < ix->nspans; i++) {
		for (int32_t s = ix->spans[i].scope; s >= 0 && !ix->scopes[s].named;
		     s = ix->scopes[s].parent) {
			ix->scopes[s].name = sym_die_name(b->m, ix->scopes[s].die_offset);
			ix->scopes[s].named = true;
		}
	}
}

static void build(struct sym_module *m, uint32_t unit, struct sym_unit_index *ix)
{
	struct build b = { .m = m, .u = &m->dwarf->units[unit] };
	/* A walk that fails halfway keeps what it found, as LLVM keeps the DIEs it read. */
	ix->error = dwarf_unit_abbrevs(m->dwarf, b.u);
	if (!ix->error)
		ix->error = walk(&b);
	ix->scopes = b.scopes.v;
	ix->nscopes = b.scopes.n;
	ix->spans = b.spans.v;
	ix->nspans = b.spans.n;
	name_scopes(&b, ix);
	if (b.u->has_stmt_list)
		ix->has_lines = !dwarf_line_read(m->dwarf, b.u, b.u->stmt_list, &ix->lines);
}

int sym_unit_index(struct sym_module *m, uint32_t unit, struct sym_unit_index **out)
{
	struct sym_unit_index *ix = &m->units[unit];
	if (!atomic_load_explicit(&ix->ready, memory_order_acquire)) {
		pthread_mutex_lock(&m->lock);
		if (!atomic_load_explicit(&ix->ready, memory_order_relaxed)) {
			build(m, unit, ix);
			atomic_store_explicit(&ix->ready, true, memory_order_release);
		}
		pthread_mutex_unlock(&m->lock);
	}
	*out = ix;
	return 0;
}

void sym_unit_index_free(struct sym_unit_index *ix)
{
	free(ix->scopes);
	free(ix->spans);
	if (ix->has_lines)
		dwarf_line_free(&ix->lines);
}
