/*
 * Call-frame information: see cfi.h. Every byte is read through a cursor over the whole
 * section, so cur_off() is a section offset and pc-relative pointers are vaddr + offset.
 * .eh_frame_hdr lookups need no index; without a usable header (or for .debug_frame) all
 * FDEs are indexed once, sorted by start address. Rows are computed per lookup: callers
 * that unwind hot code keep their own cache (unwind/rule_cache.c).
 */
#include "base/search.h"
#include "dwarf/cfi.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/vec.h"
#include "dwarf/dwarf_consts.h"
#include "elf/elf.h"

enum { SEC_EH, SEC_DEBUG };

/* DW_EH_PE_* pointer encodings (LSB, "Linux Standard Base Core Specification", 10.5). */
enum {
	PE_OMIT = 0xff,
	PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04,
	PE_SLEB = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_ALIGNED = 0x50, PE_INDIRECT = 0x80,
};

struct cfi_index_entry {
	uint64_t start, end;
	size_t off;
	uint8_t sec;
};

struct dwarf_cfi {
	struct dwarf_cfi_src src;
	/* .eh_frame_hdr's table when it is the usual sorted datarel|sdata4 one */
	const uint8_t *hdr_table;
	size_t hdr_count;
	bool indexed;
	VEC(struct cfi_index_entry) index; /* every FDE's range, by start */
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint16_t ra_reg;
	uint8_t fde_enc;
	uint8_t lsda_enc;
	uint8_t addr_size;
	bool has_z;
	bool signal;
	struct cur insns;
};

static const char *sec_name(int sec) { return sec == SEC_EH ? ".eh_frame" : ".debug_frame"; }

static const struct dwarf_cfi_section *section(const struct dwarf_cfi *c, int sec)
{
	return sec == SEC_EH ? &c->src.eh_frame : &c->src.debug_frame;
}

static int bad(const struct dwarf_cfi *c, int sec, size_t off, const char *what)
{
	return err_set(-EINVAL, "%s: %s at 0x%zx: %s", c->src.name, sec_name(sec), off, what);
}

/* Reads a pointer in encoding enc; base_vaddr is the vaddr of the cursor's buffer start
 * (pc-relative values) and datarel the base for DW_EH_PE_datarel. Indirect pointers are
 * returned as the address of the slot: only personality routines use them. */
static int read_encoded(struct cur *c, uint8_t enc, uint8_t addr_size, uint64_t base_vaddr,
			uint64_t datarel, uint64_t *out)
{
	*out = 0;
	if (enc == PE_OMIT)
		return 0;
	uint64_t pos = base_vaddr + cur_off(c), v;
	if ((enc & 0x70) == PE_ALIGNED) {
		size_t mis = cur_off(c) % addr_size;
		if (mis)
			cur_skip(c, addr_size - mis);
		pos = base_vaddr + cur_off(c);
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = cur_uN(c, addr_size); break;
	case PE_ULEB: v = cur_uleb(c); break;
	case PE_UDATA2: v = cur_u16(c); break;
	case PE_UDATA4: v = cur_u32(c); break;
	case PE_UDATA8: v = cur_u64(c); break;
	case PE_SLEB: v = (uint64_t)cur_sleb(c); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)cur_u16(c); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)cur_u32(c); break;
	case PE_SDATA8: v = cur_u64(c); break;
	default: return -EINVAL;
	}
	switch (enc & 0x70) {
	case 0: case PE_ALIGNED: break;
	case PE_PCREL: v += pos; break;
	case PE_DATAREL: v += datarel; break;
	default: return -EINVAL; /* textrel/funcrel: not produced for any target we unwind */
	}
	if (addr_size == 4)
		v &= 0xffffffffu;
	*out = v;
	return cur_ok(c) ? 0 : -EINVAL;
}

/* The entry at off: its body (after the id field), whether it is a CIE, and for an FDE the
 * offset of its CIE. Returns 1 for a zero terminator, 0 for an entry. */
static int read_entry(const struct dwarf_cfi *c, int sec, size_t off, struct cur *body,
		      bool *is_cie, size_t *cie_off, size_t *next)
{
	const struct dwarf_cfi_section *s = section(c, sec);
	struct cur cu = cur_make(s->data, s->size, c->src.big_endian);
	cur_seek(&cu, off);
	uint64_t len = cur_u32(&cu);
	bool is64 = len == 0xffffffffu;
	if (is64)
		len = cur_u64(&cu);
	if (!cur_ok(&cu))
		return bad(c, sec, off, "entry header runs past the section");
	if (len == 0) {
		*next = cur_off(&cu);
		return 1;
	}
	if (len > cur_left(&cu))
		return bad(c, sec, off, "entry length runs past the section");
	*body = cur_sub(&cu, len);
	*next = cur_off(&cu);
	size_t id_pos = cur_off(body);
	uint64_t id = is64 ? cur_u64(body) : cur_u32(body);
	if (!cur_ok(body))
		return bad(c, sec, off, "entry too short for its id");
	if (sec == SEC_EH) {
		*is_cie = id == 0;
		if (!*is_cie && id > id_pos)
			return bad(c, sec, off, "CIE pointer points before the section");
		*cie_off = (size_t)(id_pos - id);
	} else {
		*is_cie = id == (is64 ? UINT64_MAX : 0xffffffffu);
		*cie_off = (size_t)id;
	}
	return 0;
}

static int parse_augmentation_data(const struct dwarf_cfi *c, int sec, size_t off,
				   const char *aug, struct cur *b, struct cie *cie)
{
	const struct dwarf_cfi_section *s = section(c, sec);
	uint64_t len = cur_uleb(b);
	struct cur d = cur_sub(b, len);
	for (const char *a = aug + 1; *a; a++) {
		uint64_t ignored;
		switch (*a) {
		case 'L': cie->lsda_enc = cur_u8(&d); break;
		case 'R': cie->fde_enc = cur_u8(&d); break;
		case 'S': cie->signal = true; break;
		case 'P':
			if (read_encoded(&d, cur_u8(&d), cie->addr_size, s->vaddr, 0, &ignored))
				return bad(c, sec, off, "bad personality pointer encoding");
			break;
		default:
			/* 'B' (aarch64 BTI), 'G' (MTE) and later letters carry no data we need; the
			 * 'z' length lets us skip whatever follows. */
			return cur_ok(b) ? 0 : bad(c, sec, off, "augmentation data runs past the CIE");
		}
		if (!cur_ok(&d))
			return bad(c, sec, off, "augmentation data runs past its length");
	}
	return cur_ok(b) ? 0 : bad(c, sec, off, "augmentation data runs past the CIE");
}

static int parse_cie(const struct dwarf_cfi *c, int sec, size_t off, struct cie *cie)
{
	struct cur b;
	bool is_cie;
	size_t cie_off, next;
	int r = read_entry(c, sec, off, &b, &is_cie, &cie_off, &next);
	if (r < 0)
		return r;
	if (r > 0 || !is_cie)
		return bad(c, sec, off, "FDE's CIE pointer does not lead to a CIE");
	memset(cie, 0, sizeof(*cie));
	cie->addr_size = c->src.addr_size;
	cie->fde_enc = PE_ABSPTR;
	cie->lsda_enc = PE_OMIT;
	uint8_t version = cur_u8(&b);
	if (version != 1 && version != 3 && version != 4)
		return bad(c, sec, off, "unsupported CIE version");
	const char *aug = cur_str(&b);
	if (!aug)
		return bad(c, sec, off, "unterminated augmentation string");
	if (!strcmp(aug, "eh"))
		cur_skip(&b, cie->addr_size); /* old GCC: the address of the exception table */
	else if (aug[0] && aug[0] != 'z')
		return bad(c, sec, off, "unknown augmentation without 'z'");
	if (version == 4) {
		cie->addr_size = cur_u8(&b);
		if (cur_u8(&b) != 0)
			return bad(c, sec, off, "segment selectors are not supported");
		if (cie->addr_size != 4 && cie->addr_size != 8)
			return bad(c, sec, off, "unsupported address size");
	}
	cie->code_align = cur_uleb(&b);
	cie->data_align = cur_sleb(&b);
	uint64_t ra = version == 1 ? cur_u8(&b) : cur_uleb(&b);
	if (ra >= DWARF_CFI_NREGS)
		return bad(c, sec, off, "return address register out of range");
	cie->ra_reg = (uint16_t)ra;
	if (aug[0] == 'z') {
		cie->has_z = true;
		r = parse_augmentation_data(c, sec, off, aug, &b, cie);
		if (r)
			return r;
	}
	if (!cur_ok(&b))
		return bad(c, sec, off, "CIE runs past its length");
	cie->insns = b;
	return 0;
}

/* The FDE at off: its CIE, pc range and instructions. */
static int parse_fde(const struct dwarf_cfi *c, int sec, size_t off, struct cie *cie,
		     uint64_t *start, uint64_t *end, struct cur *insns)
{
	struct cur b;
	bool is_cie;
	size_t cie_off, next;
	int r = read_entry(c, sec, off, &b, &is_cie, &cie_off, &next);
	if (r < 0)
		return r;
	if (r > 0 || is_cie)
		return bad(c, sec, off, "expected an FDE");
	r = parse_cie(c, sec, cie_off, cie);
	if (r)
		return r;
	const struct dwarf_cfi_section *s = section(c, sec);
	uint64_t range;
	if (read_encoded(&b, cie->fde_enc, cie->addr_size, s->vaddr, 0, start) ||
	    read_encoded(&b, cie->fde_enc & 0x0f, cie->addr_size, 0, 0, &range))
		return bad(c, sec, off, "bad FDE address encoding");
	if (cie->has_z) {
		uint64_t alen = cur_uleb(&b);
		cur_skip(&b, alen);
	}
	if (!cur_ok(&b))
		return bad(c, sec, off, "FDE runs past its length");
	*end = *start + range;
	*insns = b;
	return 0;
}

/* ---- the CFA program ---- */

struct saved_state {
	__typeof__(((struct dwarf_cfi_row *)0)->cfa) cfa;
	struct dwarf_rule regs[DWARF_CFI_NREGS];
};

#define STATE_STACK_MAX 16

struct program {
	const struct dwarf_cfi *c;
	int sec;
	const struct cie *cie;
	const struct dwarf_cfi_row *initial; /* after the CIE's instructions, for restore */
	uint64_t pc;
	struct saved_state stack[STATE_STACK_MAX];
	int depth;
};

static void set_rule(struct dwarf_cfi_row *row, uint64_t reg, uint8_t kind, int64_t off)
{
	if (reg >= DWARF_CFI_NREGS)
		return;
	struct dwarf_rule *r = &row->regs[reg];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->off = off;
}

static void set_expr_rule(struct dwarf_cfi_row *row, uint64_t reg, uint8_t kind, struct cur *in)
{
	uint64_t len = cur_uleb(in);
	const uint8_t *e = cur_bytes(in, len);
	if (reg >= DWARF_CFI_NREGS || !e)
		return;
	set_rule(row, reg, kind, 0);
	row->regs[reg].expr = e;
	row->regs[reg].expr_len = (uint32_t)len;
}

/* A factored offset. Wrapping arithmetic: hostile CFI may overflow, and must not be
 * undefined behaviour (the row is then merely wrong, and validation rejects the step). */
static int64_t scaled(uint64_t v, int64_t factor)
{
	return (int64_t)(v * (uint64_t)factor);
}

/* Moves loc; returns 1 when the new location passes the pc (the row is complete). */
static int advance(struct program *p, struct dwarf_cfi_row *row, uint64_t newloc)
{
	if (newloc > p->pc) {
		row->end = newloc;
		return 1;
	}
	row->start = newloc;
	return 0;
}

/* Executes one instruction; 1 when the row for pc is complete, <0 on error. */
static int step(struct program *p, struct cur *in, struct dwarf_cfi_row *row)
{
	const struct cie *cie = p->cie;
	uint8_t op = cur_u8(in);
	uint64_t reg, v;
	switch (DW_CFA_primary(op)) {
	case DW_CFA_advance_loc:
		return advance(p, row, row->start + DW_CFA_operand(op) * cie->code_align);
	case DW_CFA_offset:
		set_rule(row, DW_CFA_operand(op), DWARF_RULE_OFFSET,
			 scaled(cur_uleb(in), cie->data_align));
		return 0;
	case DW_CFA_restore:
		reg = DW_CFA_operand(op);
		if (reg < DWARF_CFI_NREGS)
			row->regs[reg] = p->initial->regs[reg];
		return 0;
	}
	switch (op) {
	case DW_CFA_nop: return 0;
	case DW_CFA_set_loc:
		if (read_encoded(in, cie->fde_enc, cie->addr_size, section(p->c, p->sec)->vaddr,
				 0, &v))
			return -EINVAL;
		return advance(p, row, v);
	case DW_CFA_advance_loc1: return advance(p, row, row->start + cur_u8(in) * cie->code_align);
	case DW_CFA_advance_loc2: return advance(p, row, row->start + cur_u16(in) * cie->code_align);
	case DW_CFA_advance_loc4: return advance(p, row, row->start + cur_u32(in) * cie->code_align);
	case DW_CFA_offset_extended:
		reg = cur_uleb(in);
		set_rule(row, reg, DWARF_RULE_OFFSET, scaled(cur_uleb(in), cie->data_align));
		return 0;
	case DW_CFA_restore_extended:
		reg = cur_uleb(in);
		if (reg < DWARF_CFI_NREGS)
			row->regs[reg] = p->initial->regs[reg];
		return 0;
	case DW_CFA_undefined: set_rule(row, cur_uleb(in), DWARF_RULE_UNDEFINED, 0); return 0;
	case DW_CFA_same_value: set_rule(row, cur_uleb(in), DWARF_RULE_SAME, 0); return 0;
	case DW_CFA_register:
		reg = cur_uleb(in);
		v = cur_uleb(in);
		set_rule(row, reg, DWARF_RULE_REGISTER, 0);
		if (reg < DWARF_CFI_NREGS)
			row->regs[reg].reg = (uint16_t)(v < DWARF_CFI_NREGS ? v : DWARF_CFI_NREGS);
		return 0;
	case DW_CFA_remember_state:
		if (p->depth == STATE_STACK_MAX)
			return -EINVAL;
		memcpy(&p->stack[p->depth].cfa, &row->cfa, sizeof(row->cfa));
		memcpy(p->stack[p->depth].regs, row->regs, sizeof(row->regs));
		p->depth++;
		return 0;
	case DW_CFA_restore_state: /* the CFA is restored too (DWARF 5 6.4.2.4) */
		if (p->depth == 0)
			return -EINVAL;
		p->depth--;
		memcpy(&row->cfa, &p->stack[p->depth].cfa, sizeof(row->cfa));
		memcpy(row->regs, p->stack[p->depth].regs, sizeof(row->regs));
		return 0;
	case DW_CFA_def_cfa:
		row->cfa.kind = DWARF_CFA_REG_OFFSET;
		row->cfa.reg = (uint16_t)cur_uleb(in);
		row->cfa.off = (int64_t)cur_uleb(in);
		return 0;
	case DW_CFA_def_cfa_register: row->cfa.kind = DWARF_CFA_REG_OFFSET; row->cfa.reg = (uint16_t)cur_uleb(in); return 0;
	case DW_CFA_def_cfa_offset: row->cfa.off = (int64_t)cur_uleb(in); return 0;
	case DW_CFA_def_cfa_expression:
		v = cur_uleb(in);
		row->cfa.kind = DWARF_CFA_EXPR;
		row->cfa.expr = cur_bytes(in, v);
		row->cfa.expr_len = (uint32_t)v;
		return 0;
	case DW_CFA_expression: reg = cur_uleb(in); set_expr_rule(row, reg, DWARF_RULE_EXPR, in); return 0;
	case DW_CFA_offset_extended_sf:
		reg = cur_uleb(in);
		set_rule(row, reg, DWARF_RULE_OFFSET, scaled((uint64_t)cur_sleb(in), cie->data_align));
		return 0;
	case DW_CFA_def_cfa_sf:
		row->cfa.kind = DWARF_CFA_REG_OFFSET;
		row->cfa.reg = (uint16_t)cur_uleb(in);
		row->cfa.off = scaled((uint64_t)cur_sleb(in), cie->data_align);
		return 0;
	case DW_CFA_def_cfa_offset_sf: row->cfa.off = scaled((uint64_t)cur_sleb(in), cie->data_align); return 0;
	case DW_CFA_val_offset:
		reg = cur_uleb(in);
		set_rule(row, reg, DWARF_RULE_VAL_OFFSET, scaled(cur_uleb(in), cie->data_align));
		return 0;
	case DW_CFA_val_offset_sf:
		reg = cur_uleb(in);
		set_rule(row, reg, DWARF_RULE_VAL_OFFSET, scaled((uint64_t)cur_sleb(in), cie->data_align));
		return 0;
	case DW_CFA_val_expression: reg = cur_uleb(in); set_expr_rule(row, reg, DWARF_RULE_VAL_EXPR, in); return 0;
	case DW_CFA_GNU_window_save: return 0; /* no rule change (also aarch64's negate_ra_state) */
	case DW_CFA_GNU_args_size: cur_uleb(in); return 0;
	case DW_CFA_GNU_negative_offset_extended:
		reg = cur_uleb(in);
		set_rule(row, reg, DWARF_RULE_OFFSET, scaled(0 - cur_uleb(in), cie->data_align));
		return 0;
	}
	return -EINVAL;
}

static int run(struct program *p, struct cur in, struct dwarf_cfi_row *row)
{
	while (!cur_eof(&in)) {
		int r = step(p, &in, row);
		if (!cur_ok(&in) || r < 0)
			return -EINVAL;
		if (r > 0)
			return 1;
	}
	return 0;
}

static int row_for_fde(const struct dwarf_cfi *c, int sec, size_t off, uint64_t pc,
		       struct dwarf_cfi_row *row)
{
	struct cie cie;
	uint64_t start, end;
	struct cur insns;
	int r = parse_fde(c, sec, off, &cie, &start, &end, &insns);
	if (r)
		return r;
	if (pc < start || pc >= end)
		return -ENOENT;
	struct program *p = malloc(sizeof(*p));
	struct dwarf_cfi_row *initial = malloc(sizeof(*initial));
	if (!p || !initial) {
		free(p);
		free(initial);
		return err_set(-ENOMEM, "%s: out of memory", c->src.name);
	}
	memset(row, 0, sizeof(*row));
	memset(initial, 0, sizeof(*initial));
	row->ra_reg = cie.ra_reg;
	row->signal_frame = cie.signal;
	row->start = start;
	p->c = c;
	p->sec = sec;
	p->cie = &cie;
	p->initial = initial;
	p->pc = UINT64_MAX;
	p->depth = 0;
	r = run(p, cie.insns, row);
	*initial = *row;
	row->start = start;
	row->end = end;
	if (r == 0) {
		p->pc = pc;
		p->depth = 0;
		r = run(p, insns, row);
	}
	free(p);
	free(initial);
	if (r < 0)
		return bad(c, sec, off, "malformed call frame instructions");
	return 0;
}

/* ---- lookup ---- */

static void open_hdr(struct dwarf_cfi *c)
{
	const struct dwarf_cfi_section *h = &c->src.eh_frame_hdr;
	if (!h->data || !c->src.eh_frame.data)
		return;
	struct cur cu = cur_make(h->data, h->size, c->src.big_endian);
	uint8_t version = cur_u8(&cu), ptr_enc = cur_u8(&cu), count_enc = cur_u8(&cu),
		table_enc = cur_u8(&cu);
	uint64_t eh_ptr, count;
	if (version != 1 || table_enc != (PE_DATAREL | PE_SDATA4) || count_enc == PE_OMIT)
		return;
	if (read_encoded(&cu, ptr_enc, c->src.addr_size, h->vaddr, h->vaddr, &eh_ptr) ||
	    read_encoded(&cu, count_enc, c->src.addr_size, h->vaddr, h->vaddr, &count))
		return;
	if (count > cur_left(&cu) / 8)
		return;
	c->hdr_table = cu.p;
	c->hdr_count = (size_t)count;
}

static int by_start(const void *a, const void *b)
{
	const struct cfi_index_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Calls fn for every FDE of one section, in file order, with its offset and pc range. A
 * terminator in .eh_frame ends the walk; any malformed entry ends it with an error. */
static int walk_fdes(struct dwarf_cfi *c, int sec,
		     int (*fn)(struct dwarf_cfi *c, int sec, size_t off, uint64_t start,
			       uint64_t end, void *arg),
		     void *arg)
{
	const struct dwarf_cfi_section *s = section(c, sec);
	size_t off = 0;
	while (s->data && off < s->size) {
		struct cur b, insns;
		struct cie cie;
		bool is_cie;
		size_t cie_off, next;
		uint64_t start, end;
		int r = read_entry(c, sec, off, &b, &is_cie, &cie_off, &next);
		if (r < 0)
			return r;
		if (r > 0 && sec == SEC_EH)
			break;
		if (r == 0 && !is_cie) {
			r = parse_fde(c, sec, off, &cie, &start, &end, &insns);
			if (!r)
				r = fn(c, sec, off, start, end, arg);
			if (r)
				return r;
		}
		off = next;
	}
	return 0;
}

static int index_fde(struct dwarf_cfi *c, int sec, size_t off, uint64_t start, uint64_t end,
		     void *arg)
{
	(void)arg;
	if (end <= start)
		return 0;
	struct cfi_index_entry *e = vec_push(&c->index);
	if (!e)
		return err_set(-ENOMEM, "%s: out of memory", c->src.name);
	*e = (struct cfi_index_entry){ .start = start, .end = end, .off = off, .sec = (uint8_t)sec };
	return 0;
}

static int build_index(struct dwarf_cfi *c)
{
	c->indexed = true;
	int r = 0;
	if (!c->hdr_table)
		r = walk_fdes(c, SEC_EH, index_fde, NULL);
	if (!r)
		r = walk_fdes(c, SEC_DEBUG, index_fde, NULL);
	if (r) {
		vec_free(&c->index);
		return r;
	}
	if (c->index.n)
		qsort(c->index.v, c->index.n, sizeof(*c->index.v), by_start);
	return 0;
}

int dwarf_cfi_open(const struct dwarf_cfi_src *src, struct dwarf_cfi **out)
{
	if (src->addr_size != 4 && src->addr_size != 8)
		return err_set(-EINVAL, "%s: unsupported address size %u", src->name,
			       src->addr_size);
	struct dwarf_cfi *c = calloc(1, sizeof(*c));
	if (!c)
		return err_set(-ENOMEM, "%s: out of memory", src->name);
	c->src = *src;
	open_hdr(c);
	*out = c;
	return 0;
}

static int elf_cfi_section(struct elf_file *f, const char *name, struct dwarf_cfi_section *out)
{
	struct elf_section *s = elf_section_by_name(f, name);
	if (!s || s->type == SHT_NOBITS)
		return 0;
	int r = elf_section_data(f, s, &out->data, &out->size);
	out->vaddr = s->addr;
	return r;
}

int dwarf_cfi_open_elf(struct elf_file *f, struct elf_file *dbg, struct dwarf_cfi **out)
{
	struct dwarf_cfi_src src = {
		.name = f->path,
		.addr_size = f->is64 ? 8 : 4,
		.big_endian = f->big_endian,
	};
	int r = elf_cfi_section(f, ".eh_frame", &src.eh_frame);
	if (!r)
		r = elf_cfi_section(f, ".eh_frame_hdr", &src.eh_frame_hdr);
	if (!r)
		r = elf_cfi_section(f, ".debug_frame", &src.debug_frame);
	if (!r && !src.debug_frame.data && dbg)
		r = elf_cfi_section(dbg, ".debug_frame", &src.debug_frame);
	if (r)
		return r;
	return dwarf_cfi_open(&src, out);
}

void dwarf_cfi_close(struct dwarf_cfi *c)
{
	if (!c)
		return;
	vec_free(&c->index);
	free(c);
}

static int hdr_lookup(struct dwarf_cfi *c, uint64_t pc, struct dwarf_cfi_row *row)
{
	uint64_t base = c->src.eh_frame_hdr.vaddr;
	bool be = c->src.big_endian;
	size_t lo = 0, hi = c->hdr_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t loc = base + (uint64_t)(int64_t)(int32_t)load_u32(c->hdr_table + 8 * mid, be);
		if (loc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	uint64_t fde = base + (uint64_t)(int64_t)(int32_t)load_u32(c->hdr_table + 8 * (lo - 1) + 4, be);
	if (fde < c->src.eh_frame.vaddr || fde - c->src.eh_frame.vaddr >= c->src.eh_frame.size)
		return err_set(-EINVAL, "%s: .eh_frame_hdr: FDE pointer 0x%llx lies outside .eh_frame",
			       c->src.name, (unsigned long long)fde);
	return row_for_fde(c, SEC_EH, (size_t)(fde - c->src.eh_frame.vaddr), pc, row);
}

static int index_lookup(struct dwarf_cfi *c, uint64_t pc, struct dwarf_cfi_row *row)
{
	if (!c->indexed) {
		int r = build_index(c);
		if (r)
			return r;
	}
	size_t lo = UPPER_BOUND(c->index.v, c->index.n, .start, pc);
	/* Walk back over entries starting at or before pc: FDEs may nest or overlap. */
	for (size_t i = lo; i > 0 && lo - i < 4; i--) {
		const struct cfi_index_entry *e = &c->index.v[i - 1];
		if (pc < e->end)
			return row_for_fde(c, e->sec, e->off, pc, row);
	}
	return -ENOENT;
}

int dwarf_cfi_row_at(struct dwarf_cfi *c, uint64_t pc, struct dwarf_cfi_row *row)
{
	if (c->hdr_table) {
		int r = hdr_lookup(c, pc, row);
		if (r != -ENOENT)
			return r;
		if (!c->src.debug_frame.data)
			return -ENOENT;
	}
	return index_lookup(c, pc, row);
}

struct each_fde {
	int (*fn)(uint64_t start, uint64_t end, void *arg);
	void *arg;
};

static int call_each_fde(struct dwarf_cfi *c, int sec, size_t off, uint64_t start,
			 uint64_t end, void *arg)
{
	(void)c, (void)sec, (void)off;
	const struct each_fde *e = arg;
	return e->fn(start, end, e->arg);
}

int dwarf_cfi_each_fde(struct dwarf_cfi *c, int (*fn)(uint64_t start, uint64_t end, void *arg),
		       void *arg)
{
	struct each_fde e = { fn, arg };
	for (int sec = SEC_EH; sec <= SEC_DEBUG; sec++) {
		int r = walk_fdes(c, sec, call_each_fde, &e);
		if (r)
			return r;
	}
	return 0;
}

/* ---- expressions ---- */

#define EXPR_STACK_MAX 64
#define EXPR_STEPS_MAX 10000

struct vm {
	uint64_t st[EXPR_STACK_MAX];
	int n;
};

static int push(struct vm *m, uint64_t v)
{
	if (m->n == EXPR_STACK_MAX)
		return -EINVAL;
	m->st[m->n++] = v;
	return 0;
}

static int pop(struct vm *m, uint64_t *v)
{
	if (m->n == 0)
		return -EINVAL;
	*v = m->st[--m->n];
	return 0;
}

static int binop(struct vm *m, uint8_t op)
{
	uint64_t b, a;
	if (pop(m, &b) || pop(m, &a))
		return -EINVAL;
	int64_t sa = (int64_t)a, sb = (int64_t)b;
	uint64_t r;
	switch (op) {
	case DW_OP_and: r = a & b; break;
	case DW_OP_div: /* signed */
		if (!sb) return -EINVAL;
		r = (sb == -1) ? (uint64_t)0 - a : (uint64_t)(sa / sb); break;
	case DW_OP_minus: r = a - b; break;
	case DW_OP_mod: if (!b) return -EINVAL; r = a % b; break;
	case DW_OP_mul: r = a * b; break;
	case DW_OP_or: r = a | b; break;
	case DW_OP_plus: r = a + b; break;
	case DW_OP_shl: r = b >= 64 ? 0 : a << b; break;
	case DW_OP_shr: r = b >= 64 ? 0 : a >> b; break;
	case DW_OP_shra: r = (uint64_t)(sa >> (b >= 64 ? 63 : b)); break;
	case DW_OP_xor: r = a ^ b; break;
	case DW_OP_eq: r = sa == sb; break;
	case DW_OP_ge: r = sa >= sb; break;
	case DW_OP_gt: r = sa > sb; break;
	case DW_OP_le: r = sa <= sb; break;
	case DW_OP_lt: r = sa < sb; break;
	case DW_OP_ne: r = sa != sb; break;
	default: return -EINVAL;
	}
	return push(m, r);
}

static int expr_op(struct vm *m, struct cur *c, uint8_t op, const struct dwarf_expr_env *env)
{
	uint64_t a, b, v;
	int r;
	if (op >= DW_OP_lit0 && op <= DW_OP_lit31)
		return push(m, op - (unsigned)DW_OP_lit0);
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
		int64_t off = cur_sleb(c);
		if ((r = env->reg(env->arg, op - (unsigned)DW_OP_breg0, &v)))
			return r;
		return push(m, v + (uint64_t)off);
	}
	switch (op) {
	case DW_OP_addr: return push(m, cur_uN(c, env->addr_size));
	case DW_OP_deref:
		if (pop(m, &a) || (r = env->mem(env->arg, a, env->addr_size, &v)))
			return -EINVAL;
		return push(m, v);
	case DW_OP_const1u: return push(m, cur_u8(c));
	case DW_OP_const1s: return push(m, (uint64_t)(int64_t)(int8_t)cur_u8(c));
	case DW_OP_const2u: return push(m, cur_u16(c));
	case DW_OP_const2s: return push(m, (uint64_t)(int64_t)(int16_t)cur_u16(c));
	case DW_OP_const4u: return push(m, cur_u32(c));
	case DW_OP_const4s: return push(m, (uint64_t)(int64_t)(int32_t)cur_u32(c));
	case DW_OP_const8u: return push(m, cur_u64(c));
	case DW_OP_const8s: return push(m, cur_u64(c));
	case DW_OP_constu: return push(m, cur_uleb(c));
	case DW_OP_consts: return push(m, (uint64_t)cur_sleb(c));
	case DW_OP_dup:
		if (m->n < 1) return -EINVAL;
		return push(m, m->st[m->n - 1]);
	case DW_OP_drop: return pop(m, &a);
	case DW_OP_over:
		if (m->n < 2) return -EINVAL;
		return push(m, m->st[m->n - 2]);
	case DW_OP_pick:
		a = cur_u8(c);
		if (a >= (uint64_t)m->n) return -EINVAL;
		return push(m, m->st[m->n - 1 - (int)a]);
	case DW_OP_swap:
		if (m->n < 2) return -EINVAL;
		a = m->st[m->n - 1]; m->st[m->n - 1] = m->st[m->n - 2]; m->st[m->n - 2] = a;
		return 0;
	case DW_OP_rot:
		if (m->n < 3) return -EINVAL;
		a = m->st[m->n - 1];
		m->st[m->n - 1] = m->st[m->n - 2];
		m->st[m->n - 2] = m->st[m->n - 3];
		m->st[m->n - 3] = a;
		return 0;
	case DW_OP_abs:
		if (pop(m, &a)) return -EINVAL;
		return push(m, (int64_t)a < 0 ? (uint64_t)0 - a : a);
	case DW_OP_neg:
		if (pop(m, &a)) return -EINVAL;
		return push(m, (uint64_t)0 - a);
	case DW_OP_not:
		if (pop(m, &a)) return -EINVAL;
		return push(m, ~a);
	case DW_OP_plus_uconst:
		if (pop(m, &a)) return -EINVAL;
		return push(m, a + cur_uleb(c));
	case DW_OP_bregx:
		a = cur_uleb(c);
		b = (uint64_t)cur_sleb(c);
		if (a > 0xffff || (r = env->reg(env->arg, (unsigned)a, &v)))
			return -EINVAL;
		return push(m, v + b);
	case DW_OP_deref_size:
		a = cur_u8(c);
		if (a == 0 || a > 8 || pop(m, &b) || env->mem(env->arg, b, (unsigned)a, &v))
			return -EINVAL;
		return push(m, v);
	case DW_OP_nop: return 0;
	}
	if ((op >= DW_OP_and && op <= DW_OP_mul) || op == DW_OP_or || op == DW_OP_plus ||
	    (op >= DW_OP_shl && op <= DW_OP_xor) || (op >= DW_OP_eq && op <= DW_OP_ne))
		return binop(m, op);
	return -EINVAL;
}

int dwarf_expr_eval(const uint8_t *expr, size_t len, const struct dwarf_expr_env *env,
		    bool push_initial, uint64_t initial, uint64_t *result)
{
	struct vm m = { .n = 0 };
	struct cur c = cur_make(expr, len, env->big_endian);
	if (push_initial)
		push(&m, initial);
	for (int steps = 0; !cur_eof(&c); steps++) {
		if (steps == EXPR_STEPS_MAX)
			return -EINVAL;
		uint8_t op = cur_u8(&c);
		int r;
		if (op == DW_OP_skip || op == DW_OP_bra) {
			int16_t d = (int16_t)cur_u16(&c);
			uint64_t cond = 1;
			if (op == DW_OP_bra && pop(&m, &cond))
				return -EINVAL;
			if (cond) {
				int64_t to = (int64_t)cur_off(&c) + d;
				if (to < 0 || (uint64_t)to > len)
					return -EINVAL;
				cur_seek(&c, (uint64_t)to);
			}
			r = 0;
		} else {
			r = expr_op(&m, &c, op, env);
		}
		if (r || !cur_ok(&c))
			return r ? r : -EINVAL;
	}
	return pop(&m, result);
}
