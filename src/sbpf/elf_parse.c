/*
 * The lenient sBPF ELF parse: header fields, table placement (no overlap, in order, 8-byte
 * aligned as the reference requires of its in-place casts), section names of at most 16
 * bytes, and the dynamic table (DT_REL, DT_SYMTAB) found through PT_DYNAMIC or, for old
 * toolchains, SHT_DYNAMIC. Checks run in the reference's order so the first failure has
 * the same name.
 */
#include "sbpf/elf_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"

#define EHDR_SIZE 64u
#define PHDR_SIZE 56u
#define SHDR_SIZE 64u
#define SYM_SIZE 24u
#define REL_SIZE 16u
#define DYN_SIZE 16u

enum {
	PT_LOAD_ = 1, PT_DYNAMIC_ = 2,
	SHT_NULL_ = 0, SHT_SYMTAB_ = 2, SHT_STRTAB_ = 3, SHT_DYNAMIC_ = 6, SHT_NOBITS_ = 8,
	SHT_DYNSYM_ = 11,
	DT_NULL_ = 0, DT_SYMTAB_ = 6, DT_REL_ = 17, DT_RELSZ_ = 18, DT_RELENT_ = 19,
};

struct range {
	uint64_t start, end;
};

enum sx_err sx_read_ehdr(const uint8_t *b, size_t size, struct sx_ehdr *eh)
{
	struct cur c = cur_make(b, size, false);
	const uint8_t *id = cur_bytes(&c, 16);
	if (!id)
		return SX_OUT_OF_BOUNDS;
	memcpy(eh->ident, id, 16);
	eh->type = cur_u16(&c);
	eh->machine = cur_u16(&c);
	eh->version = cur_u32(&c);
	eh->entry = cur_u64(&c);
	eh->phoff = cur_u64(&c);
	eh->shoff = cur_u64(&c);
	eh->flags = cur_u32(&c);
	eh->ehsize = cur_u16(&c);
	eh->phentsize = cur_u16(&c);
	eh->phnum = cur_u16(&c);
	eh->shentsize = cur_u16(&c);
	eh->shnum = cur_u16(&c);
	eh->shstrndx = cur_u16(&c);
	return cur_ok(&c) ? SX_OK : SX_OUT_OF_BOUNDS;
}

enum sx_err sx_read_phdr(const uint8_t *b, size_t size, uint64_t off, struct sx_phdr *ph)
{
	struct cur c = cur_make(b, size, false);
	cur_seek(&c, off);
	ph->type = cur_u32(&c);
	ph->flags = cur_u32(&c);
	ph->offset = cur_u64(&c);
	ph->vaddr = cur_u64(&c);
	ph->paddr = cur_u64(&c);
	ph->filesz = cur_u64(&c);
	ph->memsz = cur_u64(&c);
	ph->align = cur_u64(&c);
	return cur_ok(&c) ? SX_OK : SX_OUT_OF_BOUNDS;
}

enum sx_err sx_read_shdr(const uint8_t *b, size_t size, uint64_t off, struct sx_shdr *sh)
{
	struct cur c = cur_make(b, size, false);
	cur_seek(&c, off);
	sh->name = cur_u32(&c);
	sh->type = cur_u32(&c);
	sh->flags = cur_u64(&c);
	sh->addr = cur_u64(&c);
	sh->offset = cur_u64(&c);
	sh->size = cur_u64(&c);
	sh->link = cur_u32(&c);
	sh->info = cur_u32(&c);
	sh->addralign = cur_u64(&c);
	sh->entsize = cur_u64(&c);
	return cur_ok(&c) ? SX_OK : SX_OUT_OF_BOUNDS;
}

enum sx_err sx_read_sym(const uint8_t *b, size_t size, uint64_t off, struct sx_sym *s)
{
	struct cur c = cur_make(b, size, false);
	cur_seek(&c, off);
	s->name = cur_u32(&c);
	s->info = cur_u8(&c);
	s->other = cur_u8(&c);
	s->shndx = cur_u16(&c);
	s->value = cur_u64(&c);
	s->size = cur_u64(&c);
	return cur_ok(&c) ? SX_OK : SX_OUT_OF_BOUNDS;
}

static bool overlap(struct range a, struct range b)
{
	return !(a.end <= b.start || b.end <= a.start);
}

/* The reference's slice_from_bytes: whole elements, in bounds, 8-byte aligned. */
static enum sx_err check_slice(size_t size, struct range r, uint64_t elem)
{
	if (r.start > r.end || (r.end - r.start) % elem)
		return r.start > r.end ? SX_OUT_OF_BOUNDS : SX_INVALID_SIZE;
	if (r.end > size)
		return SX_OUT_OF_BOUNDS;
	if (r.start % 8)
		return SX_INVALID_ALIGNMENT;
	return SX_OK;
}

/* start + n*elem as a range, failing on overflow like the reference's checked math. */
static enum sx_err table_range(uint64_t start, uint64_t n, uint64_t elem, struct range *r)
{
	uint64_t len = n * elem;
	if (start + len < start)
		return SX_OUT_OF_BOUNDS;
	r->start = start;
	r->end = start + len;
	return SX_OK;
}

static enum sx_err read_tables(struct sx_elf *e, struct range fh, struct range *ph_r,
			       struct range *sh_r)
{
	enum sx_err err = table_range(e->eh.phoff, e->eh.phnum, PHDR_SIZE, ph_r);
	if (err)
		return err;
	if (overlap(fh, *ph_r))
		return SX_OVERLAP;
	if ((err = check_slice(e->size, *ph_r, PHDR_SIZE)))
		return err;
	if ((err = table_range(e->eh.shoff, e->eh.shnum, SHDR_SIZE, sh_r)))
		return err;
	if (overlap(fh, *sh_r) || overlap(*ph_r, *sh_r))
		return SX_OVERLAP;
	if ((err = check_slice(e->size, *sh_r, SHDR_SIZE)))
		return err;
	e->nph = e->eh.phnum;
	e->nsh = e->eh.shnum;
	e->ph = calloc(e->nph ? e->nph : 1, sizeof(*e->ph));
	e->sh = calloc(e->nsh ? e->nsh : 1, sizeof(*e->sh));
	if (!e->ph || !e->sh)
		return SX_OUT_OF_BOUNDS;
	for (size_t i = 0; i < e->nph; i++)
		if ((err = sx_read_phdr(e->bytes, e->size, ph_r->start + i * PHDR_SIZE, &e->ph[i])))
			return err;
	for (size_t i = 0; i < e->nsh; i++)
		if ((err = sx_read_shdr(e->bytes, e->size, sh_r->start + i * SHDR_SIZE, &e->sh[i])))
			return err;
	return SX_OK;
}

static enum sx_err check_layout(struct sx_elf *e, struct range fh, struct range ph_r,
				struct range sh_r)
{
	if (!e->nsh || e->sh[0].type != SHT_NULL_)
		return SX_INVALID_SECTION_HEADER;
	uint64_t vaddr = 0;
	for (size_t i = 0; i < e->nph; i++) {
		const struct sx_phdr *p = &e->ph[i];
		if (p->type != PT_LOAD_)
			continue;
		if (p->vaddr < vaddr)
			return SX_INVALID_PROGRAM_HEADER;
		if (p->offset + p->filesz < p->offset || p->offset + p->filesz > e->size)
			return SX_OUT_OF_BOUNDS;
		vaddr = p->vaddr;
	}
	uint64_t offset = 0;
	for (size_t i = 0; i < e->nsh; i++) {
		const struct sx_shdr *s = &e->sh[i];
		if (s->type == SHT_NOBITS_)
			continue;
		struct range r = { s->offset, s->offset + s->size };
		if (r.end < r.start)
			return SX_OUT_OF_BOUNDS;
		if (overlap(r, fh) || overlap(r, ph_r) || overlap(r, sh_r))
			return SX_OVERLAP;
		if (r.start < offset)
			return SX_SECTION_NOT_IN_ORDER;
		offset = r.end;
		if (offset > e->size)
			return SX_OUT_OF_BOUNDS;
	}
	return SX_OK;
}

enum sx_err sx_string(struct sx_elf *e, const struct sx_shdr *strtab, uint64_t off, size_t max,
		      const char **s, size_t *len)
{
	if (strtab->type != SHT_STRTAB_)
		return SX_INVALID_SECTION_HEADER;
	uint64_t start = strtab->offset + off;
	uint64_t sec_end = strtab->offset + strtab->size;
	if (start < off || sec_end < strtab->offset || start + max < start)
		return SX_OUT_OF_BOUNDS;
	uint64_t end = sec_end < start + max ? sec_end : start + max;
	if (start > end || end > e->size)
		return SX_OUT_OF_BOUNDS;
	const uint8_t *p = e->bytes + start;
	const uint8_t *nul = memchr(p, 0, end - start);
	if (!nul) {
		size_t n = end - start;
		if (n > SX_DEBUG_SYMBOL_NAME_MAX)
			n = SX_DEBUG_SYMBOL_NAME_MAX;
		memcpy(e->too_long, p, n);
		e->too_long[n] = 0;
		e->too_long_max = max;
		return SX_STRING_TOO_LONG;
	}
	*s = (const char *)p;
	*len = (size_t)(nul - p);
	return SX_OK;
}

enum sx_err sx_section_name(struct sx_elf *e, const struct sx_shdr *sh, const char **s,
			    size_t *len)
{
	if (!e->shstrtab)
		return SX_NO_SECTION_NAME_STRING_TABLE;
	return sx_string(e, e->shstrtab, sh->name, SX_SECTION_NAME_MAX, s, len);
}

bool sx_section_is(struct sx_elf *e, const struct sx_shdr *sh, const char *name)
{
	const char *s;
	size_t len;
	return sx_section_name(e, sh, &s, &len) == SX_OK && !strcmp(s, name);
}

/* Remembers .symtab, .strtab and .dynstr; every section name must be readable. */
static enum sx_err parse_sections(struct sx_elf *e)
{
	if (!e->shstrtab)
		return SX_NO_SECTION_NAME_STRING_TABLE;
	for (size_t i = 0; i < e->nsh; i++) {
		const char *name;
		size_t len;
		enum sx_err err = sx_section_name(e, &e->sh[i], &name, &len);
		if (err)
			return err;
		const struct sx_shdr **slot = NULL;
		if (!strcmp(name, ".symtab"))
			slot = &e->symtab;
		else if (!strcmp(name, ".strtab"))
			slot = &e->strtab;
		else if (!strcmp(name, ".dynstr"))
			slot = &e->dynstr;
		if (slot) {
			if (*slot)
				return SX_INVALID_SECTION_HEADER;
			*slot = &e->sh[i];
		}
	}
	return SX_OK;
}

static bool vaddr_to_offset(const struct sx_elf *e, uint64_t vaddr, uint64_t *off,
			    enum sx_err *err)
{
	for (size_t i = 0; i < e->nph; i++) {
		const struct sx_phdr *p = &e->ph[i];
		if (p->vaddr + p->memsz < p->vaddr) {
			*err = SX_OUT_OF_BOUNDS;
			return false;
		}
		if (vaddr >= p->vaddr && vaddr < p->vaddr + p->memsz) {
			uint64_t o = vaddr - p->vaddr + p->offset;
			if (o < p->offset) {
				*err = SX_OUT_OF_BOUNDS;
				return false;
			}
			*off = o;
			return true;
		}
	}
	return false;
}

static enum sx_err parse_relocations(struct sx_elf *e)
{
	uint64_t vaddr = e->dyn[DT_REL_];
	if (!vaddr)
		return SX_OK;
	if (e->dyn[DT_RELENT_] != REL_SIZE || !e->dyn[DT_RELSZ_])
		return SX_INVALID_DYNAMIC_SECTION_TABLE;
	uint64_t off = 0;
	enum sx_err err = SX_OK;
	if (!vaddr_to_offset(e, vaddr, &off, &err)) {
		if (err)
			return err;
		/* Toolchains up to rust-bpf-sysroot v0.13 put DT_REL outside every segment:
		 * the reference falls back to the section at that address. */
		size_t i = 0;
		while (i < e->nsh && e->sh[i].addr != vaddr)
			i++;
		if (i == e->nsh)
			return SX_INVALID_DYNAMIC_SECTION_TABLE;
		off = e->sh[i].offset;
	}
	struct range r = { off, off + e->dyn[DT_RELSZ_] };
	if (r.end < r.start)
		return SX_OUT_OF_BOUNDS;
	if (check_slice(e->size, r, REL_SIZE))
		return SX_INVALID_DYNAMIC_SECTION_TABLE;
	e->has_rel = true;
	e->rel_off = off;
	e->rel_count = (r.end - r.start) / REL_SIZE;
	return SX_OK;
}

static enum sx_err parse_dynsym(struct sx_elf *e)
{
	uint64_t vaddr = e->dyn[DT_SYMTAB_];
	if (!vaddr)
		return SX_OK;
	size_t i = 0;
	while (i < e->nsh && e->sh[i].addr != vaddr)
		i++;
	if (i == e->nsh)
		return SX_INVALID_DYNAMIC_SECTION_TABLE;
	const struct sx_shdr *s = &e->sh[i];
	if (s->type != SHT_SYMTAB_ && s->type != SHT_DYNSYM_)
		return SX_INVALID_SECTION_HEADER;
	struct range r = { s->offset, s->offset + s->size };
	if (r.end < r.start)
		return SX_OUT_OF_BOUNDS;
	enum sx_err err = check_slice(e->size, r, SYM_SIZE);
	if (err)
		return err;
	e->has_dynsym = true;
	e->dynsym_off = r.start;
	e->dynsym_count = (r.end - r.start) / SYM_SIZE;
	return SX_OK;
}

/* Reads the dynamic entries at r into e->dyn; false when r is not a valid table. */
static bool read_dynamic(struct sx_elf *e, struct range r)
{
	if (r.end < r.start || check_slice(e->size, r, DYN_SIZE))
		return false;
	struct cur c = cur_make(e->bytes, e->size, false);
	cur_seek(&c, r.start);
	for (uint64_t n = (r.end - r.start) / DYN_SIZE; n; n--) {
		uint64_t tag = cur_u64(&c), val = cur_u64(&c);
		if (tag == DT_NULL_)
			break;
		if (tag < SX_DT_NUM)
			e->dyn[tag] = val;
	}
	return cur_ok(&c);
}

static enum sx_err parse_dynamic(struct sx_elf *e)
{
	bool found = false;
	for (size_t i = 0; i < e->nph && !found; i++) {
		if (e->ph[i].type != PT_DYNAMIC_)
			continue;
		struct range r = { e->ph[i].offset, e->ph[i].offset + e->ph[i].filesz };
		found = read_dynamic(e, r);
		break;
	}
	if (!found) {
		memset(e->dyn, 0, sizeof(e->dyn));
		for (size_t i = 0; i < e->nsh; i++) {
			if (e->sh[i].type != SHT_DYNAMIC_)
				continue;
			struct range r = { e->sh[i].offset, e->sh[i].offset + e->sh[i].size };
			if (!read_dynamic(e, r))
				return SX_INVALID_DYNAMIC_SECTION_TABLE;
			found = true;
			break;
		}
	}
	if (!found)
		return SX_OK;
	enum sx_err err = parse_relocations(e);
	return err ? err : parse_dynsym(e);
}

enum sx_err sx_parse(const uint8_t *b, size_t size, struct sx_elf *e)
{
	memset(e, 0, sizeof(*e));
	e->bytes = b;
	e->size = size;
	enum sx_err err = sx_read_ehdr(b, size, &e->eh);
	if (err)
		return err;
	const struct sx_ehdr *h = &e->eh;
	if (memcmp(h->ident, "\x7f" "ELF", 4) || h->ident[4] != 2 || h->ident[5] != 1 ||
	    h->ident[6] != 1 || h->version != 1 || h->ehsize != EHDR_SIZE ||
	    h->phentsize != PHDR_SIZE || h->shentsize != SHDR_SIZE || h->shstrndx >= h->shnum)
		return SX_INVALID_FILE_HEADER;
	struct range fh = { 0, EHDR_SIZE }, ph_r, sh_r;
	if ((err = read_tables(e, fh, &ph_r, &sh_r)))
		return err;
	if ((err = check_layout(e, fh, ph_r, sh_r)))
		return err;
	if (h->shstrndx)
		e->shstrtab = &e->sh[h->shstrndx];
	if ((err = parse_sections(e)))
		return err;
	return parse_dynamic(e);
}

void sx_free(struct sx_elf *e)
{
	free(e->ph);
	free(e->sh);
	e->ph = NULL;
	e->sh = NULL;
}

static const char *const err_names[] = {
	[SX_OK] = "Ok",
	[SX_INVALID_FILE_HEADER] = "InvalidFileHeader",
	[SX_INVALID_PROGRAM_HEADER] = "InvalidProgramHeader",
	[SX_INVALID_SECTION_HEADER] = "InvalidSectionHeader",
	[SX_STRING_TOO_LONG] = "StringTooLong",
	[SX_OUT_OF_BOUNDS] = "OutOfBounds",
	[SX_INVALID_SIZE] = "InvalidSize",
	[SX_OVERLAP] = "Overlap",
	[SX_SECTION_NOT_IN_ORDER] = "SectionNotInOrder",
	[SX_NO_SECTION_NAME_STRING_TABLE] = "NoSectionNameStringTable",
	[SX_INVALID_DYNAMIC_SECTION_TABLE] = "InvalidDynamicSectionTable",
	[SX_INVALID_ALIGNMENT] = "InvalidAlignment",
	[SX_NO_STRING_TABLE] = "NoStringTable",
	[SX_NO_DYNAMIC_STRING_TABLE] = "NoDynamicStringTable",
};

void sx_err_format(const struct sx_elf *e, enum sx_err err, char *buf, size_t size)
{
	if (err == SX_STRING_TOO_LONG) {
		/* Printable bytes as they are, others as \xNN (the reference prints them lossily). */
		char esc[4 * SX_DEBUG_SYMBOL_NAME_MAX + 1];
		size_t o = 0;
		for (const unsigned char *p = (const unsigned char *)e->too_long; *p; p++) {
			if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
				esc[o++] = (char)*p;
			else
				o += (size_t)snprintf(esc + o, sizeof(esc) - o, "\\x%02x", *p);
		}
		esc[o] = 0;
		snprintf(buf, size, "StringTooLong(\"%s\", %zu)", esc, e->too_long_max);
		return;
	}
	snprintf(buf, size, "%s", (unsigned)err < sizeof(err_names) / sizeof(err_names[0])
					  ? err_names[err] : "Unknown");
}
