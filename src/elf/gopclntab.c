/*
 * Go's .gopclntab, read in place. The header (runtime.pcHeader) gives the offsets of the
 * function-name, compile-unit, file and pc-value tables and of the function table, sorted pcs
 * with the offset of each function's _func record. Every offset and count is checked against
 * the section once at open (a count is capped by what the section can hold); per-lookup
 * reads go through a cursor. Pc-value tables are runs of (value delta, pc delta) varint
 * pairs, as debug/gosym's step() decodes them. Inline trees are read from the ELF section
 * that holds them, each entry checked against it.
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
	/* What funcdata values (the inline trees among them) count from: go:func.* from 1.18
	 * on, where they are 32-bit offsets, 0 in 1.16/1.17, where they are pointers. The trees
	 * lie in the section trees_data holds, NULL when it was not found. */
	uint64_t funcdata_base, trees_addr;
	const uint8_t *trees_data;
	size_t trees_size;
};

/* _func's pcdata and funcdata slots of the inline tree (runtime/symtab.go's
 * _PCDATA_InlTreeIndex and _FUNCDATA_InlTree, the same from 1.16 on). */
enum { PCDATA_INLTREE = 2, FUNCDATA_INLTREE = 3 };

static int bad(const char *name, size_t off, const char *what)
{
	return err_set(-EINVAL, "%s: .gopclntab at 0x%zx: %s", name, off, what);
}

static uint64_t load_word(const uint8_t *p, unsigned size, bool big_endian)
{
	return size == 8 ? load_u64(p, big_endian) : load_u32(p, big_endian);
}

static uint64_t word(const struct elf_gopclntab *t, size_t off, unsigned size)
{
	return load_word(t->data + off, size, t->big_endian);
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

/* Sets the section the inline trees lie in to the one holding addr; false when none does. */
static bool set_trees(struct elf_file *f, uint64_t addr, struct elf_gopclntab *t)
{
	struct elf_section *s = elf_section_at(f, addr);
	const uint8_t *data;
	size_t size;
	if (!s || s->type == 8 /* SHT_NOBITS */ || elf_section_data(f, s, &data, &size) ||
	    addr - s->addr >= size) {
		err_clear();
		return false;
	}
	t->trees_addr = s->addr;
	t->trees_data = data;
	t->trees_size = size;
	return true;
}

/* runtime.firstmoduledata starts with a pointer to the table's header, then the slice of its
 * function names; its gofunc field lies 38 words in (Go 1.18's runtime/symtab.go), 40 from
 * 1.20 on (covctrs and ecovctrs came before it). It is in .noptrdata, or in a section of its
 * own, .go.module (Go 1.26's linker). */
static void find_gofunc(struct elf_file *f, uint64_t hdr, struct elf_gopclntab *t)
{
	struct elf_section *md = elf_section_by_name(f, ".go.module");
	if (!md)
		md = elf_section_by_name(f, ".noptrdata");
	const uint8_t *d;
	size_t n;
	if (!md || elf_section_data(f, md, &d, &n)) {
		err_clear();
		return;
	}
	size_t p = t->ptr, at = (t->version == 118 ? 38 : 40) * p;
	for (size_t off = 0; n >= at + p && off <= n - at - p; off += p) {
		if (load_word(d + off, t->ptr, t->big_endian) != hdr ||
		    load_word(d + off + p, t->ptr, t->big_endian) != hdr + t->funcnames)
			continue;
		uint64_t gofunc = load_word(d + off + at, t->ptr, t->big_endian);
		if (set_trees(f, gofunc, t))
			t->funcdata_base = gofunc;
		return;
	}
}

/* Where the inline trees are: from 1.18 on, go:func.* (through the module data); in 1.16 and
 * 1.17 funcdata are pointers, and the linker puts the trees in .rodata. Not found: no
 * inline frames. */
static void find_trees(struct elf_file *f, uint64_t hdr, struct elf_gopclntab *t)
{
	struct elf_section *ro;
	if (t->version >= 118)
		find_gofunc(f, hdr, t);
	else if ((ro = elf_section_by_name(f, ".rodata")))
		set_trees(f, ro->addr, t);
}

/* Where the section's name is gone (renamed, or merged by a linker script), the symbols
 * runtime.pclntab and runtime.epclntab still bound the table: its address and bytes, in
 * the section holding them, or -ENOENT. */
static int by_symbols(struct elf_file *f, uint64_t *addr, const uint8_t **data, size_t *size)
{
	/* Only in a Go binary (what Go's linker always writes): reading every symbol of every
	 * other file opened would cost the rest their time. */
	if (!elf_section_by_name(f, ".go.buildinfo") && !elf_section_by_name(f, ".note.go.buildid"))
		return -ENOENT;
	struct elf_symtab t;
	if (elf_symbols_unsorted(f, ELF_SYMS_SYMTAB_ELSE_DYNSYM, true, &t)) {
		err_clear();
		return -ENOENT;
	}
	uint64_t lo = 0, hi = 0;
	for (size_t i = 0; i < t.n; i++) {
		if (!strcmp(t.syms[i].name, "runtime.pclntab"))
			lo = t.syms[i].addr;
		else if (!strcmp(t.syms[i].name, "runtime.epclntab"))
			hi = t.syms[i].addr;
	}
	elf_symtab_free(&t);
	struct elf_section *s = lo ? elf_section_at(f, lo) : NULL;
	const uint8_t *d;
	size_t n;
	if (!s || hi <= lo || s->type == 8 /* SHT_NOBITS */ || elf_section_data(f, s, &d, &n) ||
	    lo - s->addr > n || hi - lo > n - (lo - s->addr)) {
		err_clear();
		return -ENOENT;
	}
	*addr = lo;
	*data = d + (lo - s->addr);
	*size = (size_t)(hi - lo);
	return 0;
}

int elf_gopclntab_open(struct elf_file *f, struct elf_gopclntab **out)
{
	/* A position-independent build (-buildmode=pie) has it among its relocated data. */
	struct elf_section *s = elf_section_by_name(f, ".gopclntab");
	if (!s)
		s = elf_section_by_name(f, ".data.rel.ro.gopclntab");
	const uint8_t *data;
	size_t size;
	uint64_t addr = s ? s->addr : 0;
	int err = 0;
	if (s && s->type == 8 /* SHT_NOBITS */)
		return -ENOENT;
	if (s)
		err = elf_section_data(f, s, &data, &size);
	else if (by_symbols(f, &addr, &data, &size))
		return -ENOENT;
	if (!err)
		err = elf_gopclntab_open_mem(f->path, data, size, out);
	if (err)
		return err;
	/* A position-independent build leaves textStart to a dynamic relocation (0 in the
	 * file); runtime.text is where .text starts. */
	struct elf_section *text = elf_section_by_name(f, ".text");
	if ((*out)->version >= 118 && !(*out)->text && text)
		(*out)->text = text->addr;
	find_trees(f, addr, *out);
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

bool elf_gopclntab_spdelta(const struct elf_gopclntab *t, const struct elf_gofunc *fn,
			   uint64_t vaddr, int32_t *delta)
{
	if (fn->func_off > t->size || t->size - fn->func_off < t->fbase + 32)
		return false;
	uint32_t pcsp = load_u32(t->data + fn->func_off + t->fbase + 12, t->big_endian);
	return pcvalue(t, fn, pcsp, vaddr, delta);
}

/* fn's inline tree: the pc-value table of tree indexes and the tree's address; false when fn
 * has none (or its record is damaged). After the record's fixed part come its pcdata (32-bit
 * offsets), then its funcdata: 32-bit offsets from 1.18 on (~0 for none), before that
 * pointers (0 for none) at the next pointer-aligned place (the section is aligned). */
static bool inline_tree(const struct elf_gopclntab *t, const struct elf_gofunc *fn,
			uint32_t *index_table, uint64_t *tree)
{
	size_t fixed = t->fbase + 36 + (t->version >= 120 ? 4 : 0);
	if (!t->trees_data || fn->func_off > t->size || t->size - fn->func_off < fixed)
		return false;
	const uint8_t *rec = t->data + fn->func_off;
	uint64_t npcdata = load_u32(rec + t->fbase + 24, t->big_endian), nfuncdata = rec[fixed - 1];
	size_t fsize = t->version >= 118 ? 4 : t->ptr;
	size_t funcdata = fixed + 4 * npcdata, left = t->size - fn->func_off;
	if (fsize == 8 && (fn->func_off + funcdata) % 8)
		funcdata += 4;
	if (npcdata <= PCDATA_INLTREE || nfuncdata <= FUNCDATA_INLTREE || npcdata > left / 4 ||
	    funcdata > left || (left - funcdata) / fsize < nfuncdata)
		return false;
	*index_table = load_u32(rec + fixed + 4 * PCDATA_INLTREE, t->big_endian);
	uint64_t off = load_word(rec + funcdata + fsize * FUNCDATA_INLTREE, (unsigned)fsize,
				 t->big_endian);
	*tree = t->funcdata_base + off;
	return fsize == 4 ? off != UINT32_MAX : off != 0;
}

size_t elf_gopclntab_frames(const struct elf_gopclntab *t, const struct elf_gofunc *fn,
			    uint64_t vaddr, struct elf_goframe *out, size_t max)
{
	/* An entry: 1.16's to 1.19's {parent int16, funcID, _, file, line, func_, parentPc int32},
	 * 1.20's {funcID, _[3], nameOff, parentPc, startLine int32}. */
	size_t esize = t->version >= 120 ? 16 : 20, name_at = t->version >= 120 ? 4 : 12,
	       parent_at = t->version >= 120 ? 8 : 16, n = 0;
	uint32_t index_table;
	uint64_t tree, pc = vaddr;
	bool inlined = inline_tree(t, fn, &index_table, &tree);
	while (inlined && n + 1 < max) {
		int32_t ix;
		if (!pcvalue(t, fn, index_table, pc, &ix) || ix < 0)
			break;
		uint64_t at = tree + (uint64_t)ix * esize;
		if (at < t->trees_addr || t->trees_size < esize ||
		    at - t->trees_addr > t->trees_size - esize)
			break;
		const uint8_t *call = t->trees_data + (at - t->trees_addr);
		uint32_t nameoff = load_u32(call + name_at, t->big_endian);
		out[n] = (struct elf_goframe){ str_at(t, (uint64_t)t->funcnames + nameoff), NULL, 0 };
		elf_gopclntab_line(t, fn, pc, &out[n].file, &out[n].line);
		n++;
		/* The caller's position: an instruction of fn whose position is the call's. */
		uint64_t parent = fn->entry + load_u32(call + parent_at, t->big_endian);
		if (parent >= fn->end)
			break;
		pc = parent;
	}
	out[n] = (struct elf_goframe){ fn->name, NULL, 0 };
	elf_gopclntab_line(t, fn, pc, &out[n].file, &out[n].line);
	return n + 1;
}
