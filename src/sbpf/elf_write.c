/*
 * A linked sBPF program written as the deployable ELF agave's loader reads.
 *
 * v3 (static): the reference's SIMD-0189 layout, as tally's load_strict checks it: the file
 * header, a read-only program header at 0 (left out when there is no rodata) and the
 * bytecode's at 0x1_0000_0000, their bytes back to back, no relocations.
 *
 * v0 (dynamic): what LLD writes for sBPF and the lenient loader reads: every allocated
 * section at a file address equal to its file offset (the loader maps the file at
 * 0x1_0000_0000); .text, .rodata, then .dynsym, .dynstr, .rel.dyn and .dynamic, which the
 * loader finds through PT_DYNAMIC (DT_SYMTAB, DT_REL, DT_RELSZ, DT_RELENT); sections in file
 * order, as the loader requires.
 *
 * Both then carry, for tools and profiles, the objects' .debug_* sections, .symtab with
 * the function names (at their file addresses), .strtab and .shstrtab.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "sbpf/link_internal.h"

/* The ELF64 records' sizes as ints, for the layout's arithmetic. */
enum {
	EHDR = sizeof(Elf64_Ehdr), PHDR = sizeof(Elf64_Phdr), SHDR = sizeof(Elf64_Shdr),
	SYM = sizeof(Elf64_Sym), REL = sizeof(Elf64_Rel), DYN = sizeof(Elf64_Dyn),
	MAX_SECTIONS = 48, MAX_DYN = 8,
};

static uint64_t up8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

struct osec {
	const char *name;
	uint32_t type;
	uint64_t flags, addr, off, size;
	uint32_t link, info;
	uint64_t align, entsize;
	const uint8_t *data; /* copied to off; NULL: written in place afterwards */
	uint32_t name_off;   /* in .shstrtab */
};

/* Tables built before the layout, and the plan of the file. */
struct out {
	const struct sbpf_program *p;
	const struct sbpf_linked *l;
	bool v0;
	uint64_t text_addr; /* the file address of text[0] */
	struct osec sec[MAX_SECTIONS + 1];
	unsigned nsec;      /* [0] is the null section */
	uint8_t *symtab, *strtab, *dynsym, *dynstr, *reldyn, *shstrtab;
	uint64_t symtab_len, strtab_len, dynsym_len, dynstr_len, reldyn_len, shstrtab_len;
	unsigned ndyn;      /* .dynamic entries */
	uint64_t sh_off, size;
};

static struct osec *add(struct out *o, const char *name, uint32_t type, uint64_t flags,
			const uint8_t *data, uint64_t size, uint64_t align)
{
	struct osec *s = &o->sec[++o->nsec];
	*s = (struct osec){ .name = name, .type = type, .flags = flags, .size = size,
			    .align = align, .data = data };
	return s;
}

static unsigned index_of(const struct out *o, const char *name)
{
	for (unsigned i = 1; i <= o->nsec; i++)
		if (!strcmp(o->sec[i].name, name))
			return i;
	return 0;
}

/* A string table of names, each NUL-terminated after a leading NUL. */
static uint8_t *strings(const char *const *names, size_t n, uint32_t *offs, uint64_t *len)
{
	uint64_t size = 1;
	for (size_t i = 0; i < n; i++)
		size += strlen(names[i]) + 1;
	uint8_t *b = calloc(size, 1);
	if (!b)
		return NULL;
	uint64_t at = 1;
	for (size_t i = 0; i < n; i++) {
		size_t len_i = strlen(names[i]);
		memcpy(b + at, names[i], len_i + 1);
		offs[i] = (uint32_t)at;
		at += len_i + 1;
	}
	*len = size;
	return b;
}

static void put_sym(uint8_t *at, uint32_t name, uint8_t info, uint16_t shndx, uint64_t value,
		    uint64_t size)
{
	store_u32(at, name, false);
	store_u32(at + 4, info | (uint32_t)shndx << 16, false); /* st_info, st_other 0, st_shndx */
	store_u64(at + 8, value, false);
	store_u64(at + 16, size, false);
}

/* .symtab and .strtab: one global function symbol per name the program has. */
static int build_symtab(struct out *o, uint16_t text_idx)
{
	const struct sbpf_program *p = o->p;
	const char **names = calloc(p->nsyms + 1, sizeof(*names));
	uint32_t *offs = calloc(p->nsyms + 1, sizeof(*offs));
	o->symtab_len = SYM * (uint64_t)(p->nsyms + 1);
	o->symtab = calloc(o->symtab_len, 1);
	for (size_t i = 0; names && i < p->nsyms; i++)
		names[i] = p->syms[i].name;
	if (names && offs && o->symtab)
		o->strtab = strings(names, p->nsyms, offs, &o->strtab_len);
	for (size_t i = 0; o->strtab && i < p->nsyms; i++) {
		const struct sbpf_symbol *s = &p->syms[i];
		put_sym(o->symtab + SYM * (i + 1), offs[i], STB_GLOBAL << 4 | STT_FUNC, text_idx,
			o->text_addr + s->pc * 8, (s->end_pc - s->pc) * 8);
	}
	free(names);
	free(offs);
	return o->strtab ? 0 : -ENOMEM;
}

/* .dynsym, .dynstr and .rel.dyn of a v0 file. */
static int build_dynamic(struct out *o, uint16_t text_idx, uint16_t ro_idx)
{
	const struct sbpf_linked *l = o->l;
	size_t n = l->dynsyms.n;
	const char **names = calloc(n + 1, sizeof(*names));
	uint32_t *offs = calloc(n + 1, sizeof(*offs));
	o->dynsym_len = SYM * (uint64_t)(n + 1);
	o->dynsym = calloc(o->dynsym_len, 1);
	o->reldyn_len = REL * (uint64_t)l->rels.n;
	o->reldyn = calloc(o->reldyn_len ? o->reldyn_len : 1, 1);
	for (size_t i = 0; names && i < n; i++)
		names[i] = l->dynsyms.v[i].name;
	if (names && offs && o->dynsym && o->reldyn)
		o->dynstr = strings(names, n, offs, &o->dynstr_len);
	for (size_t i = 0; o->dynstr && i < n; i++) {
		const struct sbpf_dynsym *d = &l->dynsyms.v[i];
		uint16_t shndx = d->place == SBPF_DYN_TEXT ? text_idx
				 : d->place == SBPF_DYN_RODATA ? ro_idx
							       : 0;
		put_sym(o->dynsym + SYM * (i + 1), offs[i], (uint8_t)(STB_GLOBAL << 4 | d->type),
			shndx, d->addr, d->size);
	}
	for (size_t i = 0; o->dynstr && i < l->rels.n; i++) {
		const struct sbpf_dynrel *r = &l->rels.v[i];
		store_u64(o->reldyn + REL * i, r->addr, false);
		store_u64(o->reldyn + REL * i + 8, (uint64_t)r->sym << 32 | r->type, false);
	}
	free(names);
	free(offs);
	return o->dynstr ? 0 : -ENOMEM;
}

static int build_shstrtab(struct out *o)
{
	const char *names[MAX_SECTIONS + 1];
	uint32_t offs[MAX_SECTIONS + 1];
	for (unsigned i = 1; i <= o->nsec; i++)
		names[i - 1] = o->sec[i].name;
	names[o->nsec] = ".shstrtab";
	o->shstrtab = strings(names, o->nsec + 1, offs, &o->shstrtab_len);
	if (!o->shstrtab)
		return -ENOMEM;
	for (unsigned i = 1; i <= o->nsec; i++)
		o->sec[i].name_off = offs[i - 1];
	uint32_t own = offs[o->nsec];
	add(o, ".shstrtab", SHT_STRTAB, 0, o->shstrtab, o->shstrtab_len, 1)->name_off = own;
	return 0;
}

/* Places the sections from *at on in order; allocated ones at their file addresses. */
static void lay_out(struct out *o, unsigned from, uint64_t at)
{
	for (unsigned i = from; i <= o->nsec; i++) {
		struct osec *s = &o->sec[i];
		if (!s->off) {
			s->off = s->align > 1 ? (at + s->align - 1) / s->align * s->align : at;
			if (s->flags & SHF_ALLOC)
				s->addr = s->off;
		}
		at = s->off + s->size;
	}
	o->sh_off = up8(at);
	o->size = o->sh_off + SHDR * (uint64_t)(o->nsec + 1);
}

static void put_phdr(uint8_t *at, uint32_t type, uint32_t flags, uint64_t off, uint64_t vaddr,
		     uint64_t len)
{
	store_u32(at, type, false);
	store_u32(at + 4, flags, false);
	store_u64(at + 8, off, false);
	store_u64(at + 16, vaddr, false);
	store_u64(at + 24, vaddr, false);
	store_u64(at + 32, len, false);
	store_u64(at + 40, len, false);
	store_u64(at + 48, 8, false);
}

static void put_shdr(uint8_t *at, const struct osec *s)
{
	store_u32(at, s->name_off, false);
	store_u32(at + 4, s->type, false);
	store_u64(at + 8, s->flags, false);
	store_u64(at + 16, s->addr, false);
	store_u64(at + 24, s->off, false);
	store_u64(at + 32, s->size, false);
	store_u32(at + 40, s->link, false);
	store_u32(at + 44, s->info, false);
	store_u64(at + 48, s->align, false);
	store_u64(at + 56, s->entsize, false);
}

static void put_header(uint8_t *b, const struct out *o, unsigned nph)
{
	memcpy(b, "\x7f" "ELF\x02\x01\x01", 7);
	store_u32(b + 16, ET_DYN | EM_BPF << 16, false);
	store_u32(b + 20, 1, false);
	store_u64(b + 24, o->text_addr + o->p->entry_pc * 8, false);
	store_u64(b + 32, EHDR, false);
	store_u64(b + 40, o->sh_off, false);
	store_u32(b + 48, o->v0 ? 0 : (uint32_t)o->p->version, false);
	store_u32(b + 52, EHDR | PHDR << 16, false);
	store_u32(b + 56, nph | SHDR << 16, false);
	store_u32(b + 60, (o->nsec + 1) | o->nsec << 16, false);
}

/* The v3 plan: rodata and text at fixed offsets, the rest after them. */
static int plan_v3(struct out *o, unsigned *nph)
{
	const struct sbpf_program *p = o->p;
	*nph = p->ro_len ? 2 : 1;
	uint64_t ro_off = EHDR + PHDR * (uint64_t)*nph;
	struct osec *text = add(o, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, p->text,
				p->text_len, 8);
	text->addr = SBPF_MM_BYTECODE;
	text->off = ro_off + up8(p->ro_len);
	if (p->ro_len) {
		struct osec *ro = add(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, p->ro, p->ro_len, 8);
		ro->addr = SBPF_MM_RODATA;
		ro->off = ro_off;
	}
	return 0;
}

/* The v0 plan: text, rodata and the dynamic tables at their file addresses. */
static int plan_v0(struct out *o, unsigned *nph)
{
	const struct sbpf_program *p = o->p;
	*nph = SBPF_LINK_V0_PHDRS;
	struct osec *text = add(o, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, p->text,
				p->text_len, 8);
	text->off = text->addr = SBPF_LINK_V0_TEXT;
	if (p->ro_len) {
		struct osec *ro = add(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, p->ro, p->ro_len, 8);
		ro->off = ro->addr = p->ro_vaddr - SBPF_MM_BYTECODE;
	}
	int rc = build_dynamic(o, 1, p->ro_len ? 2 : 0);
	if (rc)
		return rc;
	unsigned dynsym = o->nsec + 1;
	struct osec *s = add(o, ".dynsym", SHT_DYNSYM, SHF_ALLOC, o->dynsym, o->dynsym_len, 8);
	s->link = dynsym + 1;
	s->info = 1;
	s->entsize = SYM;
	add(o, ".dynstr", SHT_STRTAB, SHF_ALLOC, o->dynstr, o->dynstr_len, 1);
	o->ndyn = 5; /* DT_SYMTAB, DT_STRTAB, DT_STRSZ, DT_SYMENT, DT_NULL */
	if (o->l->rels.n) {
		s = add(o, ".rel.dyn", SHT_REL, SHF_ALLOC, o->reldyn, o->reldyn_len, 8);
		s->link = dynsym;
		s->entsize = REL;
		o->ndyn += 3;
	}
	s = add(o, ".dynamic", SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, NULL, DYN * (uint64_t)o->ndyn,
		8);
	s->link = dynsym + 1;
	s->entsize = DYN;
	return 0;
}

static void put_dynamic(uint8_t *b, const struct out *o)
{
	const struct osec *dyn = &o->sec[index_of(o, ".dynamic")];
	const struct osec *sym = &o->sec[index_of(o, ".dynsym")];
	const struct osec *str = &o->sec[index_of(o, ".dynstr")];
	unsigned rel = index_of(o, ".rel.dyn");
	uint64_t v[MAX_DYN * 2] = { DT_SYMTAB, sym->addr, DT_STRTAB, str->addr, DT_STRSZ,
				    str->size, DT_SYMENT, SYM };
	unsigned n = 8;
	if (rel) {
		uint64_t r[] = { DT_REL, o->sec[rel].addr, DT_RELSZ, o->sec[rel].size, DT_RELENT,
				 REL };
		memcpy(v + n, r, sizeof(r));
		n += 6;
	}
	v[n++] = DT_NULL;
	v[n++] = 0;
	for (unsigned i = 0; i < n; i++)
		store_u64(b + dyn->off + 8 * i, v[i], false);
}

static void put_program_headers(uint8_t *b, const struct out *o, unsigned nph)
{
	const struct sbpf_program *p = o->p;
	uint8_t *ph = b + EHDR;
	if (!o->v0) {
		if (p->ro_len)
			put_phdr(ph, PT_LOAD, PF_R, o->sec[2].off, SBPF_MM_RODATA, up8(p->ro_len));
		put_phdr(ph + PHDR * (nph - 1), PT_LOAD, PF_X, o->sec[1].off, SBPF_MM_BYTECODE,
			 p->text_len);
		return;
	}
	const struct osec *text = &o->sec[1], *dyn = &o->sec[index_of(o, ".dynamic")];
	const struct osec *dynsym = &o->sec[index_of(o, ".dynsym")];
	const struct osec *last_ro = p->ro_len ? &o->sec[2] : text;
	put_phdr(ph, PT_LOAD, PF_R | PF_X, text->off, text->addr,
		 last_ro->off + last_ro->size - text->off);
	put_phdr(ph + PHDR, PT_LOAD, PF_R | PF_W, dynsym->off, dynsym->addr,
		 dyn->off + dyn->size - dynsym->off);
	put_phdr(ph + 2 * PHDR, PT_DYNAMIC, PF_R | PF_W, dyn->off, dyn->addr, dyn->size);
}

static void free_tables(struct out *o)
{
	free(o->symtab);
	free(o->strtab);
	free(o->dynsym);
	free(o->dynstr);
	free(o->reldyn);
	free(o->shstrtab);
}

static int plan(struct out *o, unsigned *nph)
{
	int rc = o->v0 ? plan_v0(o, nph) : plan_v3(o, nph);
	if (rc)
		return rc;
	if (o->nsec + o->l->debug.n + 4 > MAX_SECTIONS)
		return err_set(-EINVAL, "%s: more debug sections than a file of tally's takes",
			       o->p->name);
	unsigned first = o->nsec + 1;
	for (size_t i = 0; i < o->l->debug.n; i++) {
		const struct sbpf_debug_section *d = &o->l->debug.v[i];
		add(o, d->name, SHT_PROGBITS, 0, d->bytes, d->size, 1);
	}
	if ((rc = build_symtab(o, 1)))
		return rc;
	unsigned symtab = o->nsec + 1;
	struct osec *s = add(o, ".symtab", SHT_SYMTAB, 0, o->symtab, o->symtab_len, 8);
	s->link = symtab + 1;
	s->info = 1;
	s->entsize = SYM;
	add(o, ".strtab", SHT_STRTAB, 0, o->strtab, o->strtab_len, 1);
	if ((rc = build_shstrtab(o)))
		return rc;
	uint64_t at = o->v0 ? SBPF_LINK_V0_TEXT : EHDR + PHDR * (uint64_t)*nph;
	for (unsigned i = 1; i < first; i++)
		if (o->sec[i].off + o->sec[i].size > at)
			at = o->sec[i].off + o->sec[i].size;
	lay_out(o, o->v0 ? 1 : first, at);
	return 0;
}

int sbpf_link_write(const struct sbpf_program *p, const struct sbpf_linked *l, uint8_t **out,
		    size_t *size)
{
	*out = NULL;
	struct out o = { .p = p, .l = l, .v0 = !sbpf_static_syscalls(p->version) };
	if (p->version != SBPF_V0 && p->version != SBPF_V3)
		return err_set(-EINVAL, "%s: only sBPF v0 and v3 programs are written", p->name);
	o.text_addr = o.v0 ? SBPF_LINK_V0_TEXT : SBPF_MM_BYTECODE;
	unsigned nph = 0;
	int rc = plan(&o, &nph);
	uint8_t *b = rc ? NULL : calloc(o.size, 1);
	if (!rc && !b)
		rc = -ENOMEM;
	if (rc) {
		free_tables(&o);
		return rc == -ENOMEM ? err_set(rc, "%s: out of memory", p->name) : rc;
	}
	put_header(b, &o, nph);
	put_program_headers(b, &o, nph);
	for (unsigned i = 1; i <= o.nsec; i++) {
		if (o.sec[i].data && o.sec[i].size)
			memcpy(b + o.sec[i].off, o.sec[i].data, o.sec[i].size);
		put_shdr(b + o.sh_off + SHDR * i, &o.sec[i]);
	}
	if (o.v0)
		put_dynamic(b, &o);
	free_tables(&o);
	*out = b;
	*size = o.size;
	return 0;
}
