/*
 * Abbreviation tables (.debug_abbrev). A table is decoded once and shared by every unit
 * that names its offset. Codes are nearly always 1..n in order, so they index an array
 * directly; stray codes go to a small sorted side table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/search.h"
#include "base/cursor.h"
#include "base/err.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

static int bad(struct dwarf *d, uint64_t off, const char *what)
{
	return err_set(-EINVAL, "%s: .debug_abbrev at 0x%llx: %s", d->path,
		       (unsigned long long)off, what);
}

/* Attribute lists are short: up to this many are decoded in one pass into a local array. */
#define QUICK_ATTRS 64

static int read_one(struct dwarf *d, struct cur *c, struct dwarf_abbrev *a)
{
	a->tag = (uint16_t)cur_uleb(c);
	a->has_children = cur_u8(c) != 0;
	const uint8_t *start = c->p;
	struct dwarf_abbrev_attr quick[QUICK_ATTRS];
	size_t n = 0;
	for (;;) {
		/* Nearly every name and form is one byte: such pairs are read two bytes at a
		 * time, up to the terminating pair or the first that is not one. */
		const uint8_t *p = c->p;
		while (n < QUICK_ATTRS && c->end - p >= 2 && !((p[0] | p[1]) & 0x80) &&
		       p[1] != DW_FORM_implicit_const && (p[0] | p[1])) {
			quick[n++] = (struct dwarf_abbrev_attr){ .name = p[0], .form = p[1] };
			p += 2;
		}
		c->p = p;
		uint64_t name = cur_uleb(c), form = cur_uleb(c);
		int64_t value = form == DW_FORM_implicit_const ? cur_sleb(c) : 0;
		if (!cur_ok(c))
			return bad(d, cur_off(c), "attribute list runs past the section");
		if (!name && !form)
			break;
		if (n < QUICK_ATTRS)
			quick[n] = (struct dwarf_abbrev_attr){ .name = (uint16_t)name,
							       .form = (uint16_t)form,
							       .implicit_const = value };
		n++;
	}
	if (n > UINT16_MAX)
		return bad(d, cur_off(c), "too many attributes");
	a->nattrs = (uint16_t)n;
	a->attrs = arena_alloc(&d->arena, (n ? n : 1) * sizeof(*a->attrs));
	if (!a->attrs)
		return -ENOMEM;
	if (n <= QUICK_ATTRS) {
		memcpy(a->attrs, quick, n * sizeof(*quick));
		return 0;
	}
	struct cur r = *c; /* a long list: decoded again, into its exact-size array */
	r.p = start;
	for (size_t i = 0; i < n; i++) {
		a->attrs[i].name = (uint16_t)cur_uleb(&r);
		a->attrs[i].form = (uint16_t)cur_uleb(&r);
		if (a->attrs[i].form == DW_FORM_implicit_const)
			a->attrs[i].implicit_const = cur_sleb(&r);
	}
	return 0;
}

static int cmp_code(const void *a, const void *b)
{
	uint64_t x = ((const struct dwarf_abbrev *)a)->code, y = ((const struct dwarf_abbrev *)b)->code;
	return x < y ? -1 : x > y;
}

/* Steps over one entry after its code: tag, children flag, attribute list. Finding a
 * unit's root entry skips most of its table (GCC orders entries by use, so the compile
 * unit's comes last): for libc6-dbg that is the whole of a megabyte of tables. Pairs of
 * one-byte codes, nearly all of them, are stepped over two bytes at a time. */
static void skip_entry(struct cur *c)
{
	cur_uleb(c);
	cur_u8(c);
	while (cur_ok(c)) {
		const uint8_t *p = c->p;
		while (c->end - p >= 2 && !((p[0] | p[1]) & 0x80) && p[1] != DW_FORM_implicit_const) {
			if (!p[0] && !p[1]) {
				c->p = p + 2;
				return;
			}
			p += 2;
		}
		c->p = p;
		uint64_t name = cur_uleb(c), form = cur_uleb(c);
		if (form == DW_FORM_implicit_const)
			cur_sleb(c);
		if (!name && !form)
			return;
	}
}

/* Whether the table at off ends (a zero code) inside what is readable of the section. */
static bool table_complete(const struct dwarf *d, uint64_t off)
{
	if (off >= d->abbrev.size)
		return false;
	struct cur c = cur_make(d->abbrev.data, d->abbrev.size, d->big_endian);
	cur_seek(&c, off);
	while (cur_uleb(&c))
		skip_entry(&c);
	return cur_ok(&c);
}

/* A cursor at the table at off, inflated first in front mode until the table is whole (or
 * the section is). */
static int table_at(struct dwarf *d, uint64_t off, struct cur *c)
{
	for (uint64_t want = off + 4096; d->abbrev_lazy && !table_complete(d, off);
	     want = want < UINT64_MAX / 2 ? 2 * want : UINT64_MAX)
		dwarf_sect_need(d, &d->abbrev, want);
	if (off >= d->abbrev.size)
		return bad(d, off, "abbreviation table offset lies past the section");
	*c = cur_make(d->abbrev.data, d->abbrev.size, d->big_endian);
	cur_seek(c, off);
	return 0;
}

static int parse_table(struct dwarf *d, uint64_t off, struct dwarf_abbrevs *t, uint64_t *end)
{
	struct cur c;
	int err = table_at(d, off, &c);
	if (err)
		return err;
	struct dwarf_abbrev *all = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		uint64_t code = cur_uleb(&c);
		if (!cur_ok(&c)) {
			err = bad(d, off, "table has no terminating zero code");
			break;
		}
		if (code == 0)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct dwarf_abbrev *na = realloc(all, cap * sizeof(*na));
			if (!na) {
				err = -ENOMEM;
				break;
			}
			all = na;
		}
		memset(&all[n], 0, sizeof(all[n]));
		all[n].code = code;
		err = read_one(d, &c, &all[n]);
		if (err)
			break;
		n++;
	}
	if (!err)
		err = dwarf_abbrevs_index(d, t, all, n);
	free(all);
	*end = cur_off(&c);
	return err;
}

int dwarf_abbrevs_index(struct dwarf *d, struct dwarf_abbrevs *t, struct dwarf_abbrev *all,
			size_t n)
{
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = all[i - 1].code < all[i].code;
	if (!sorted)
		qsort(all, n, sizeof(*all), cmp_code);
	size_t dense = 0;
	while (dense < n && all[dense].code == dense + 1)
		dense++;
	t->by_code = arena_alloc(&d->arena, (dense ? dense : 1) * sizeof(*all));
	t->sparse = arena_alloc(&d->arena, (n - dense ? n - dense : 1) * sizeof(*all));
	if (!t->by_code || !t->sparse)
		return -ENOMEM;
	if (n) { /* all may be NULL when the table is empty */
		memcpy(t->by_code, all, dense * sizeof(*all));
		memcpy(t->sparse, all + dense, (n - dense) * sizeof(*all));
	}
	t->n_dense = dense;
	t->n_sparse = n - dense;
	return 0;
}

const struct dwarf_abbrev *dwarf_abbrev_find_sparse(const struct dwarf_abbrevs *t, uint64_t code)
{
	size_t lo = LOWER_BOUND(t->sparse, t->n_sparse, .code, code);
	return lo < t->n_sparse && t->sparse[lo].code == code ? &t->sparse[lo] : NULL;
}

/* Decodes the table at off for units of u's shape and adds it to d's tables, at index i
 * of the sorted array. */
static int add_table(struct dwarf *d, const struct dwarf_unit *u, uint64_t off, size_t i,
		     struct dwarf_abbrevs **out, uint64_t *end)
{
	struct dwarf_abbrevs *t = arena_alloc(&d->arena, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->offset = off;
	int err = parse_table(d, off, t, end);
	if (err)
		return err;
	t->shape = dwarf_unit_shape(u);
	for (size_t k = 0; k < t->n_dense; k++)
		dwarf_abbrev_sizes(u, &t->by_code[k]);
	for (size_t k = 0; k < t->n_sparse; k++)
		dwarf_abbrev_sizes(u, &t->sparse[k]);
	if (d->nabbrev_tables == d->cap_abbrev_tables) {
		size_t cap = d->cap_abbrev_tables ? d->cap_abbrev_tables * 2 : 64;
		struct dwarf_abbrevs **n = realloc(d->abbrev_tables, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->abbrev_tables = n;
		d->cap_abbrev_tables = cap;
	}
	memmove(&d->abbrev_tables[i + 1], &d->abbrev_tables[i],
		(d->nabbrev_tables - i) * sizeof(*d->abbrev_tables));
	d->abbrev_tables[i] = t;
	d->nabbrev_tables++;
	*out = t;
	return 0;
}

/* The loaded table at off, or NULL and where it would go in the sorted array. */
static struct dwarf_abbrevs *loaded(const struct dwarf *d, uint64_t off, size_t *at)
{
	size_t i = LOWER_BOUND(d->abbrev_tables, d->nabbrev_tables, ->offset, off);
	*at = i;
	return i < d->nabbrev_tables && d->abbrev_tables[i]->offset == off ? d->abbrev_tables[i]
									     : NULL;
}

static void point_at(struct dwarf_unit *u, struct dwarf_abbrevs *t)
{
	u->abbrevs_fit = t->shape == dwarf_unit_shape(u);
	u->abbrevs = t; /* after abbrevs_fit: a thread that sees the table sees that too */
}

int dwarf_unit_abbrevs(struct dwarf *d, struct dwarf_unit *u)
{
	if (u->abbrevs)
		return 0;
	pthread_mutex_lock(&d->abbrev_lock);
	int err = 0;
	if (!u->abbrevs) {
		size_t i;
		uint64_t end;
		struct dwarf_abbrevs *t = loaded(d, u->abbrev_offset, &i);
		if (!t)
			err = add_table(d, u, u->abbrev_offset, i, &t, &end);
		if (!err)
			point_at(u, t);
	}
	pthread_mutex_unlock(&d->abbrev_lock);
	return err;
}

bool dwarf_unit_abbrevs_loaded(struct dwarf *d, struct dwarf_unit *u)
{
	size_t i;
	struct dwarf_abbrevs *t = u->abbrevs ? u->abbrevs : loaded(d, u->abbrev_offset, &i);
	if (t && !u->abbrevs)
		point_at(u, t);
	return t != NULL;
}

/* Decodes the entry of that code in the table at off from what is readable: 0, -ENOENT
 * when the table ends without it, or -EAGAIN when the readable bytes end first. */
static int decode_entry(struct dwarf *d, uint64_t off, uint64_t code, struct dwarf_abbrev *a)
{
	if (off >= d->abbrev.size)
		return d->abbrev_lazy ? -EAGAIN
				      : bad(d, off, "abbreviation table offset lies past the section");
	struct cur c = cur_make(d->abbrev.data, d->abbrev.size, d->big_endian);
	cur_seek(&c, off);
	uint64_t k;
	while ((k = cur_uleb(&c)) && k != code && cur_ok(&c))
		skip_entry(&c);
	if (cur_ok(&c) && !k)
		return -ENOENT;
	*a = (struct dwarf_abbrev){ .code = code };
	int err = cur_ok(&c) ? read_one(d, &c, a) : -EINVAL;
	return err && d->abbrev_lazy ? -EAGAIN : err;
}

/* In front mode only as much of .debug_abbrev is inflated as reaches the entry, not the
 * whole table (a grown front reads every unit's root DIE again). */
int dwarf_abbrev_decode(struct dwarf *d, const struct dwarf_unit *u, uint64_t code,
			struct dwarf_abbrev *a)
{
	uint64_t off = u->abbrev_offset, want = off + 4096;
	int err;
	while ((err = decode_entry(d, off, code, a)) == -EAGAIN) {
		dwarf_sect_need(d, &d->abbrev, want);
		want = want < UINT64_MAX / 2 ? 2 * want : UINT64_MAX;
	}
	if (!err)
		dwarf_abbrev_sizes(u, a);
	return err;
}

void dwarf_abbrevs_preload(struct dwarf *d, const struct dwarf_unit *shape)
{
	uint64_t off = 0, end;
	struct dwarf_abbrevs *t;
	if (d->nabbrev_tables)
		return;
	while (off < d->abbrev.size && !add_table(d, shape, off, d->nabbrev_tables, &t, &end) &&
	       end > off)
		off = end;
	err_clear(); /* a table no unit names may be damaged: units load theirs as usual */
}
