/*
 * The per-unit index: one walk over the unit's DIEs collects every subprogram and inlined
 * subroutine ("scope") with its enclosing scope and call site, and maps address ranges to
 * the innermost scope. The map is LLVM's (DWARFUnit's AddrDieMap): ranges are inserted
 * parents first, a child's range splits its parent's, and where ranges that are not nested
 * overlap, the later one wins from its start. Matching that keeps our answers equal to
 * llvm-symbolizer's even on oddly nested input. Built once, by the first thread to ask;
 * different units may be built on different threads at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/search.h"
#include "base/vec.h"
#include "dwarf/dwarf_consts.h"
#include "symbolize/symbolize_internal.h"

/* Nesting deeper than this is not real code; the walk treats it as corrupt. */
#define MAX_DEPTH 4096

/* LLVM's map from range starts to (end, scope), as a two-level sorted array: blocks of at
 * most SPAN_BLOCK spans, so that inserting in the middle (functions are not emitted in
 * address order: hot/cold splitting, sections) moves one block, not the whole unit. */
#define SPAN_BLOCK 128

struct span_block {
	size_t n;
	struct sym_span v[SPAN_BLOCK];
};

struct span_map {
	VEC(struct span_block *) blocks;
	size_t total;
};

struct pos {
	size_t b, i; /* block, index in it */
};

/* The position of the first span whose lo is greater than key. */
static struct pos upper_bound(const struct span_map *m, uint64_t key)
{
	/* The last block whose first span starts at or before key, then within it. */
	size_t b = UPPER_BOUND(m->blocks.v, m->blocks.n, ->v[0].lo, key);
	struct pos p = { b ? b - 1 : 0, 0 };
	if (m->blocks.n)
		p.i = UPPER_BOUND(m->blocks.v[p.b]->v, m->blocks.v[p.b]->n, .lo, key);
	return p;
}

/* The span before position p, or NULL. */
static struct sym_span *before(struct span_map *m, struct pos p)
{
	if (p.i > 0)
		return &m->blocks.v[p.b]->v[p.i - 1];
	if (p.b > 0)
		return &m->blocks.v[p.b - 1]->v[m->blocks.v[p.b - 1]->n - 1];
	return NULL;
}

static int split(struct span_map *m, size_t b)
{
	struct span_block *half = malloc(sizeof(*half));
	if (!half || !vec_push(&m->blocks)) {
		free(half);
		return -ENOMEM;
	}
	struct span_block *full = m->blocks.v[b];
	half->n = full->n / 2;
	memcpy(half->v, full->v + full->n - half->n, half->n * sizeof(*half->v));
	full->n -= half->n;
	memmove(&m->blocks.v[b + 2], &m->blocks.v[b + 1],
		(m->blocks.n - 2 - b) * sizeof(*m->blocks.v));
	m->blocks.v[b + 1] = half;
	return 0;
}

/* The span at position p, or NULL at the end. */
static const struct sym_span *at(const struct span_map *m, struct pos p)
{
	if (p.b < m->blocks.n && p.i < m->blocks.v[p.b]->n)
		return &m->blocks.v[p.b]->v[p.i];
	if (p.b + 1 < m->blocks.n)
		return &m->blocks.v[p.b + 1]->v[0];
	return NULL;
}

/* Inserts span at *p, the position upper_bound() gives for its lo, and leaves *p where
 * span went (a full block is split first). */
static int insert_at(struct span_map *m, struct pos *p, struct sym_span span)
{
	if (!m->blocks.n) {
		struct span_block **slot = vec_push(&m->blocks);
		if (!slot || !(*slot = calloc(1, sizeof(**slot))))
			return -ENOMEM;
	}
	if (m->blocks.v[p->b]->n == SPAN_BLOCK) {
		if (split(m, p->b))
			return -ENOMEM;
		size_t kept = m->blocks.v[p->b]->n;
		if (p->i > kept)
			*p = (struct pos){ p->b + 1, p->i - kept };
	}
	struct span_block *blk = m->blocks.v[p->b];
	memmove(&blk->v[p->i + 1], &blk->v[p->i], (blk->n - p->i) * sizeof(*blk->v));
	blk->v[p->i] = span;
	blk->n++;
	m->total++;
	return 0;
}

/* map[lo] = (hi, scope), inserting at *p (upper_bound(m, lo)) or overwriting the span
 * before it. */
static int assign_at(struct span_map *m, struct pos *p, uint64_t lo, uint64_t hi,
		     int32_t scope)
{
	struct sym_span *prev = before(m, *p);
	if (prev && prev->lo == lo) {
		prev->hi = hi;
		prev->scope = scope;
		return 0;
	}
	return insert_at(m, p, (struct sym_span){ lo, hi, scope });
}

/* The map as one sorted array in the module's bulk memory; frees the blocks. */
static struct sym_span *flatten(struct bulk *keep, struct span_map *m, size_t *n)
{
	struct sym_span *all = bulk_alloc(keep, (m->total ? m->total : 1) * sizeof(*all));
	size_t k = 0;
	for (size_t b = 0; b < m->blocks.n; b++) {
		if (all)
			memcpy(all + k, m->blocks.v[b]->v, m->blocks.v[b]->n * sizeof(*all));
		k += m->blocks.v[b]->n;
		free(m->blocks.v[b]);
	}
	vec_free(&m->blocks);
	*n = all ? k : 0;
	return all;
}

/* What the index reads of a subprogram or inlined subroutine of one abbreviation: which
 * attributes' values (bit i for attrs[i]), and whether it has a name of its own, which
 * the abbreviation tells without decoding it. */
struct scope_shape {
	uint64_t want;
	bool names_self;
	bool known; /* worked out */
};

struct build {
	struct sym_module *m;
	struct dwarf_unit *u;
	VEC(struct sym_scope) scopes;
	struct span_map spans;
	int32_t current; /* the scope whose ranges are being inserted */
	/* The shapes of the abbreviations with dense codes (code - 1), worked out on first
	 * use: per DIE, that took as long as the decoding it spares. */
	struct scope_shape *shapes;
	size_t nshapes;
};

/* One search per range: the pieces a range makes all go where its start goes, unless
 * a span starts inside the range (ranges that overlap without nesting). */
static int insert_range(uint64_t lo, uint64_t hi, void *ctx)
{
	struct build *b = ctx;
	struct span_map *m = &b->spans;
	struct sym_scope *scope = &b->scopes.v[b->current];
	if (scope->low == UINT64_MAX)
		scope->low = lo;
	struct pos p = upper_bound(m, lo);
	struct sym_span *prev = before(m, p);
	if (prev && lo < prev->hi) {
		struct sym_span old = *prev;
		if (lo > old.lo)
			prev->hi = lo; /* before an insertion, which may move prev */
		if (hi < old.hi) {
			const struct sym_span *next = at(m, p);
			bool here = !next || next->lo > hi;
			struct pos q = here ? p : upper_bound(m, hi);
			if (assign_at(m, &q, hi, old.hi, old.scope))
				return -ENOMEM;
			/* With nothing between, lo goes just before the tail. */
			p = here ? q : upper_bound(m, lo);
		}
	}
	return assign_at(m, &p, lo, hi, b->current) ? -ENOMEM : 0;
}

/* The attributes of a subprogram or inlined subroutine the index uses, in one pass. */
struct scope_attrs {
	const struct dwarf_value *low, *high, *ranges, *call_file, *call_line, *call_column;
	uint64_t sibling;
	uint64_t origin;  /* DW_AT_abstract_origin, or 0 */
	bool names_self;  /* has a name, a linkage name or a specification of its own */
};

static struct scope_shape shape_of(const struct dwarf_abbrev *a)
{
	struct scope_shape s = { .known = true };
	for (uint16_t i = 0; i < a->nattrs && i < DWARF_MAX_ATTRS; i++) {
		switch (a->attrs[i].name) {
		case DW_AT_low_pc:
		case DW_AT_high_pc:
		case DW_AT_ranges:
		case DW_AT_call_file:
		case DW_AT_call_line:
		case DW_AT_call_column:
		case DW_AT_sibling:
		case DW_AT_abstract_origin:
			s.want |= (uint64_t)1 << i;
			break;
		case DW_AT_name:
		case DW_AT_linkage_name:
		case DW_AT_MIPS_linkage_name:
		case DW_AT_specification:
			s.names_self = true;
			break;
		}
	}
	return s;
}

static struct scope_shape shape(struct build *b, const struct dwarf_abbrev *a)
{
	if (a->code < 1 || a->code > b->nshapes)
		return shape_of(a);
	struct scope_shape *s = &b->shapes[a->code - 1];
	if (!s->known)
		*s = shape_of(a);
	return *s;
}

/* The attribute values of die, read with s.want. */
static void pick(const struct dwarf_die *die, struct scope_shape s, struct scope_attrs *a)
{
	*a = (struct scope_attrs){ .names_self = s.names_self };
	for (uint64_t w = s.want; w; w &= w - 1) {
		unsigned i = (unsigned)__builtin_ctzll(w);
		const struct dwarf_value *v = &die->vals[i];
		switch (die->abbrev->attrs[i].name) {
		case DW_AT_low_pc: a->low = v; break;
		case DW_AT_high_pc: a->high = v; break;
		case DW_AT_ranges: a->ranges = v; break;
		case DW_AT_call_file: a->call_file = v; break;
		case DW_AT_call_line: a->call_line = v; break;
		case DW_AT_call_column: a->call_column = v; break;
		case DW_AT_sibling: a->sibling = v->cls == DWC_REF ? v->u : 0; break;
		case DW_AT_abstract_origin: a->origin = v->cls == DWC_REF ? v->u : 0; break;
		}
	}
}

static uint32_t constant(const struct dwarf_value *v)
{
	return v && v->cls == DWC_CONST ? (uint32_t)v->u : 0;
}

static int add_scope(struct build *b, const struct dwarf_die *die, const struct scope_attrs *a,
		     int32_t parent, int32_t *index, bool *has_code)
{
	struct sym_scope *s = vec_push(&b->scopes);
	if (!s)
		return -ENOMEM;
	/* An instance named only by its abstract origin has the origin's name: resolving
	 * the origin once serves all its inlined copies. */
	s->die_offset = a->origin && !a->names_self && a->origin != die->offset ? a->origin
										 : die->offset;
	s->parent = parent;
	s->low = UINT64_MAX;
	s->inlined = die->abbrev->tag == DW_TAG_inlined_subroutine;
	if (s->inlined) {
		s->call_file = constant(a->call_file);
		s->call_line = constant(a->call_line);
		s->call_column = constant(a->call_column);
	}
	*index = (int32_t)(b->scopes.n - 1);
	b->current = *index;
	size_t had = b->spans.total;
	int err = dwarf_ranges(b->m->dwarf, b->u, a->low, a->high, a->ranges, insert_range, b);
	*has_code = b->spans.total != had || a->ranges || a->low;
	return err == -ENOMEM ? err : 0; /* a bad range list loses that scope's ranges only */
}

/* Type DIEs hold members and declarations, never code, and call sites hold their
 * parameters (a fifth of the DIEs of an optimised libc): with a DW_AT_sibling to jump by,
 * their children are not read. */
static bool holds_no_code(uint16_t tag)
{
	switch (tag) {
	case DW_TAG_call_site:
	case DW_TAG_GNU_call_site:
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
	b->nshapes = b->u->abbrevs->n_dense;
	b->shapes = calloc(b->nshapes ? b->nshapes : 1, sizeof(*b->shapes));
	int depth = 0, err = die && stack && b->shapes ? 0 : -ENOMEM;
	if (stack)
		stack[0] = -1;
	uint64_t off = b->u->first_die, next, sibling;
	const struct dwarf_abbrev *a;
	while (!err && off < b->u->end && !(err = dwarf_die_step(d, b->u, off, &a, &sibling, &next))) {
		if (!a) {
			depth -= depth > 0; /* a null entry closes a sibling list */
			off = next;
			continue;
		}
		int32_t scope = stack[depth];
		bool has_code = true;
		if (a->tag == DW_TAG_subprogram || a->tag == DW_TAG_inlined_subroutine) {
			struct scope_attrs at;
			struct scope_shape sh = shape(b, a);
			err = dwarf_die_read_some(d, b->u, off, sh.want, die, &next);
			if (!err) {
				pick(die, sh, &at);
				err = add_scope(b, die, &at, stack[depth], &scope, &has_code);
			}
			/* An abstract instance or a declaration: nothing below it has code,
			 * and no span or scope will name it unless the walk goes below. */
			if (!err && !has_code) {
				bool skip = a->has_children && at.sibling > off &&
					    at.sibling <= b->u->end;
				if (skip || !a->has_children)
					b->scopes.n--;
				if (skip) {
					off = at.sibling;
					continue;
				}
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
	free(b->shapes);
	return err;
}

static bool is_cxx(uint16_t lang)
{
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

/* Names are resolved on first use: a lookup reaches a small part of a unit's scopes
 * (declarations and abstract instances aside, a batch of thousands of addresses still
 * leaves most inlined copies untouched), and resolving one follows abstract origins and
 * demangles. A thread that meets a scope another thread is naming names it too, rather
 * than wait; only the first stores the result. */
const char *sym_scope_name(struct sym_module *m, struct sym_unit_index *ix, int32_t s,
			   bool *cxx_plain)
{
	struct sym_scope *sc = &ix->scopes[s];
	if (atomic_load_explicit(&sc->naming, memory_order_acquire) == SCOPE_NAMED) {
		*cxx_plain = sc->cxx_plain_name;
		return sc->name;
	}
	const char *name = sym_die_name(m, sc->die_offset);
	*cxx_plain = ix->cxx && !sc->inlined && name &&
		     !sym_die_has_linkage_name(m, sc->die_offset);
	unsigned char unnamed = SCOPE_UNNAMED;
	if (atomic_compare_exchange_strong(&sc->naming, &unnamed, SCOPE_NAMING)) {
		sc->name = name;
		sc->cxx_plain_name = *cxx_plain;
		atomic_store_explicit(&sc->naming, SCOPE_NAMED, memory_order_release);
	}
	return name;
}

static void build(struct sym_module *m, uint32_t unit, struct sym_unit_index *ix)
{
	struct build b = { .m = m, .u = &m->dwarf->units[unit] };
	/* A walk that fails halfway keeps what it found, as LLVM keeps the DIEs it read. */
	ix->error = dwarf_unit_abbrevs(m->dwarf, b.u);
	if (!ix->error)
		ix->error = walk(&b);
	ix->scopes = bulk_copy(&m->bulk, b.scopes.v, b.scopes.n * sizeof(*b.scopes.v));
	ix->nscopes = ix->scopes ? b.scopes.n : 0;
	vec_free(&b.scopes);
	ix->spans = flatten(&m->bulk, &b.spans, &ix->nspans);
	ix->cxx = is_cxx(b.u->language);
	if (b.u->has_stmt_list)
		ix->has_lines = !dwarf_line_read(m->dwarf, b.u, b.u->stmt_list, &m->bulk,
						 &ix->lines);
}

static bool try_build(struct sym_module *m, uint32_t unit, struct sym_unit_index *ix)
{
	int state = UNIT_UNBUILT;
	if (!atomic_compare_exchange_strong(&ix->state, &state, UNIT_BUILDING))
		return false;
	build(m, unit, ix);
	pthread_mutex_lock(&m->lock);
	atomic_store_explicit(&ix->state, UNIT_READY, memory_order_release);
	pthread_cond_broadcast(&m->built);
	pthread_mutex_unlock(&m->lock);
	return true;
}

bool sym_unit_build_ahead(struct sym_module *m, uint32_t unit)
{
	return atomic_load_explicit(&m->units[unit].state, memory_order_acquire) == UNIT_UNBUILT &&
	       try_build(m, unit, &m->units[unit]);
}

static bool ready(struct sym_unit_index *ix)
{
	return atomic_load_explicit(&ix->state, memory_order_acquire) == UNIT_READY;
}

int sym_unit_index(struct sym_module *m, uint32_t unit, struct sym_unit_index **out)
{
	struct sym_unit_index *ix = &m->units[unit];
	*out = ix;
	if (ready(ix) || try_build(m, unit, ix))
		return 0;
	while (!ready(ix) && sym_build_planned(m))
		;
	pthread_mutex_lock(&m->lock);
	while (!ready(ix))
		pthread_cond_wait(&m->built, &m->lock);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

void sym_unit_index_free(struct sym_unit_index *ix)
{
	if (ix->has_lines)
		dwarf_line_free(&ix->lines);
}
