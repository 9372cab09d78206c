/*
 * Address ranges of a DIE: DW_AT_low_pc with DW_AT_high_pc (an address, or since DWARF 4
 * an offset from low_pc), or DW_AT_ranges into .debug_ranges (DWARF 2-4, pairs relative to
 * the unit's base address) or .debug_rnglists (DWARF 5 entries, reached by offset or
 * through the unit's offset table with DW_FORM_rnglistx). Empty ranges are dropped.
 */
#include <errno.h>

#include "base/cursor.h"
#include "base/err.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

enum {
	RLE_end_of_list, RLE_base_addressx, RLE_startx_endx, RLE_startx_length,
	RLE_offset_pair, RLE_base_address, RLE_start_end, RLE_start_length,
};

/* A hostile list could be long; real ones have at most a few thousand entries. */
#define MAX_RANGES 1000000

typedef int (*range_fn)(uint64_t lo, uint64_t hi, void *ctx);

static int bad(struct dwarf *d, const char *sect, uint64_t off, const char *what)
{
	return err_set(-EINVAL, "%s: %s at 0x%llx: %s", d->path, sect, (unsigned long long)off,
		       what);
}

static int emit(uint64_t lo, uint64_t hi, range_fn fn, void *ctx)
{
	return lo < hi ? fn(lo, hi, ctx) : 0;
}

static int ranges_v4(struct dwarf *d, struct dwarf_unit *u, uint64_t off, range_fn fn,
		     void *ctx)
{
	if (off >= d->ranges.size)
		return bad(d, ".debug_ranges", off, "offset lies past the section");
	struct cur c = cur_make(d->ranges.data, d->ranges.size, d->big_endian);
	cur_seek(&c, off);
	uint64_t base = u->base_addr;
	uint64_t max = u->addr_size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * u->addr_size)) - 1;
	for (int n = 0; n < MAX_RANGES; n++) {
		uint64_t a = cur_uN(&c, u->addr_size), b = cur_uN(&c, u->addr_size);
		if (!cur_ok(&c))
			return bad(d, ".debug_ranges", off, "list has no end");
		if (a == 0 && b == 0)
			return 0;
		if (a == max) {
			base = b;
			continue;
		}
		int r = emit(base + a, base + b, fn, ctx);
		if (r)
			return r;
	}
	return bad(d, ".debug_ranges", off, "list too long");
}

static int rle_addrx(struct dwarf *d, struct dwarf_unit *u, struct cur *c, uint64_t *a)
{
	return dwarf_addrx(d, u, cur_uleb(c), a);
}

static int rnglist_entry(struct dwarf *d, struct dwarf_unit *u, struct cur *c, uint8_t kind,
			 uint64_t *base, range_fn fn, void *ctx)
{
	uint64_t a = 0, b = 0;
	switch (kind) {
	case RLE_base_addressx:
		return rle_addrx(d, u, c, base);
	case RLE_startx_endx:
		if (rle_addrx(d, u, c, &a) || rle_addrx(d, u, c, &b))
			return -EINVAL;
		return emit(a, b, fn, ctx);
	case RLE_startx_length:
		if (rle_addrx(d, u, c, &a))
			return -EINVAL;
		return emit(a, a + cur_uleb(c), fn, ctx);
	case RLE_offset_pair:
		a = cur_uleb(c);
		b = cur_uleb(c);
		return emit(*base + a, *base + b, fn, ctx);
	case RLE_base_address:
		*base = cur_uN(c, u->addr_size);
		return 0;
	case RLE_start_end:
		a = cur_uN(c, u->addr_size);
		b = cur_uN(c, u->addr_size);
		return emit(a, b, fn, ctx);
	case RLE_start_length:
		a = cur_uN(c, u->addr_size);
		return emit(a, a + cur_uleb(c), fn, ctx);
	}
	return -EINVAL;
}

static int read_rnglist(struct dwarf *d, struct dwarf_unit *u, uint64_t off, range_fn fn,
			void *ctx)
{
	if (off >= d->rnglists.size)
		return bad(d, ".debug_rnglists", off, "offset lies past the section");
	struct cur c = cur_make(d->rnglists.data, d->rnglists.size, d->big_endian);
	cur_seek(&c, off);
	uint64_t base = u->base_addr;
	for (int n = 0; n < MAX_RANGES; n++) {
		uint8_t kind = cur_u8(&c);
		if (!cur_ok(&c))
			return bad(d, ".debug_rnglists", off, "list has no end");
		if (kind == RLE_end_of_list)
			return 0;
		int r = rnglist_entry(d, u, &c, kind, &base, fn, ctx);
		if (r > 0)
			return r;
		if (r < 0 || !cur_ok(&c))
			return bad(d, ".debug_rnglists", off, "bad range list entry");
	}
	return bad(d, ".debug_rnglists", off, "list too long");
}

static int ignore(uint64_t lo, uint64_t hi, void *ctx)
{
	(void)lo, (void)hi, (void)ctx;
	return 0;
}

/* In front mode .debug_rnglists is inflated as far as lists are read: first as far as the
 * list at off reaches (read without a word to fn, which must hear each range once). */
static void need_list(struct dwarf *d, struct dwarf_unit *u, uint64_t off)
{
	uint64_t len = 4096;
	while (d->rnglists_lazy && read_rnglist(d, u, off, ignore, NULL)) {
		err_clear();
		dwarf_sect_grow(d, &d->rnglists, off, &len);
	}
}

static int rnglists(struct dwarf *d, struct dwarf_unit *u, uint64_t off, range_fn fn, void *ctx)
{
	need_list(d, u, off);
	return read_rnglist(d, u, off, fn, ctx);
}

/* DW_FORM_rnglistx: entry idx of the offset table at the unit's rnglists_base; the
 * offsets are relative to that base. Without DW_AT_rnglists_base the table follows the
 * first .debug_rnglists header (12 or 20 bytes), as in units that share one list table. */
static int rnglistx(struct dwarf *d, struct dwarf_unit *u, uint64_t idx, uint64_t *off)
{
	uint64_t base = u->has_rnglists_base ? u->rnglists_base : (u->offset_size == 8 ? 20 : 12);
	uint64_t at = base + idx * u->offset_size;
	if (d->rnglists_lazy && idx <= UINT32_MAX)
		dwarf_sect_need(d, &d->rnglists, at + u->offset_size);
	if (idx > d->rnglists.size || at > d->rnglists.size ||
	    d->rnglists.size - at < u->offset_size)
		return bad(d, ".debug_rnglists", at, "range list index outside the offset table");
	struct cur c = cur_make(d->rnglists.data, d->rnglists.size, d->big_endian);
	cur_seek(&c, at);
	*off = base + cur_uN(&c, u->offset_size);
	return 0;
}

int dwarf_die_ranges(struct dwarf *d, struct dwarf_unit *u, const struct dwarf_die *die,
		     range_fn fn, void *ctx)
{
	return dwarf_ranges(d, u, dwarf_die_attr(die, DW_AT_low_pc), dwarf_die_attr(die, DW_AT_high_pc),
			    dwarf_die_attr(die, DW_AT_ranges), fn, ctx);
}

int dwarf_ranges(struct dwarf *d, struct dwarf_unit *u, const struct dwarf_value *lo,
		 const struct dwarf_value *hi, const struct dwarf_value *r, range_fn fn, void *ctx)
{
	if (r) {
		uint64_t off = r->u;
		if (r->cls == DWC_RNGLISTX) {
			int err = rnglistx(d, u, r->u, &off);
			if (err)
				return err;
			return rnglists(d, u, off, fn, ctx);
		}
		if (r->cls != DWC_SECOFF && r->cls != DWC_CONST)
			return 0;
		return u->version >= 5 ? rnglists(d, u, off, fn, ctx) : ranges_v4(d, u, off, fn, ctx);
	}
	if (!lo || !hi || lo->cls != DWC_ADDR)
		return 0;
	if (hi->cls == DWC_ADDR)
		return emit(lo->u, hi->u, fn, ctx);
	if (hi->cls == DWC_CONST)
		return emit(lo->u, lo->u + hi->u, fn, ctx);
	return 0;
}
