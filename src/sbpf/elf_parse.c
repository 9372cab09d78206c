/*
 * The lenient sBPF ELF parse: header fields, table placement (no overlap, in order, 8-byte
 * aligned as the reference requires of its in-place casts), section names of at most 16
 * bytes, and the dynamic table (DT_REL, DT_SYMTAB) found through PT_DYNAMIC or, for old
 * toolchains, SHT_DYNAMIC. Checks run in the reference's order so the first failure has
 * the same name.
 */
#include "sbpf/elf_parse.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"



struct range {
	uint64_t start, end;
};

enum sbpf_elf_err sbpf_elf_read_ehdr(const uint8_t *b, size_t size, struct sbpf_elf_ehdr *eh)
{
	struct cur c = cur_make(b, size, false);
	const uint8_t *id = cur_bytes(&c, 16);
	if (!id)
		return SBPF_ELF_OUT_OF_BOUNDS;
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
	return cur_ok(&c) ? SBPF_ELF_OK : SBPF_ELF_OUT_OF_BOUNDS;
}

enum sbpf_elf_err sbpf_elf_read_phdr(const uint8_t *b, size_t size, uint64_t off,
				     struct sbpf_elf_phdr *ph)
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
	return cur_ok(&c) ? SBPF_ELF_OK : SBPF_ELF_OUT_OF_BOUNDS;
}

enum sbpf_elf_err sbpf_elf_read_shdr(const uint8_t *b, size_t size, uint64_t off,
				     struct sbpf_elf_shdr *sh)
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
	return cur_ok(&c) ? SBPF_ELF_OK : SBPF_ELF_OUT_OF_BOUNDS;
}

enum sbpf_elf_err sbpf_elf_read_sym(const uint8_t *b, size_t size, uint64_t off,
				    struct sbpf_elf_sym *s)
{
	struct cur c = cur_make(b, size, false);
	cur_seek(&c, off);
	s->name = cur_u32(&c);
	s->info = cur_u8(&c);
	s->other = cur_u8(&c);
	s->shndx = cur_u16(&c);
	s->value = cur_u64(&c);
	s->size = cur_u64(&c);
	return cur_ok(&c) ? SBPF_ELF_OK : SBPF_ELF_OUT_OF_BOUNDS;
}

static bool overlap(struct range a, struct range b)
{
	return !(a.end <= b.start || b.end <= a.start);
}

/* The reference's slice_from_bytes: whole elements, in bounds, 8-byte aligned. */
static enum sbpf_elf_err check_slice(size_t size, struct range r, uint64_t elem)
{
	if (r.start > r.end || (r.end - r.start) % elem)
		return r.start > r.end ? SBPF_ELF_OUT_OF_BOUNDS : SBPF_ELF_INVALID_SIZE;
	if (r.end > size)
		return SBPF_ELF_OUT_OF_BOUNDS;
	if (r.start % 8)
		return SBPF_ELF_INVALID_ALIGNMENT;
	return SBPF_ELF_OK;
}

/* start + n*elem as a range, failing on overflow like the reference's checked math. */
static enum sbpf_elf_err table_range(uint64_t start, uint64_t n, uint64_t elem, struct range *r)
{
	uint64_t len = n * elem;
	if (start + len < start)
		return SBPF_ELF_OUT_OF_BOUNDS;
	r->start = start;
	r->end = start + len;
	return SBPF_ELF_OK;
}

static enum sbpf_elf_err read_tables(struct sbpf_elf *e, struct range fh, struct range *ph_r,
				     struct range *sh_r)
{
	enum sbpf_elf_err err = table_range(e->eh.phoff, e->eh.phnum, sizeof(Elf64_Phdr), ph_r);
	if (err)
		return err;
	if (overlap(fh, *ph_r))
		return SBPF_ELF_OVERLAP;
	if ((err = check_slice(e->size, *ph_r, sizeof(Elf64_Phdr))))
		return err;
	if ((err = table_range(e->eh.shoff, e->eh.shnum, sizeof(Elf64_Shdr), sh_r)))
		return err;
	if (overlap(fh, *sh_r) || overlap(*ph_r, *sh_r))
		return SBPF_ELF_OVERLAP;
	if ((err = check_slice(e->size, *sh_r, sizeof(Elf64_Shdr))))
		return err;
	e->nph = e->eh.phnum;
	e->nsh = e->eh.shnum;
	e->ph = calloc(e->nph ? e->nph : 1, sizeof(*e->ph));
	e->sh = calloc(e->nsh ? e->nsh : 1, sizeof(*e->sh));
	if (!e->ph || !e->sh)
		return SBPF_ELF_OUT_OF_BOUNDS;
	for (size_t i = 0; i < e->nph; i++)
		if ((err = sbpf_elf_read_phdr(e->bytes, e->size,
					      ph_r->start + i * sizeof(Elf64_Phdr), &e->ph[i])))
			return err;
	for (size_t i = 0; i < e->nsh; i++)
		if ((err = sbpf_elf_read_shdr(e->bytes, e->size,
					      sh_r->start + i * sizeof(Elf64_Shdr), &e->sh[i])))
			return err;
	return SBPF_ELF_OK;
}

static enum sbpf_elf_err check_layout(struct sbpf_elf *e, struct range fh, struct range ph_r,
				      struct range sh_r)
{
	if (!e->nsh || e->sh[0].type != SHT_NULL)
		return SBPF_ELF_INVALID_SECTION_HEADER;
	uint64_t vaddr = 0;
	for (size_t i = 0; i < e->nph; i++) {
		const struct sbpf_elf_phdr *p = &e->ph[i];
		if (p->type != PT_LOAD)
			continue;
		if (p->vaddr < vaddr)
			return SBPF_ELF_INVALID_PROGRAM_HEADER;
		if (p->offset + p->filesz < p->offset || p->offset + p->filesz > e->size)
			return SBPF_ELF_OUT_OF_BOUNDS;
		vaddr = p->vaddr;
	}
	uint64_t offset = 0;
	for (size_t i = 0; i < e->nsh; i++) {
		const struct sbpf_elf_shdr *s = &e->sh[i];
		if (s->type == SHT_NOBITS)
			continue;
		struct range r = { s->offset, s->offset + s->size };
		if (r.end < r.start)
			return SBPF_ELF_OUT_OF_BOUNDS;
		if (overlap(r, fh) || overlap(r, ph_r) || overlap(r, sh_r))
			return SBPF_ELF_OVERLAP;
		if (r.start < offset)
			return SBPF_ELF_SECTION_NOT_IN_ORDER;
		offset = r.end;
		if (offset > e->size)
			return SBPF_ELF_OUT_OF_BOUNDS;
	}
	return SBPF_ELF_OK;
}

enum sbpf_elf_err sbpf_elf_string(struct sbpf_elf *e, const struct sbpf_elf_shdr *strtab,
				  uint64_t off, size_t max, const char **s, size_t *len)
{
	if (strtab->type != SHT_STRTAB)
		return SBPF_ELF_INVALID_SECTION_HEADER;
	uint64_t start = strtab->offset + off;
	uint64_t sec_end = strtab->offset + strtab->size;
	if (start < off || sec_end < strtab->offset || start + max < start)
		return SBPF_ELF_OUT_OF_BOUNDS;
	uint64_t end = sec_end < start + max ? sec_end : start + max;
	if (start > end || end > e->size)
		return SBPF_ELF_OUT_OF_BOUNDS;
	const uint8_t *p = e->bytes + start;
	const uint8_t *nul = memchr(p, 0, end - start);
	if (!nul) {
		size_t n = end - start;
		if (n > SBPF_ELF_DEBUG_SYMBOL_NAME_MAX)
			n = SBPF_ELF_DEBUG_SYMBOL_NAME_MAX;
		memcpy(e->too_long, p, n);
		e->too_long[n] = 0;
		e->too_long_max = max;
		return SBPF_ELF_STRING_TOO_LONG;
	}
	*s = (const char *)p;
	*len = (size_t)(nul - p);
	return SBPF_ELF_OK;
}

enum sbpf_elf_err sbpf_elf_section_name(struct sbpf_elf *e, const struct sbpf_elf_shdr *sh,
					const char **s, size_t *len)
{
	if (!e->shstrtab)
		return SBPF_ELF_NO_SECTION_NAME_STRING_TABLE;
	return sbpf_elf_string(e, e->shstrtab, sh->name, SBPF_ELF_SECTION_NAME_MAX, s, len);
}

bool sbpf_elf_section_is(struct sbpf_elf *e, const struct sbpf_elf_shdr *sh, const char *name)
{
	const char *s;
	size_t len;
	return sbpf_elf_section_name(e, sh, &s, &len) == SBPF_ELF_OK && !strcmp(s, name);
}

/* Remembers .symtab, .strtab and .dynstr; every section name must be readable. */
static enum sbpf_elf_err parse_sections(struct sbpf_elf *e)
{
	if (!e->shstrtab)
		return SBPF_ELF_NO_SECTION_NAME_STRING_TABLE;
	for (size_t i = 0; i < e->nsh; i++) {
		const char *name;
		size_t len;
		enum sbpf_elf_err err = sbpf_elf_section_name(e, &e->sh[i], &name, &len);
		if (err)
			return err;
		const struct sbpf_elf_shdr **slot = NULL;
		if (!strcmp(name, ".symtab"))
			slot = &e->symtab;
		else if (!strcmp(name, ".strtab"))
			slot = &e->strtab;
		else if (!strcmp(name, ".dynstr"))
			slot = &e->dynstr;
		if (slot) {
			if (*slot)
				return SBPF_ELF_INVALID_SECTION_HEADER;
			*slot = &e->sh[i];
		}
	}
	return SBPF_ELF_OK;
}

static bool vaddr_to_offset(const struct sbpf_elf *e, uint64_t vaddr, uint64_t *off,
			    enum sbpf_elf_err *err)
{
	for (size_t i = 0; i < e->nph; i++) {
		const struct sbpf_elf_phdr *p = &e->ph[i];
		if (p->vaddr + p->memsz < p->vaddr) {
			*err = SBPF_ELF_OUT_OF_BOUNDS;
			return false;
		}
		if (vaddr >= p->vaddr && vaddr < p->vaddr + p->memsz) {
			uint64_t o = vaddr - p->vaddr + p->offset;
			if (o < p->offset) {
				*err = SBPF_ELF_OUT_OF_BOUNDS;
				return false;
			}
			*off = o;
			return true;
		}
	}
	return false;
}

static enum sbpf_elf_err parse_relocations(struct sbpf_elf *e)
{
	uint64_t vaddr = e->dyn[DT_REL];
	if (!vaddr)
		return SBPF_ELF_OK;
	if (e->dyn[DT_RELENT] != sizeof(Elf64_Rel) || !e->dyn[DT_RELSZ])
		return SBPF_ELF_INVALID_DYNAMIC_SECTION_TABLE;
	uint64_t off = 0;
	enum sbpf_elf_err err = SBPF_ELF_OK;
	if (!vaddr_to_offset(e, vaddr, &off, &err)) {
		if (err)
			return err;
		/* Toolchains up to rust-bpf-sysroot v0.13 put DT_REL outside every segment:
		 * the reference falls back to the section at that address. */
		size_t i = 0;
		while (i < e->nsh && e->sh[i].addr != vaddr)
			i++;
		if (i == e->nsh)
			return SBPF_ELF_INVALID_DYNAMIC_SECTION_TABLE;
		off = e->sh[i].offset;
	}
	struct range r = { off, off + e->dyn[DT_RELSZ] };
	if (r.end < r.start)
		return SBPF_ELF_OUT_OF_BOUNDS;
	if (check_slice(e->size, r, sizeof(Elf64_Rel)))
		return SBPF_ELF_INVALID_DYNAMIC_SECTION_TABLE;
	e->has_rel = true;
	e->rel_off = off;
	e->rel_count = (r.end - r.start) / sizeof(Elf64_Rel);
	return SBPF_ELF_OK;
}

static enum sbpf_elf_err parse_dynsym(struct sbpf_elf *e)
{
	uint64_t vaddr = e->dyn[DT_SYMTAB];
	if (!vaddr)
		return SBPF_ELF_OK;
	size_t i = 0;
	while (i < e->nsh && e->sh[i].addr != vaddr)
		i++;
	if (i == e->nsh)
		return SBPF_ELF_INVALID_DYNAMIC_SECTION_TABLE;
	const struct sbpf_elf_shdr *s = &e->sh[i];
	if (s->type != SHT_SYMTAB && s->type != SHT_DYNSYM)
		return SBPF_ELF_INVALID_SECTION_HEADER;
	struct range r = { s->offset, s->offset + s->size };
	if (r.end < r.start)
		return SBPF_ELF_OUT_OF_BOUNDS;
	enum sbpf_elf_err err = check_slice(e->size, r, sizeof(Elf64_Sym));
	if (err)
		return err;
	e->has_dynsym = true;
	e->dynsym_off = r.start;
	e->dynsym_count = (r.end - r.start) / sizeof(Elf64_Sym);
	return SBPF_ELF_OK;
}

/* Reads the dynamic entries at r into e->dyn; false when r is not a valid table. */
static bool read_dynamic(struct sbpf_elf *e, struct range r)
{
	if (r.end < r.start || check_slice(e->size, r, sizeof(Elf64_Dyn)))
		return false;
	struct cur c = cur_make(e->bytes, e->size, false);
	cur_seek(&c, r.start);
	for (uint64_t n = (r.end - r.start) / sizeof(Elf64_Dyn); n; n--) {
		uint64_t tag = cur_u64(&c), val = cur_u64(&c);
		if (tag == DT_NULL)
			break;
		if (tag < SBPF_ELF_DT_NUM)
			e->dyn[tag] = val;
	}
	return cur_ok(&c);
}

static enum sbpf_elf_err parse_dynamic(struct sbpf_elf *e)
{
	bool found = false;
	for (size_t i = 0; i < e->nph && !found; i++) {
		if (e->ph[i].type != PT_DYNAMIC)
			continue;
		struct range r = { e->ph[i].offset, e->ph[i].offset + e->ph[i].filesz };
		found = read_dynamic(e, r);
		break;
	}
	if (!found) {
		memset(e->dyn, 0, sizeof(e->dyn));
		for (size_t i = 0; i < e->nsh; i++) {
			if (e->sh[i].type != SHT_DYNAMIC)
				continue;
			struct range r = { e->sh[i].offset, e->sh[i].offset + e->sh[i].size };
			if (!read_dynamic(e, r))
				return SBPF_ELF_INVALID_DYNAMIC_SECTION_TABLE;
			found = true;
			break;
		}
	}
	if (!found)
		return SBPF_ELF_OK;
	enum sbpf_elf_err err = parse_relocations(e);
	return err ? err : parse_dynsym(e);
}

enum sbpf_elf_err sbpf_elf_parse(const uint8_t *b, size_t size, struct sbpf_elf *e)
{
	memset(e, 0, sizeof(*e));
	e->bytes = b;
	e->size = size;
	enum sbpf_elf_err err = sbpf_elf_read_ehdr(b, size, &e->eh);
	if (err)
		return err;
	const struct sbpf_elf_ehdr *h = &e->eh;
	if (memcmp(h->ident, ELFMAG, SELFMAG) || h->ident[EI_CLASS] != ELFCLASS64 ||
	    h->ident[EI_DATA] != ELFDATA2LSB || h->ident[EI_VERSION] != EV_CURRENT ||
	    h->version != EV_CURRENT || h->ehsize != sizeof(Elf64_Ehdr) ||
	    h->phentsize != sizeof(Elf64_Phdr) || h->shentsize != sizeof(Elf64_Shdr) ||
	    h->shstrndx >= h->shnum)
		return SBPF_ELF_INVALID_FILE_HEADER;
	struct range fh = { 0, sizeof(Elf64_Ehdr) }, ph_r, sh_r;
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

void sbpf_elf_free(struct sbpf_elf *e)
{
	free(e->ph);
	free(e->sh);
	e->ph = NULL;
	e->sh = NULL;
}

static const char *const err_names[] = {
	[SBPF_ELF_OK] = "Ok",
	[SBPF_ELF_INVALID_FILE_HEADER] = "InvalidFileHeader",
	[SBPF_ELF_INVALID_PROGRAM_HEADER] = "InvalidProgramHeader",
	[SBPF_ELF_INVALID_SECTION_HEADER] = "InvalidSectionHeader",
	[SBPF_ELF_STRING_TOO_LONG] = "StringTooLong",
	[SBPF_ELF_OUT_OF_BOUNDS] = "OutOfBounds",
	[SBPF_ELF_INVALID_SIZE] = "InvalidSize",
	[SBPF_ELF_OVERLAP] = "Overlap",
	[SBPF_ELF_SECTION_NOT_IN_ORDER] = "SectionNotInOrder",
	[SBPF_ELF_NO_SECTION_NAME_STRING_TABLE] = "NoSectionNameStringTable",
	[SBPF_ELF_INVALID_DYNAMIC_SECTION_TABLE] = "InvalidDynamicSectionTable",
	[SBPF_ELF_INVALID_ALIGNMENT] = "InvalidAlignment",
	[SBPF_ELF_NO_STRING_TABLE] = "NoStringTable",
	[SBPF_ELF_NO_DYNAMIC_STRING_TABLE] = "NoDynamicStringTable",
};

void sbpf_elf_err_format(const struct sbpf_elf *e, enum sbpf_elf_err err, char *buf, size_t size)
{
	if (err == SBPF_ELF_STRING_TOO_LONG) {
		/* Printable bytes as they are, others as \xNN (the reference prints them lossily). */
		char esc[4 * SBPF_ELF_DEBUG_SYMBOL_NAME_MAX + 1];
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
