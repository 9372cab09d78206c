/*
 * A loaded sBPF v3 program written as the deployable ELF the strict loader reads (the
 * reference's SIMD-0189 layout, as tally's load_strict checks it): the file header, a
 * read-only program header at 0 (left out when there is no rodata) and the bytecode's at
 * 0x1_0000_0000, their bytes back to back, no relocations. Section headers follow for
 * tools and profiles (.text, .rodata, .symtab with the function names, .strtab,
 * .shstrtab); the loader does not read them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "sbpf/program.h"

enum {
	EHDR = 64, PHDR = 56, SHDR = 64, SYM = 24,
	PT_LOAD_ = 1, PF_X_ = 1, PF_R_ = 4, ET_DYN_ = 3, EM_BPF_ = 247,
	SHT_PROGBITS_ = 1, SHT_SYMTAB_ = 2, SHT_STRTAB_ = 3, SHF_ALLOC_ = 2, SHF_EXECINSTR_ = 4,
	STB_GLOBAL_FUNC = 0x12,
};

static uint64_t up8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

struct layout {
	unsigned nph, nsh;
	uint64_t ro_off, ro_len, text_off, str_off, str_len, shstr_off, sym_off, sh_off, size;
};

static const char shstr[] = "\0.text\0.rodata\0.symtab\0.strtab\0.shstrtab";
enum { N_TEXT = 1, N_RODATA = 7, N_SYMTAB = 15, N_STRTAB = 23, N_SHSTRTAB = 31 };

static struct layout plan(const struct sbpf_program *p)
{
	struct layout l = { .nph = p->ro_len ? 2 : 1, .nsh = p->ro_len ? 6 : 5 };
	l.ro_off = EHDR + PHDR * (uint64_t)l.nph;
	l.ro_len = up8(p->ro_len);
	l.text_off = l.ro_off + l.ro_len;
	l.str_off = l.text_off + p->text_len;
	l.str_len = 1;
	for (size_t i = 0; i < p->nsyms; i++)
		l.str_len += strlen(p->syms[i].name) + 1;
	l.shstr_off = l.str_off + l.str_len;
	l.sym_off = up8(l.shstr_off + sizeof(shstr));
	l.sh_off = l.sym_off + SYM * (uint64_t)(p->nsyms + 1);
	l.size = l.sh_off + SHDR * (uint64_t)l.nsh;
	return l;
}

static void put_phdr(uint8_t *at, uint32_t flags, uint64_t off, uint64_t vaddr, uint64_t len)
{
	store_u32(at, PT_LOAD_, false);
	store_u32(at + 4, flags, false);
	store_u64(at + 8, off, false);
	store_u64(at + 16, vaddr, false);
	store_u64(at + 24, vaddr, false);
	store_u64(at + 32, len, false);
	store_u64(at + 40, len, false);
	store_u64(at + 48, 8, false);
}

struct shdr {
	uint32_t name, type;
	uint64_t flags, addr, off, size;
	uint32_t link, info;
	uint64_t align, entsize;
};

static void put_shdr(uint8_t *at, const struct shdr *s)
{
	store_u32(at, s->name, false);
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

static void put_header(uint8_t *b, const struct sbpf_program *p, const struct layout *l)
{
	memcpy(b, "\x7f" "ELF\x02\x01\x01", 7);
	store_u32(b + 16, ET_DYN_ | EM_BPF_ << 16, false);
	store_u32(b + 20, 1, false);
	store_u64(b + 24, SBPF_MM_BYTECODE + p->entry_pc * 8, false);
	store_u64(b + 32, EHDR, false);
	store_u64(b + 40, l->sh_off, false);
	store_u32(b + 48, (uint32_t)p->version, false);
	store_u32(b + 52, EHDR | PHDR << 16, false);
	store_u32(b + 56, l->nph | SHDR << 16, false);
	store_u32(b + 60, l->nsh | (l->nsh - 1) << 16, false);
	if (p->ro_len)
		put_phdr(b + EHDR, PF_R_, l->ro_off, SBPF_MM_RODATA, l->ro_len);
	put_phdr(b + EHDR + PHDR * (l->nph - 1), PF_X_, l->text_off, SBPF_MM_BYTECODE,
		 p->text_len);
}

/* .strtab and .symtab: one global function symbol per name the program has. */
static void put_symbols(uint8_t *b, const struct sbpf_program *p, const struct layout *l)
{
	uint64_t name = 1;
	for (size_t i = 0; i < p->nsyms; i++) {
		const struct sbpf_symbol *s = &p->syms[i];
		uint8_t *sym = b + l->sym_off + SYM * (i + 1);
		size_t len = strlen(s->name);
		memcpy(b + l->str_off + name, s->name, len + 1);
		store_u32(sym, (uint32_t)name, false);
		sym[4] = STB_GLOBAL_FUNC;
		sym[6] = 1; /* st_shndx: .text */
		store_u64(sym + 8, SBPF_MM_BYTECODE + s->pc * 8, false);
		store_u64(sym + 16, (s->end_pc - s->pc) * 8, false);
		name += len + 1;
	}
}

int sbpf_program_write_v3(const struct sbpf_program *p, uint8_t **out, size_t *size)
{
	*out = NULL;
	if (p->version != SBPF_V3)
		return err_set(-EINVAL, "%s: only sBPF v3 programs are written", p->name);
	struct layout l = plan(p);
	uint8_t *b = calloc(l.size, 1);
	if (!b)
		return err_set(-ENOMEM, "%s: out of memory", p->name);
	put_header(b, p, &l);
	if (p->ro_len)
		memcpy(b + l.ro_off, p->ro, p->ro_len);
	memcpy(b + l.text_off, p->text, p->text_len);
	put_symbols(b, p, &l);
	memcpy(b + l.shstr_off, shstr, sizeof(shstr));
	unsigned symtab = p->ro_len ? 3 : 2;
	const struct shdr sh[] = {
		{ N_TEXT, SHT_PROGBITS_, SHF_ALLOC_ | SHF_EXECINSTR_, SBPF_MM_BYTECODE, l.text_off,
		  p->text_len, 0, 0, 8, 0 },
		{ N_RODATA, SHT_PROGBITS_, SHF_ALLOC_, SBPF_MM_RODATA, l.ro_off, p->ro_len, 0, 0, 8, 0 },
		{ N_SYMTAB, SHT_SYMTAB_, 0, 0, l.sym_off, SYM * (p->nsyms + 1), symtab + 1, 1, 8, SYM },
		{ N_STRTAB, SHT_STRTAB_, 0, 0, l.str_off, l.str_len, 0, 0, 1, 0 },
		{ N_SHSTRTAB, SHT_STRTAB_, 0, 0, l.shstr_off, sizeof(shstr), 0, 0, 1, 0 },
	};
	uint8_t *at = b + l.sh_off + SHDR; /* [0] stays the null section */
	for (size_t i = 0; i < sizeof(sh) / sizeof(sh[0]); i++) {
		if (sh[i].name == N_RODATA && !p->ro_len)
			continue;
		put_shdr(at, &sh[i]);
		at += SHDR;
	}
	*out = b;
	*size = l.size;
	return 0;
}
