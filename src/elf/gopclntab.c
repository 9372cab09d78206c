/*
 * Go's .gopclntab, read in place. The header (runtime.pcHeader) gives the offsets of the
 * function-name, compile-unit, file and pc-value tables and of the function table, sorted pcs
 * with the offset of each function's _func record. Every offset and count is checked against
 * the section once at open (a count is capped by what the section can hold); per-lookup
 * reads go through a cursor. Pc-value tables are runs of (value delta, pc delta) varint
 * pairs, as debug/gosym's step() decodes them.
 */
#include "elf/gopclntab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"

struct elf_gopclntab {
	const char *name;
	const uint8_t *data;
	size_t size;
	bool big_endian;
	unsigned version;  /* 116, 118, 120 */
	unsigned quantum;  /* pc deltas count in units of this (minLC) */
	unsigned ptr;      /* pointer size, 4 or 8 */
	unsigned field;    /* size of a function-table field: 4 from 1.18 on, else ptr */
	unsigned fbase;    /* where _func's nameoff lies: after entryoff (4) or entry (ptr) */
	uint64_t text;     /* what entry offsets count from (1.18+) */
	size_t nfunc;
	size_t funcnames, cutab, filetab, pctab, pcln, ftab; /* offsets in the section */
};

static int bad(const char *name, size_t off, const char *what)
{
	return err_set(-EINVAL, "%s: .gopclntab at 0x%zx: %s", name, off, what);
}

static uint64_t word(const struct elf_gopclntab *t, size_t off, unsigned size)
{
	return size == 8 ? load_u64(t->data + off, t->big_endian)
			 : load_u32(t->data + off, t->big_endian);
}

static int parse_header(struct elf_gopclntab *t)
{
	if (t->size < 8)
		return bad(t->name, 0, "shorter than its header");
	uint32_t magic_le = load_u32(t->data, false), magic_be = load_u32(t->data, true);
	uint32_t magic = magic_le;
	t->big_endian = false;
	if (magic_le != 0xfffffffa && magic_le != 0xfffffff0 && magic_le != 0xfffffff1) {
		magic = magic_be;
		t->big_endian = true;
	}
	switch (magic) {
	case 0xfffffffa:
		t->version = 116;
		break;
	case 0xfffffff0:
		t->version = 118;
		break;
	case 0xfffffff1:
		t->version = 120;
		break;
	default:
		return bad(t->name, 0, "magic is not that of Go 1.16 to 1.2x");
	}
	t->quantum = t->data[6];
	t->ptr = t->data[7];
	if (t->data[4] || t->data[5] || (t->quantum != 1 && t->quantum != 2 && t->quantum != 4) ||
	    (t->ptr != 4 && t->ptr != 8))
		return bad(t->name, 4, "header padding, pc quantum or pointer size invalid");
	bool v116 = t->version == 116;
	size_t nwords = v116 ? 7 : 8, hsize = 8 + nwords * t->ptr;
	if (t->size < hsize)
		return bad(t->name, 0, "shorter than its header");
	uint64_t w[8];
	for (size_t i = 0; i < nwords; i++)
		w[i] = word(t, 8 + i * t->ptr, t->ptr);
	size_t at = v116 ? 2 : 3; /* the first table offset: 1.18 put textStart before them */
	t->text = v116 ? 0 : w[2];
	size_t *offs[5] = { &t->funcnames, &t->cutab, &t->filetab, &t->pctab, &t->pcln };
	for (size_t i = 0; i < 5; i++) {
		if (w[at + i] > t->size)
			return bad(t->name, 8 + (at + i) * t->ptr, "table offset past the section");
		*offs[i] = (size_t)w[at + i];
	}
	t->field = v116 ? t->ptr : 4;
	t->fbase = v116 ? t->ptr : 4;
	t->ftab = t->pcln;
	/* nfunc entries of two fields, and the end of the last function. */
	uint64_t room = (t->size - t->ftab) / t->field;
	if (room < 1 || w[0] > (room - 1) / 2)
		return bad(t->name, 8, "more functions than the function table holds");
	t->nfunc = (size_t)w[0];
	return 0;
}

int elf_gopclntab_open_mem(const char *name, const uint8_t *data, size_t size,
			   struct elf_gopclntab **out)
{
	struct elf_gopclntab *t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(-ENOMEM, "%s: out of memory", name);
	*t = (struct elf_gopclntab){ .name = name, .data = data, .size = size };
	int err = parse_header(t);
	if (err) {
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

int elf_gopclntab_open(struct elf_file *f, struct elf_gopclntab **out)
{
	struct elf_section *s = elf_section_by_name(f, ".gopclntab");
	const uint8_t *data;
	size_t size;
	if (!s || s->type == 8 /* SHT_NOBITS */)
		return -ENOENT;
	int err = elf_section_data(f, s, &data, &size);
	if (!err)
		err = elf_gopclntab_open_mem(f->path, data, size, out);
	if (err)
		return err;
	/* A position-independent build leaves textStart to a dynamic relocation (0 in the
	 * file); runtime.text is where .text starts. */
	struct elf_section *text = elf_section_by_name(f, ".text");
	if ((*out)->version >= 118 && !(*out)->text && text)
		(*out)->text = text->addr;
	return 0;
}

void elf_gopclntab_close(struct elf_gopclntab *t)
{
	free(t);
}

unsigned elf_gopclntab_version(const struct elf_gopclntab *t)
{
	return t->version;
}

size_t elf_gopclntab_nfuncs(const struct elf_gopclntab *t)
{
	return t->nfunc;
}

/* The pc of function-table slot i (i == nfunc: the end of the last function). */
static uint64_t slot_pc(const struct elf_gopclntab *t, size_t i)
{
	uint64_t v = word(t, t->ftab + 2 * i * t->field, t->field);
	return t->version == 116 ? v : t->text + v;
}

/* A NUL-terminated string at off, or NULL. */
static const char *str_at(const struct elf_gopclntab *t, uint64_t off)
{
	if (off >= t->size || !memchr(t->data + off, 0, t->size - off))
		return NULL;
	return (const char *)t->data + off;
}

bool elf_gopclntab_func(const struct elf_gopclntab *t, size_t i, struct elf_gofunc *out)
{
	if (i >= t->nfunc)
		return false;
	uint64_t entry = slot_pc(t, i), end = slot_pc(t, i + 1);
	uint64_t off = word(t, t->ftab + (2 * i + 1) * t->field, t->field);
	if (end <= entry || off > t->size - t->pcln || t->size - t->pcln - off < t->fbase + 32)
		return false;
	uint64_t func = t->pcln + off;
	uint32_t nameoff = load_u32(t->data + func + t->fbase, t->big_endian);
	*out = (struct elf_gofunc){ entry, end, str_at(t, (uint64_t)t->funcnames + nameoff),
				    (size_t)func };
	return true;
}

bool elf_gopclntab_find(const struct elf_gopclntab *t, uint64_t vaddr, struct elf_gofunc *out)
{
	size_t lo = 0, hi = t->nfunc; /* the answer is the last slot in [lo, hi) at or below */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (slot_pc(t, mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && elf_gopclntab_func(t, lo - 1, out) && vaddr < out->end &&
	       vaddr >= out->entry;
}

/* The value a pc-value table (at off in pctab) has at vaddr in fn: false when the table is
 * absent, damaged or ends before vaddr. Each pair takes two bytes at least, so the walk ends
 * within the section. */
static bool pcvalue(const struct elf_gopclntab *t, const struct elf_gofunc *fn, uint32_t off,
		    uint64_t vaddr, int32_t *val)
{
	if (!off || (uint64_t)t->pctab + off >= t->size)
		return false;
	struct cur c = cur_make(t->data, t->size, t->big_endian);
	cur_seek(&c, (uint64_t)t->pctab + off);
	uint64_t pc = fn->entry;
	uint32_t v = (uint32_t)-1;
	for (bool first = true; cur_ok(&c) && !cur_eof(&c); first = false) {
		uint32_t d = (uint32_t)cur_uleb(&c);
		if (d == 0 && !first)
			break;
		v += d & 1 ? ~(d >> 1) : d >> 1;
		pc += (uint64_t)(uint32_t)cur_uleb(&c) * t->quantum;
		if (!cur_ok(&c))
			break;
		if (vaddr < pc) {
			*val = (int32_t)v;
			return true;
		}
	}
	return false;
}

bool elf_gopclntab_line(const struct elf_gopclntab *t, const struct elf_gofunc *fn,
			uint64_t vaddr, const char **file, uint32_t *line)
{
	if (fn->func_off > t->size || t->size - fn->func_off < t->fbase + 32)
		return false;
	const uint8_t *rec = t->data + fn->func_off + t->fbase;
	uint32_t pcfile = load_u32(rec + 16, t->big_endian), pcln = load_u32(rec + 20, t->big_endian);
	uint32_t cu = load_u32(rec + 28, t->big_endian);
	int32_t fno, ln;
	if (!pcvalue(t, fn, pcfile, vaddr, &fno) || !pcvalue(t, fn, pcln, vaddr, &ln) || fno < 0 ||
	    ln < 0)
		return false;
	/* The file number counts in the function's compile unit: cutab maps it to an offset
	 * in filetab (~0: none). */
	uint64_t slot = (uint64_t)t->cutab + 4 * ((uint64_t)cu + (uint64_t)fno);
	if (slot > t->size || t->size - slot < 4)
		return false;
	uint32_t foff = load_u32(t->data + slot, t->big_endian);
	const char *name = foff == UINT32_MAX ? NULL : str_at(t, (uint64_t)t->filetab + foff);
	if (!name)
		return false;
	*file = name;
	*line = (uint32_t)ln;
	return true;
}
