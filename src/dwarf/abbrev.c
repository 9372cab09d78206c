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
#include "base/vec.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

static int bad(struct dwarf *d, uint64_t off, const char *what)
{
	return err_set(-EINVAL, "%s: .debug_abbrev at 0x%llx: %s", d->path,
		       (unsigned long long)off, what);
}

/* The attributes of a table's entries, and their DW_FORM_implicit_const values, one after
 * the other while it is decoded; each entry's are found again by their counts (see
 * decode_table). */
typedef VEC(struct dwarf_abbrev_attr) attr_vec;
typedef VEC(int64_t) const_vec;

/* An entry after its code: tag, children flag, and its attributes, appended to b, their
 * implicit constants to kv (a->attrs and a->consts are left for the caller to point at
 * them). */
static int read_one(struct dwarf *d, struct cur *c, struct dwarf_abbrev *a, attr_vec *b,
		    const_vec *kv)
{
	a->tag = (uint16_t)cur_uleb(c);
	a->has_children = cur_u8(c) != 0;
	size_t first = b->n, first_const = kv->n;
	for (;;) {
		if (!vec_reserve(b, 64))
			return -ENOMEM;
		/* Nearly every name and form is one byte: such pairs are read two bytes at a
		 * time, up to the terminating pair or the first that is not one. */
		const uint8_t *p = c->p;
		for (size_t k = 0; k < 63 && c->end - p >= 2 && !((p[0] | p[1]) & 0x80) &&
				   p[1] != DW_FORM_implicit_const && (p[0] | p[1]);
		     k++, p += 2)
			b->v[b->n++] = (struct dwarf_abbrev_attr){ .name = p[0], .form = p[1] };
		c->p = p;
		uint64_t name = cur_uleb(c), form = cur_uleb(c);
		size_t index = kv->n - first_const;
		if (form == DW_FORM_implicit_const) {
			int64_t *slot = vec_push(kv);
			if (!slot)
				return -ENOMEM;
			*slot = cur_sleb(c);
		}
		if (!cur_ok(c))
			return bad(d, cur_off(c), "attribute list runs past the section");
		if (!name && !form)
			break;
		b->v[b->n++] = (struct dwarf_abbrev_attr){ .name = (uint16_t)name,
							   .form = (uint16_t)form,
							   .const_index = (uint16_t)index };
	}
	if (b->n - first > UINT16_MAX)
		return bad(d, cur_off(c), "too many attributes");
	a->consts = NULL;
	a->nconsts = (uint16_t)(kv->n - first_const); /* no more than the attributes */
	a->nattrs = (uint16_t)(b->n - first);
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
	uint64_t len = 4096;
	while (d->abbrev_lazy && !table_complete(d, off))
		dwarf_sect_grow(d, &d->abbrev, off, &len);
	if (off >= d->abbrev.size)
		return bad(d, off, "abbreviation table offset lies past the section");
	*c = cur_make(d->abbrev.data, d->abbrev.size, d->big_endian);
	cur_seek(c, off);
	return 0;
}

/* A table decoded but not yet kept: its entries sorted by code, their attributes in
 * attrs (each entry's attrs point into it), sizes worked out for the shape. */
struct decoded {
	VEC(struct dwarf_abbrev) all;
	attr_vec attrs;
	const_vec consts;
	uint64_t end; /* where the table ends */
};

static void decoded_free(struct decoded *t)
{
	vec_free(&t->all);
	vec_free(&t->attrs);
	vec_free(&t->consts);
}

/* Decodes the table at off for units of u's shape. Touches nothing shared (but for
 * front mode's lazy inflating, where one thread reads): threads decode in parallel and
 * only keep_table takes the lock. */
static int decode_table(struct dwarf *d, const struct dwarf_unit *u, uint64_t off,
			struct decoded *t)
{
	*t = (struct decoded){ 0 };
	struct cur c;
	int err = table_at(d, off, &c);
	if (err)
		return err;
	/* Room for a typical table at once (libc6-dbg's hold 32 entries and 150 attributes
	 * on average): growing from nothing took three reallocations a table. */
	if (!vec_reserve(&t->all, 64) || !vec_reserve(&t->attrs, 512))
		return -ENOMEM;
	for (;;) {
		uint64_t code = cur_uleb(&c);
		if (!cur_ok(&c)) {
			err = bad(d, off, "table has no terminating zero code");
			break;
		}
		if (code == 0)
			break;
		struct dwarf_abbrev *a = vec_push(&t->all);
		if (!a) {
			err = -ENOMEM;
			break;
		}
		a->code = code;
		err = read_one(d, &c, a, &t->attrs, &t->consts);
		if (err)
			break;
	}
	t->end = cur_off(&c);
	if (err)
		return err;
	struct dwarf_abbrev *all = t->all.v;
	size_t n = t->all.n;
	struct dwarf_form_sizes sizes;
	dwarf_form_sizes(u, &sizes);
	for (size_t i = 0, at = 0, k = 0; i < n; at += all[i].nattrs, k += all[i].nconsts, i++) {
		all[i].attrs = t->attrs.v + at;
		all[i].consts = all[i].nconsts ? t->consts.v + k : NULL;
		dwarf_abbrev_sizes(u, &sizes, &all[i]);
	}
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = all[i - 1].code < all[i].code;
	if (!sorted)
		qsort(all, n, sizeof(*all), cmp_code);
	return 0;
}

/* Moves a decoded table into d's arena and its sorted array, at index i: with abbrev_lock
 * held once units are read. */
static int keep_table(struct dwarf *d, const struct dwarf_unit *u, uint64_t off,
		      struct decoded *dec, size_t i, struct dwarf_abbrevs **out)
{
	struct dwarf_abbrevs *t = arena_alloc(&d->arena, sizeof(*t));
	struct dwarf_abbrev_attr *block =
		arena_copy(&d->arena, dec->attrs.v, dec->attrs.n * sizeof(*block));
	int64_t *consts = arena_copy(&d->arena, dec->consts.v, dec->consts.n * sizeof(*consts));
	if (!t || !block || !consts)
		return -ENOMEM;
	struct dwarf_abbrev *all = dec->all.v;
	size_t dense = 0, n = dec->all.n;
	for (size_t k = 0; k < n; k++) { /* the attributes moved: so do the pointers */
		all[k].attrs = block + (all[k].attrs - dec->attrs.v);
		if (all[k].consts)
			all[k].consts = consts + (all[k].consts - dec->consts.v);
	}
	while (dense < n && all[dense].code == dense + 1)
		dense++;
	t->by_code = arena_copy(&d->arena, all, dense * sizeof(*all));
	/* all is NULL for an empty table: no pointer arithmetic on it */
	t->sparse = arena_copy(&d->arena, n ? all + dense : NULL, (n - dense) * sizeof(*all));
	if (!t->by_code || !t->sparse)
		return -ENOMEM;
	t->n_dense = dense;
	t->n_sparse = n - dense;
	t->offset = off;
	t->shape = dwarf_unit_shape(u);
	if (!vec_reserve(&d->abbrev_tables, 1))
		return -ENOMEM;
	struct dwarf_abbrevs **v = d->abbrev_tables.v;
	memmove(&v[i + 1], &v[i], (d->abbrev_tables.n - i) * sizeof(*v));
	v[i] = t;
	d->abbrev_tables.n++;
	*out = t;
	return 0;
}

const struct dwarf_abbrev *dwarf_abbrev_find_sparse(const struct dwarf_abbrevs *t, uint64_t code)
{
	size_t lo = LOWER_BOUND(t->sparse, t->n_sparse, .code, code);
	return lo < t->n_sparse && t->sparse[lo].code == code ? &t->sparse[lo] : NULL;
}

/* The loaded table at off, or NULL and where it would go in the sorted array. */
static struct dwarf_abbrevs *loaded(const struct dwarf *d, uint64_t off, size_t *at)
{
	size_t i = LOWER_BOUND(d->abbrev_tables.v, d->abbrev_tables.n, ->offset, off);
	*at = i;
	return i < d->abbrev_tables.n && d->abbrev_tables.v[i]->offset == off ? d->abbrev_tables.v[i]
									     : NULL;
}

static void point_at(struct dwarf_unit *u, struct dwarf_abbrevs *t)
{
	u->abbrevs_fit = t->shape == dwarf_unit_shape(u);
	u->abbrevs = t; /* after abbrevs_fit: a thread that sees the table sees that too */
}

/* Decodes u's table unless it is loaded, and keeps it: the decoding outside the lock, which
 * threads indexing units in parallel would otherwise queue on. A table another thread kept
 * meanwhile is taken instead, and the copy dropped. */
int dwarf_unit_abbrevs(struct dwarf *d, struct dwarf_unit *u)
{
	if (u->abbrevs)
		return 0;
	size_t i;
	pthread_mutex_lock(&d->abbrev_lock);
	struct dwarf_abbrevs *t = loaded(d, u->abbrev_offset, &i);
	pthread_mutex_unlock(&d->abbrev_lock);
	struct decoded dec = { 0 };
	int err = t ? 0 : decode_table(d, u, u->abbrev_offset, &dec);
	pthread_mutex_lock(&d->abbrev_lock);
	if (!err && !t && !(t = loaded(d, u->abbrev_offset, &i)))
		err = keep_table(d, u, u->abbrev_offset, &dec, i, &t);
	if (!err)
		point_at(u, t);
	pthread_mutex_unlock(&d->abbrev_lock);
	decoded_free(&dec);
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
	attr_vec attrs = { 0 };
	const_vec consts = { 0 };
	int err = cur_ok(&c) ? read_one(d, &c, a, &attrs, &consts) : -EINVAL;
	if (!err && !(a->attrs = arena_copy(&d->arena, attrs.v, attrs.n * sizeof(*attrs.v))))
		err = -ENOMEM;
	if (!err && a->nconsts &&
	    !(a->consts = arena_copy(&d->arena, consts.v, consts.n * sizeof(*consts.v))))
		err = -ENOMEM;
	vec_free(&attrs);
	vec_free(&consts);
	return err && err != -ENOMEM && d->abbrev_lazy ? -EAGAIN : err;
}

/* In front mode only as much of .debug_abbrev is inflated as reaches the entry, not the
 * whole table: a unit's root DIE is read with its one entry. */
int dwarf_abbrev_decode(struct dwarf *d, const struct dwarf_unit *u, uint64_t code,
			struct dwarf_abbrev *a)
{
	uint64_t off = u->abbrev_offset, len = 4096;
	int err;
	while ((err = decode_entry(d, off, code, a)) == -EAGAIN)
		dwarf_sect_grow(d, &d->abbrev, off, &len);
	if (!err)
		dwarf_abbrev_sizes(u, NULL, a);
	return err;
}

void dwarf_abbrevs_preload(struct dwarf *d, const struct dwarf_unit *shape)
{
	uint64_t off = 0;
	struct dwarf_abbrevs *t;
	if (d->abbrev_tables.n)
		return;
	while (off < d->abbrev.size) {
		struct decoded dec;
		int err = decode_table(d, shape, off, &dec);
		if (!err)
			err = keep_table(d, shape, off, &dec, d->abbrev_tables.n, &t);
		decoded_free(&dec);
		if (err || dec.end <= off)
			break;
		off = dec.end;
	}
	err_clear(); /* a table no unit names may be damaged: units load theirs as usual */
}
