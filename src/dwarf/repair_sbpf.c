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
 *
 * DWARF 2-4 line programs start each sequence with DW_LNE_set_address, whose operand
 * shows the same pattern: it is shifted back. The zeroed four bytes (operand + 12) held
 * opcodes, and what they did to the address, line and column is lost for every row after
 * them. So the rows the intact opcodes before them made are kept, the last of them for one
 * instruction only (the next row's address is among what was lost), and the program is
 * ended there: the unit is cut after a DW_LNE_end_sequence written in place of the lost
 * bytes. Later sequences of that unit are lost with it. Rows are never made up.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
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

/* A string offset that is no string's start: the linker left it unrelocated. */
static bool strp_is_stale(const struct dwarf *d, uint64_t off)
{
	return off >= d->str.size || (off && d->str.data[off - 1]);
}

/* What a DIE walk does besides repairing addresses. */
enum strp_pass { STRP_CHECK, STRP_CLEAR };
struct strp_walk {
	enum strp_pass pass;
	bool stale;       /* STRP_CHECK: some string offset is stale */
	uint64_t empty;   /* STRP_CLEAR: the offset of an empty string */
};

/* Repairs one DIE's attributes in place; returns the number of slots fixed. */
static int repair_die(struct dwarf *d, struct dwarf_unit *u, struct cur *c,
		      const struct dwarf_abbrev *a, uint8_t *info, struct text_range t,
		      struct strp_walk *w)
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
		if (attr->form == DW_FORM_strp && u->offset_size == 4 && cur_left(c) >= 4) {
			if (w->pass == STRP_CHECK)
				w->stale |= strp_is_stale(d, load_u32(info + at, d->big_endian));
			else
				store_u32(info + at, (uint32_t)w->empty, d->big_endian);
		}
		struct dwarf_value v;
		if (dwarf_form_read(d, u, c, attr->form, dwarf_attr_const(a, attr), &v))
			return -EINVAL;
	}
	return fixed;
}

static int walk_unit(struct dwarf *d, struct dwarf_unit *u, uint8_t *info, struct text_range t,
		     struct strp_walk *w)
{
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
		int r = repair_die(d, u, &c, a, info, t, w);
		if (r < 0)
			break;
		fixed += r;
	}
	return fixed;
}

/* The offset of an empty string in .debug_str (a NUL that ends another string), or
 * UINT64_MAX. */
static uint64_t empty_string(const struct dwarf *d)
{
	const uint8_t *nul = d->str.size ? memchr(d->str.data, 0, d->str.size) : NULL;
	return nul ? (uint64_t)(nul - d->str.data) : UINT64_MAX;
}

/*
 * A unit's addresses are repaired in the walk that also checks its string offsets. LLVM 8's
 * BPF backend resolved DW_FORM_strp at assembly time, without relocations, so a linker that
 * merged .debug_str left every offset pointing into a rearranged table. In a unit whose
 * addresses show the broken linker's pattern, one offset that is no string's start proves
 * it: all the unit's strings then read as empty (absent), never as another string's bytes.
 */
static int repair_unit(struct dwarf *d, struct dwarf_unit *u, uint8_t *info, struct text_range t,
		       unsigned *cleared)
{
	if (u->version >= 5 || dwarf_unit_abbrevs(d, u))
		return 0;
	struct strp_walk w = { STRP_CHECK, false, 0 };
	int fixed = walk_unit(d, u, info, t, &w);
	if (!fixed || !w.stale || (w.empty = empty_string(d)) == UINT64_MAX)
		return fixed;
	w.pass = STRP_CLEAR;
	walk_unit(d, u, info, t, &w);
	++*cleared;
	return fixed + 1;
}

/* Says what the repair could not recover (d->lost); 1, or -ENOMEM. */
static int note_loss(struct dwarf *d, unsigned cut, unsigned cleared)
{
	char buf[320];
	snprintf(buf, sizeof(buf),
		 "DWARF broken by an old Solana linker, repaired in part: line sequences cut where "
		 "the linker zeroed their opcodes: %u; units whose strings it left unrelocated "
		 "(their names dropped): %u", cut, cleared);
	d->lost = arena_strdup(&d->arena, buf);
	return d->lost ? 1 : -ENOMEM;
}

/* What a DWARF 2-4 line program header says about its opcodes. */
struct line_header {
	uint64_t unit, end, prog; /* offsets of the unit, its end and its first opcode */
	uint8_t min_inst, opcode_base;
	const uint8_t *std_lengths;
};

static bool read_line_header(struct cur *c, struct line_header *h)
{
	h->unit = cur_off(c);
	uint64_t len = cur_u32(c);
	if (!cur_ok(c) || len >= 0xfffffff0u || len > cur_left(c))
		return false;
	h->end = cur_off(c) + len;
	uint16_t version = cur_u16(c);
	uint64_t header_len = cur_u32(c);
	h->prog = cur_off(c) + header_len;
	h->min_inst = cur_u8(c);
	if (version >= 4)
		cur_u8(c); /* maximum_operations_per_instruction */
	cur_skip(c, 3);   /* default_is_stmt, line_base, line_range */
	h->opcode_base = cur_u8(c);
	h->std_lengths = c->p;
	return cur_ok(c) && version >= 2 && version <= 4 && h->min_inst && h->opcode_base &&
	       h->prog <= h->end && cur_off(c) + h->opcode_base - 1u <= h->prog;
}

/* Skips one opcode at c; *set_address is the offset of a DW_LNE_set_address operand of
 * 8 bytes (else 0), *row whether the opcode appends a row, *end whether it ends a sequence. */
static void skip_opcode(struct cur *c, const struct line_header *h, uint64_t *set_address,
			bool *row, bool *end)
{
	uint8_t op = cur_u8(c);
	*set_address = 0;
	*row = op >= h->opcode_base || op == DW_LNS_copy;
	*end = false;
	if (op == 0) {
		uint64_t len = cur_uleb(c);
		uint64_t at = cur_off(c);
		uint8_t sub = len ? cur_u8(c) : 0;
		if (sub == DW_LNE_set_address && len == 9)
			*set_address = at + 1;
		*row = *end = sub == DW_LNE_end_sequence;
		cur_seek(c, at + len);
	} else if (op == DW_LNS_fixed_advance_pc) {
		cur_u16(c);
	} else if (op < h->opcode_base) {
		for (uint8_t n = h->std_lengths[op - 1]; n; n--)
			cur_uleb(c);
	}
}

/* Ends the sequence at cut: one instruction past its last row, when it has one. */
static bool end_sequence_at(uint8_t *line, const struct line_header *h, uint64_t cut, bool row)
{
	uint8_t end[5];
	unsigned n = 0;
	if (row) {
		if (8 % h->min_inst)
			return false;
		end[n++] = DW_LNS_advance_pc;
		end[n++] = (uint8_t)(8 / h->min_inst);
	}
	end[n++] = 0;
	end[n++] = 1;
	end[n++] = DW_LNE_end_sequence;
	if (cut + n > h->end)
		return false;
	memcpy(line + cut, end, n);
	store_u32(line + h->unit, (uint32_t)(cut + n - h->unit - 4), false);
	return true;
}

/* Repairs one line program of line (a private copy); true when it changed it, *ended when
 * it ended a sequence where opcodes were lost. */
static bool repair_line_unit(uint8_t *line, const struct line_header *h, struct text_range t,
			     bool *ended)
{
	struct cur c = cur_make(line, h->end, false);
	cur_seek(&c, h->prog);
	uint64_t lost = 0; /* offset of the zeroed bytes of the sequence being read */
	uint64_t shifted = 0, operand_at = 0;
	bool row = false, fixed = false;
	while (cur_ok(&c) && !cur_eof(&c)) {
		uint64_t at = cur_off(&c), operand;
		bool makes_row, ends;
		skip_opcode(&c, h, &operand, &makes_row, &ends);
		if (lost && (!cur_ok(&c) || cur_off(&c) > lost)) {
			if (end_sequence_at(line, h, at, row))
				return *ended = true;
			/* no room to end it: the sequence stays as the linker left it */
			store_u64(line + operand_at, shifted, false);
			return fixed;
		}
		row = (row || makes_row) && !ends;
		if (ends && lost) {
			lost = 0;
			fixed = true;
		}
		if (!operand || !cur_ok(&c))
			continue;
		uint64_t x = load_u64(line + operand, false);
		if (!is_shifted(x, t) || operand + 16 > h->end || load_u32(line + operand + 12, false))
			continue;
		store_u64(line + operand, unmangle(x), false);
		shifted = x;
		operand_at = operand;
		lost = operand + 12;
		row = false;
	}
	return fixed;
}

static int repair_lines(struct dwarf *d, struct text_range t, unsigned *cut)
{
	if (d->big_endian || t.hi >= UINT64_C(1) << 32)
		return 0;
	uint8_t *line = NULL;
	struct cur c = cur_make(d->line.data, d->line.size, false);
	int repaired = 0;
	struct line_header h;
	while (cur_left(&c) >= 4 && read_line_header(&c, &h)) {
		cur_seek(&c, h.end);
		if (!line && !(line = private_copy(d, &d->line)))
			return -ENOMEM;
		h.std_lengths = line + (h.std_lengths - c.base);
		bool ended = false;
		if (repair_line_unit(line, &h, t, &ended))
			repaired = 1;
		*cut += ended;
	}
	return repaired;
}

int dwarf_repair_sbpf(struct dwarf *d)
{
	struct text_range t = text_range(d->elf);
	if (t.lo >= t.hi)
		return 0;
	int repaired = d->addr.size ? repair_addr(d, t) : 0;
	if (repaired < 0)
		return repaired;
	unsigned cut = 0, cleared = 0;
	int lines = d->line.size ? repair_lines(d, t, &cut) : 0;
	if (lines < 0)
		return lines;
	repaired |= lines;
	uint8_t *info = NULL;
	for (size_t i = 0; i < d->nunits; i++) {
		if (d->units[i].version >= 5)
			continue;
		if (!info && !(info = private_copy(d, &d->info)))
			return -ENOMEM;
		int r = repair_unit(d, &d->units[i], info, t, &cleared);
		if (r > 0)
			repaired = 1;
	}
	return repaired && (cut || cleared) ? note_loss(d, cut, cleared) : repaired;
}
