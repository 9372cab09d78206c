/*
 * Repair of sBPF DWARF linked by Solana platform-tools before v1.51. Those linkers applied
 * R_BPF_64_64 (meant for the two-slot lddw instruction: immediate's low word at +4, high
 * word at +12) to 8-byte address slots in debug sections. The slot's first word keeps the
 * object's addend, the second gets symbol + (what was at +4), and the four bytes at +12 are
 * overwritten with the high word (zero). A slot holding x thus means (x >> 32) + (x & ~0u),
 * as the seed write-up derives.
 *
 * DWARF 5 keeps addresses in .debug_addr, where every entry is shifted alike and nothing
 * else is damaged: each entry is shifted back. DWARF 4 keeps them in .debug_info: each
 * DW_FORM_addr slot is shifted back, and where the zeroed bytes held a DW_AT_frame_base of
 * DW_OP_reg10 (BPF's frame pointer, the only frame base BPF code has) it is restored. Other
 * zeroed bytes (a following DIE's abbreviation code) cannot be recovered: the walk stops
 * there as it would without repair. Only addresses below the lowest executable section's
 * end are candidates, so sBPF v3 programs (code at 2^32) are left alone.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

struct text_range {
	uint64_t lo, hi;
};

static struct text_range text_range(const struct elf_file *f)
{
	struct text_range r = { UINT64_MAX, 0 };
	for (size_t i = 0; i < f->nsections; i++) {
		const struct elf_section *s = &f->sections[i];
		if (!(s->flags & SHF_EXECINSTR) || !s->size)
			continue;
		if (s->addr < r.lo)
			r.lo = s->addr;
		if (s->addr + s->size > r.hi)
			r.hi = s->addr + s->size;
	}
	return r;
}

static uint64_t unmangle(uint64_t x)
{
	return (x >> 32) + (x & 0xffffffff);
}

static bool is_shifted(uint64_t x, struct text_range t)
{
	uint64_t a = unmangle(x);
	return (x >> 32) != 0 && a >= t.lo && a <= t.hi && t.hi < (UINT64_C(1) << 32);
}

static uint8_t *private_copy(struct dwarf *d, struct dwarf_sect *s)
{
	uint8_t *p = arena_alloc(&d->arena, s->size ? s->size : 1);
	if (p) {
		memcpy(p, s->data, s->size);
		s->data = p;
	}
	return p;
}

/* Calls fn on each 8-byte entry of each .debug_addr contribution (DWARF 5 section 7.27:
 * length, version, address size, segment selector size, then the entries). */
static void each_addr(struct dwarf *d, uint8_t *data, void (*fn)(uint8_t *slot, void *ctx),
		      void *ctx)
{
	struct cur c = cur_make(d->addr.data, d->addr.size, d->big_endian);
	while (cur_left(&c) >= 8) {
		uint64_t len = cur_u32(&c);
		if (len == 0xffffffff)
			len = cur_u64(&c);
		struct cur unit = cur_sub(&c, len);
		cur_u16(&unit);
		uint8_t asz = cur_u8(&unit), ssz = cur_u8(&unit);
		if (!cur_ok(&unit) || asz != 8 || ssz != 0)
			return;
		while (cur_left(&unit) >= 8) {
			fn(data + cur_off(&unit), ctx);
			cur_skip(&unit, 8);
		}
	}
}

struct addr_census {
	struct text_range t;
	bool big_endian;
	size_t nonzero, shifted;
};

static void census(uint8_t *slot, void *ctx)
{
	struct addr_census *a = ctx;
	uint64_t x = load_u64(slot, a->big_endian);
	a->nonzero += x != 0;
	a->shifted += is_shifted(x, a->t);
}

static void fix(uint8_t *slot, void *ctx)
{
	struct addr_census *a = ctx;
	uint64_t x = load_u64(slot, a->big_endian);
	if (x)
		store_u64(slot, unmangle(x), a->big_endian);
}

static int repair_addr(struct dwarf *d, struct text_range t)
{
	struct addr_census a = { .t = t, .big_endian = d->big_endian };
	each_addr(d, (uint8_t *)d->addr.data, census, &a);
	/* Only when the whole table shows the pattern: a good table has no such entry. */
	if (!a.nonzero || a.shifted != a.nonzero)
		return 0;
	uint8_t *p = private_copy(d, &d->addr);
	if (!p)
		return -ENOMEM;
	each_addr(d, p, fix, &a);
	return 1;
}

/* Repairs one DIE's attributes in place; returns the number of slots fixed. */
static int repair_die(struct dwarf *d, struct dwarf_unit *u, struct cur *c,
		      const struct dwarf_abbrev *a, uint8_t *info, struct text_range t)
{
	int fixed = 0;
	uint64_t zeroed_at = UINT64_MAX;
	for (uint16_t i = 0; i < a->nattrs; i++) {
		uint64_t at = cur_off(c);
		const struct dwarf_abbrev_attr *attr = &a->attrs[i];
		if (at == zeroed_at && attr->name == DW_AT_frame_base &&
		    attr->form == DW_FORM_exprloc && info[at] == 0 && info[at + 1] == 0) {
			info[at] = 1;
			info[at + 1] = DW_OP_reg10;
		}
		if (attr->form == DW_FORM_addr && u->addr_size == 8 && cur_left(c) >= 16) {
			uint64_t x = load_u64(info + at, d->big_endian);
			if (is_shifted(x, t)) {
				store_u64(info + at, unmangle(x), d->big_endian);
				zeroed_at = at + 12;
				fixed++;
			}
		}
		struct dwarf_value v;
		if (dwarf_form_read(d, u, c, attr->form, attr->implicit_const, &v))
			return -EINVAL;
	}
	return fixed;
}

static int repair_unit(struct dwarf *d, struct dwarf_unit *u, uint8_t *info, struct text_range t)
{
	if (u->version >= 5 || dwarf_unit_abbrevs(d, u))
		return 0;
	struct cur c = cur_make(info, u->end, d->big_endian);
	cur_seek(&c, u->first_die);
	int fixed = 0;
	while (!cur_eof(&c)) {
		uint64_t code = cur_uleb(&c);
		if (!cur_ok(&c))
			break;
		if (code == 0)
			continue;
		const struct dwarf_abbrev *a = dwarf_abbrev_find(u->abbrevs, code);
		if (!a)
			break;
		int r = repair_die(d, u, &c, a, info, t);
		if (r < 0)
			break;
		fixed += r;
	}
	return fixed;
}

int dwarf_repair_sbpf(struct dwarf *d)
{
	struct text_range t = text_range(d->elf);
	if (t.lo >= t.hi)
		return 0;
	int repaired = d->addr.size ? repair_addr(d, t) : 0;
	if (repaired < 0)
		return repaired;
	uint8_t *info = NULL;
	for (size_t i = 0; i < d->nunits; i++) {
		if (d->units[i].version >= 5)
			continue;
		if (!info && !(info = private_copy(d, &d->info)))
			return -ENOMEM;
		if (repair_unit(d, &d->units[i], info, t) > 0)
			repaired = 1;
	}
	return repaired;
}
