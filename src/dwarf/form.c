/*
 * Attribute forms (DWARF 5 section 7.5.6, plus the GNU extensions for split DWARF and dwz).
 * Values are decoded into their class; indexed strings and addresses (strx, addrx) are
 * resolved here through the unit's bases, so callers see plain strings and addresses.
 * Forms that point into a dwz alternate file cannot be resolved and mark the file as
 * unsupported instead of producing wrong names.
 */
#include <errno.h>
#include <string.h>

#include "base/cursor.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

/* A string at off in what is readable of a string section, or NULL when off is outside or
 * unterminated there. */
static const char *string_in(const struct dwarf_sect *s, uint64_t off)
{
	if (off >= s->size)
		return NULL;
	const char *p = (const char *)s->data + off;
	/* Sections normally end in NUL, which makes every in-range offset terminated. */
	if (s->data[s->size - 1] == 0 || memchr(p, 0, s->size - off))
		return p;
	return NULL;
}

/* The same in the whole section, inflating a lazy one (front mode) as far as the string's
 * end. */
static const char *section_string(struct dwarf *d, struct dwarf_sect *s, uint64_t off)
{
	uint64_t len = 256;
	const char *p = string_in(s, off);
	while (!p && dwarf_sect_grow(d, s, off, &len))
		p = string_in(s, off);
	return p;
}

int dwarf_addrx(struct dwarf *d, const struct dwarf_unit *u, uint64_t idx, uint64_t *addr)
{
	uint64_t off = u->addr_base + idx * u->addr_size;
	if (idx > d->addr.size || off > d->addr.size || d->addr.size - off < u->addr_size)
		return -EINVAL;
	struct cur c = cur_make(d->addr.data, d->addr.size, d->big_endian);
	cur_seek(&c, off);
	*addr = cur_uN(&c, u->addr_size);
	return cur_ok(&c) ? 0 : -EINVAL;
}

static int strx(struct dwarf *d, const struct dwarf_unit *u, uint64_t idx, struct dwarf_value *v)
{
	if (!u->has_str_offsets_base)
		return 0; /* left as DWC_OTHER: no table to index */
	uint64_t off = u->str_offsets_base + idx * u->offset_size;
	if (idx > d->str_offsets.size || off > d->str_offsets.size ||
	    d->str_offsets.size - off < u->offset_size)
		return 0;
	struct cur c = cur_make(d->str_offsets.data, d->str_offsets.size, d->big_endian);
	cur_seek(&c, off);
	v->str = section_string(d, &d->str, cur_uN(&c, u->offset_size));
	if (v->str)
		v->cls = DWC_STRING;
	return 0;
}

static void strp(struct dwarf *d, struct dwarf_sect *s, uint64_t off, struct dwarf_value *v)
{
	v->str = section_string(d, s, off);
	if (v->str)
		v->cls = DWC_STRING;
}

static void block(struct cur *c, uint64_t len, struct dwarf_value *v)
{
	v->block = cur_bytes(c, len);
	if (!v->block)
		len = 0;
	v->len = len;
	v->cls = DWC_BLOCK;
}

static void addrx(struct dwarf *d, const struct dwarf_unit *u, uint64_t idx,
		  struct dwarf_value *v)
{
	if (!dwarf_addrx(d, u, idx, &v->u))
		v->cls = DWC_ADDR;
}

static void constant(struct dwarf_value *v, uint64_t x)
{
	v->cls = DWC_CONST;
	v->u = x;
	v->s = (int64_t)x;
}

static void ref(struct dwarf_value *v, uint64_t off)
{
	v->cls = DWC_REF;
	v->u = off;
}

int dwarf_form_read(struct dwarf *d, const struct dwarf_unit *u, struct cur *c, uint16_t form,
		    int64_t implicit_const, struct dwarf_value *v)
{
	unsigned osz = u->offset_size;
	/* Only the members of the value's class are set: this runs for every attribute. */
	v->form = form;
	v->cls = DWC_OTHER;
	v->u = 0;
	switch (form) {
	case DW_FORM_addr: v->cls = DWC_ADDR; v->u = cur_uN(c, u->addr_size); break;
	case DW_FORM_block2: block(c, cur_u16(c), v); break;
	case DW_FORM_block4: block(c, cur_u32(c), v); break;
	case DW_FORM_data2: constant(v, cur_u16(c)); break;
	case DW_FORM_data4: constant(v, cur_u32(c)); break;
	case DW_FORM_data8: constant(v, cur_u64(c)); break;
	case DW_FORM_string:
		v->str = cur_str(c);
		v->cls = DWC_STRING;
		break;
	case DW_FORM_block: block(c, cur_uleb(c), v); break;
	case DW_FORM_block1: block(c, cur_u8(c), v); break;
	case DW_FORM_data1: constant(v, cur_u8(c)); break;
	case DW_FORM_flag: v->cls = DWC_FLAG; v->u = cur_u8(c); break;
	case DW_FORM_sdata:
		v->s = cur_sleb(c);
		v->u = (uint64_t)v->s;
		v->cls = DWC_CONST;
		break;
	case DW_FORM_strp: strp(d, &d->str, cur_uN(c, osz), v); break;
	case DW_FORM_udata: constant(v, cur_uleb(c)); break;
	case DW_FORM_ref_addr: ref(v, cur_uN(c, u->version <= 2 ? u->addr_size : osz)); break;
	case DW_FORM_ref1: ref(v, u->offset + cur_u8(c)); break;
	case DW_FORM_ref2: ref(v, u->offset + cur_u16(c)); break;
	case DW_FORM_ref4: ref(v, u->offset + cur_u32(c)); break;
	case DW_FORM_ref8: ref(v, u->offset + cur_u64(c)); break;
	case DW_FORM_ref_udata: ref(v, u->offset + cur_uleb(c)); break;
	case DW_FORM_indirect: {
		uint64_t f = cur_uleb(c);
		if (f == DW_FORM_indirect || f > UINT16_MAX || !cur_ok(c))
			return -EINVAL;
		return dwarf_form_read(d, u, c, (uint16_t)f, implicit_const, v);
	}
	case DW_FORM_sec_offset: v->cls = DWC_SECOFF; v->u = cur_uN(c, osz); break;
	case DW_FORM_exprloc: block(c, cur_uleb(c), v); break;
	case DW_FORM_flag_present: v->cls = DWC_FLAG; v->u = 1; break;
	case DW_FORM_strx:
	case DW_FORM_GNU_str_index: return strx(d, u, cur_uleb(c), v);
	case DW_FORM_strx1: return strx(d, u, cur_u8(c), v);
	case DW_FORM_strx2: return strx(d, u, cur_u16(c), v);
	case DW_FORM_strx3: return strx(d, u, cur_u24(c), v);
	case DW_FORM_strx4: return strx(d, u, cur_u32(c), v);
	case DW_FORM_addrx:
	case DW_FORM_GNU_addr_index: addrx(d, u, cur_uleb(c), v); break;
	case DW_FORM_addrx1: addrx(d, u, cur_u8(c), v); break;
	case DW_FORM_addrx2: addrx(d, u, cur_u16(c), v); break;
	case DW_FORM_addrx3: addrx(d, u, cur_u24(c), v); break;
	case DW_FORM_addrx4: addrx(d, u, cur_u32(c), v); break;
	case DW_FORM_ref_sup4: cur_u32(c); d->unsupported = "supplementary object files"; break;
	case DW_FORM_ref_sup8: cur_u64(c); d->unsupported = "supplementary object files"; break;
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		cur_uN(c, osz);
		d->unsupported = "dwz alternate debug files";
		break;
	case DW_FORM_data16: cur_skip(c, 16); break;
	case DW_FORM_line_strp: strp(d, &d->line_str, cur_uN(c, osz), v); break;
	case DW_FORM_ref_sig8: cur_u64(c); break; /* type units are not read */
	case DW_FORM_implicit_const:
		v->cls = DWC_CONST;
		v->s = implicit_const;
		v->u = (uint64_t)implicit_const;
		break;
	case DW_FORM_loclistx: cur_uleb(c); break;
	case DW_FORM_rnglistx: v->cls = DWC_RNGLISTX; v->u = cur_uleb(c); break;
	default:
		return -EINVAL;
	}
	return cur_ok(c) ? 0 : -EINVAL;
}

/* Sizes of the standard forms up to DW_FORM_addrx4 whose size does not depend on their
 * bytes: a byte count, or one of these for sizes that depend on the unit. 0: it varies
 * (or is zero: flag_present, implicit_const). Computing sizes was a tenth of reading a
 * large file's abbreviation tables while it was a switch. */
enum { SZ_ADDR = 0xfd, SZ_OFFSET = 0xfe, SZ_REF_ADDR = 0xff };
static const uint8_t form_sizes[DWARF_FORM_SIZES] = {
	[DW_FORM_addr] = SZ_ADDR,	[DW_FORM_data2] = 2,	       [DW_FORM_data4] = 4,
	[DW_FORM_data8] = 8,		[DW_FORM_data1] = 1,	       [DW_FORM_flag] = 1,
	[DW_FORM_strp] = SZ_OFFSET,	[DW_FORM_ref_addr] = SZ_REF_ADDR, [DW_FORM_ref1] = 1,
	[DW_FORM_ref2] = 2,		[DW_FORM_ref4] = 4,	       [DW_FORM_ref8] = 8,
	[DW_FORM_sec_offset] = SZ_OFFSET, [DW_FORM_ref_sup4] = 4,     [DW_FORM_strp_sup] = SZ_OFFSET,
	[DW_FORM_data16] = 16,		[DW_FORM_line_strp] = SZ_OFFSET, [DW_FORM_ref_sig8] = 8,
	[DW_FORM_ref_sup8] = 8,		[DW_FORM_strx1] = 1,	       [DW_FORM_strx2] = 2,
	[DW_FORM_strx3] = 3,		[DW_FORM_strx4] = 4,	       [DW_FORM_addrx1] = 1,
	[DW_FORM_addrx2] = 2,		[DW_FORM_addrx3] = 3,	       [DW_FORM_addrx4] = 4,
};

/* Size of a form whose size does not depend on its bytes, or 0 when it varies. */
static unsigned fixed_size(const struct dwarf_unit *u, uint16_t form)
{
	unsigned n = form < sizeof(form_sizes) ? form_sizes[form] : 0;
	if (form == DW_FORM_GNU_ref_alt || form == DW_FORM_GNU_strp_alt)
		n = SZ_OFFSET;
	switch (n) {
	case SZ_ADDR: return u->addr_size;
	case SZ_OFFSET: return u->offset_size;
	case SZ_REF_ADDR: return u->version <= 2 ? u->addr_size : u->offset_size;
	}
	return n;
}

uint32_t dwarf_unit_shape(const struct dwarf_unit *u)
{
	return (uint32_t)u->addr_size << 16 | (uint32_t)u->offset_size << 8 | (u->version <= 2);
}

/* Sibling references whose value the skipping fast path reads in place. */
static bool plain_ref(uint16_t form)
{
	return form == DW_FORM_ref1 || form == DW_FORM_ref2 || form == DW_FORM_ref4 ||
	       form == DW_FORM_ref8 || form == DW_FORM_ref_addr;
}

/* A form's size in units of u's shape: bytes, 0 for a value the abbreviation holds, or -1
 * when the value says. */
static int16_t form_size(const struct dwarf_unit *u, uint16_t form)
{
	unsigned n = fixed_size(u, form);
	return n || form == DW_FORM_flag_present || form == DW_FORM_implicit_const ? (int16_t)n
										   : -1;
}

void dwarf_form_sizes(const struct dwarf_unit *u, struct dwarf_form_sizes *fs)
{
	for (uint16_t form = 0; form < DWARF_FORM_SIZES; form++)
		fs->of[form] = form_size(u, form);
}

void dwarf_abbrev_sizes(const struct dwarf_unit *u, const struct dwarf_form_sizes *fs,
			struct dwarf_abbrev *a)
{
	a->fixed = true;
	a->fixed_size = 0;
	a->sibling_at = DWARF_NO_SIBLING;
	for (uint16_t i = 0; i < a->nattrs; i++) {
		struct dwarf_abbrev_attr *at = &a->attrs[i];
		at->size = fs && at->form < DWARF_FORM_SIZES ? fs->of[at->form] : form_size(u, at->form);
		if (at->name == DW_AT_sibling && a->sibling_at == DWARF_NO_SIBLING) {
			bool fast = a->fixed && at->size > 0 && plain_ref(at->form);
			a->sibling_at = fast ? (int32_t)a->fixed_size : DWARF_SLOW_SIBLING;
			a->sibling_form = at->form;
		} else if (at->name == DW_AT_sibling) {
			a->sibling_at = DWARF_SLOW_SIBLING; /* two of them: the last one counts */
		}
		if (at->size < 0)
			a->fixed = false;
		else
			a->fixed_size += (uint32_t)at->size;
	}
	for (uint16_t i = a->nattrs; i-- > 0;) {
		struct dwarf_abbrev_attr *at = &a->attrs[i];
		const struct dwarf_abbrev_attr *after = i + 1 < a->nattrs ? at + 1 : NULL;
		bool in_run = at->size >= 0 && at->name != DW_AT_sibling;
		/* a run too long for run_size ends here: the next one starts after it */
		bool joins = after && after->run && at->size + after->run_size <= UINT16_MAX;
		at->run = in_run ? (uint16_t)(1 + (joins ? after->run : 0)) : 0;
		at->run_size = in_run ? (uint16_t)(at->size + (joins ? after->run_size : 0)) : 0;
	}
}

int dwarf_form_skip(struct dwarf *d, const struct dwarf_unit *u, struct cur *c, uint16_t form)
{
	unsigned n = fixed_size(u, form);
	if (n) {
		cur_skip(c, n);
		return cur_ok(c) ? 0 : -EINVAL;
	}
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		cur_uleb(c);
		break;
	case DW_FORM_sdata: cur_sleb(c); break;
	case DW_FORM_string: cur_str(c); break;
	case DW_FORM_block: case DW_FORM_exprloc: cur_skip(c, cur_uleb(c)); break;
	case DW_FORM_block1: cur_skip(c, cur_u8(c)); break;
	case DW_FORM_block2: cur_skip(c, cur_u16(c)); break;
	case DW_FORM_block4: cur_skip(c, cur_u32(c)); break;
	default: {
		struct dwarf_value v; /* indirect and anything rare: decode it */
		return dwarf_form_read(d, u, c, form, 0, &v);
	}
	}
	return cur_ok(c) ? 0 : -EINVAL;
}
