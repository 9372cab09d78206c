/*
 * Relocatable eBPF objects (ET_REL from upstream `clang -target bpf -mcpu=v3 -g -c`)
 * linked in memory into an sBPF v3 program, since no upstream linker targets sBPF:
 * executable sections are concatenated into the bytecode (at 0x1_0000_0000), read-only
 * data sections into the rodata region (at 0), then the REL relocations are applied:
 *
 *   R_BPF_64_64    lddw immediate  S + A (A in the first slot's imm)
 *   R_BPF_64_ABS64 data word       S + A
 *   R_BPF_64_ABS32 data word       S + A
 *   R_BPF_64_32    call            defined function: pc-relative internal call (src 1);
 *                                  undefined symbol: syscall by murmur3 of its name (src 0)
 *
 * Relocations of .debug_* and .BTF* sections are left to the DWARF reader. Writable data
 * (.data, .bss) has no place in sBPF and is refused as the loader refuses it. Symbol values
 * in the object are section offsets; the text of the first executable section starts at
 * offset 0, so its DWARF addresses are byte offsets of the bytecode.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "sbpf/elf_parse.h"
#include "sbpf/link.h"
#include "sbpf/syscall.h"

enum { SHT_PROGBITS_ = 1, SHT_SYMTAB_ = 2, SHT_NOBITS_ = 8, SHT_REL_ = 9 };
enum { SHF_WRITE_ = 1, SHF_ALLOC_ = 2, SHF_EXECINSTR_ = 4 };
enum { STT_FUNC_ = 2, STT_SECTION_ = 3, SHN_UNDEF_ = 0 };
enum { LINK_MAX_BYTES = 256 << 20 };
enum { R_BPF_64_64 = 1, R_BPF_64_ABS64 = 2, R_BPF_64_ABS32 = 3, R_BPF_64_32 = 10 };

struct link {
	const char *name;
	struct sx_elf e;
	const struct sbpf_syscalls *syscalls;
	uint64_t *base;   /* per section: offset in text or rodata, or UINT64_MAX */
	bool *is_text;    /* per section */
	uint8_t *text, *ro;
	uint64_t text_len, ro_len;
};

static int lerr(const struct link *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lerr(const struct link *l, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return err_set(-EINVAL, "%s: %s", l->name, buf);
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Section names of any length (an object's names are not limited like a .so's). */
static const char *sec_name(struct link *l, const struct sx_shdr *s)
{
	const char *name;
	size_t len;
	if (!l->e.shstrtab || sx_string(&l->e, l->e.shstrtab, s->name, 4096, &name, &len))
		return "";
	return name;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a < 2)
		return v;
	return (v + a - 1) / a * a;
}

/* Where each section goes: text, rodata, or nowhere. */
static int place_sections(struct link *l)
{
	for (size_t i = 0; i < l->e.nsh; i++) {
		const struct sx_shdr *s = &l->e.sh[i];
		l->base[i] = UINT64_MAX;
		if (!(s->flags & SHF_ALLOC_) || !s->size)
			continue;
		const char *name = sec_name(l, s);
		if (s->type == SHT_NOBITS_)
			return s->flags & SHF_WRITE_
				       ? lerr(l, "WritableSectionNotSupported(\"%s\")", name)
				       : lerr(l, "section %s has no contents in the file", name);
		if (s->offset > l->e.size || s->size > l->e.size - s->offset || s->addralign > 4096)
			return lerr(l, "section %s runs past the end of the file", name);
		if (s->flags & SHF_EXECINSTR_) {
			if (s->type != SHT_PROGBITS_ || s->size % 8)
				return lerr(l, "executable section %s is not whole instructions", name);
			l->base[i] = l->text_len;
			l->is_text[i] = true;
			l->text_len += s->size;
		} else if (s->flags & SHF_WRITE_ && !starts(name, ".data.rel.ro")) {
			return lerr(l, "WritableSectionNotSupported(\"%s\")", name);
		} else {
			l->ro_len = align_up(l->ro_len, s->addralign);
			l->base[i] = l->ro_len;
			l->ro_len += s->size;
		}
		/* sections may overlap in the file; bound what their copies can add up to */
		if (l->text_len > LINK_MAX_BYTES || l->ro_len > LINK_MAX_BYTES)
			return lerr(l, "sections add up to more than %d MiB", LINK_MAX_BYTES >> 20);
	}
	if (!l->text_len)
		return lerr(l, "no executable section");
	l->text = calloc(l->text_len, 1);
	l->ro = calloc(l->ro_len ? l->ro_len : 1, 1);
	if (!l->text || !l->ro)
		return err_set(-ENOMEM, "%s: out of memory", l->name);
	for (size_t i = 0; i < l->e.nsh; i++) {
		const struct sx_shdr *s = &l->e.sh[i];
		if (l->base[i] == UINT64_MAX || s->type == SHT_NOBITS_)
			continue;
		memcpy((l->is_text[i] ? l->text : l->ro) + l->base[i], l->e.bytes + s->offset, s->size);
	}
	return 0;
}

static int symbol(struct link *l, const struct sx_shdr *symtab, uint32_t idx, struct sx_sym *s)
{
	if (idx >= symtab->size / 24 || sx_read_sym(l->e.bytes, l->e.size, symtab->offset + idx * 24ull, s))
		return lerr(l, "UnknownSymbol(%u)", idx);
	return 0;
}

static const char *sym_name(struct link *l, const struct sx_shdr *symtab, const struct sx_sym *s)
{
	const char *name;
	size_t len;
	if (symtab->link >= l->e.nsh ||
	    sx_string(&l->e, &l->e.sh[symtab->link], s->name, 4096, &name, &len))
		return NULL;
	return name;
}

/* The VM address of a defined symbol, or false when it lives in no placed section. */
static bool sym_addr(const struct link *l, const struct sx_sym *s, uint64_t *addr)
{
	if (s->shndx == SHN_UNDEF_ || s->shndx >= l->e.nsh || l->base[s->shndx] == UINT64_MAX)
		return false;
	uint64_t base = l->is_text[s->shndx] ? SBPF_MM_BYTECODE : SBPF_MM_RODATA;
	*addr = base + l->base[s->shndx] + s->value;
	return true;
}

static int reloc_call(struct link *l, const struct sx_shdr *symtab, const struct sx_sym *s,
		      uint8_t *at, uint64_t pc)
{
	uint64_t addr;
	if (sym_addr(l, s, &addr)) {
		if (addr < SBPF_MM_BYTECODE || (addr - SBPF_MM_BYTECODE) % 8 ||
		    addr - SBPF_MM_BYTECODE >= l->text_len)
			return lerr(l, "call at pc %llu to a symbol outside the code",
				    (unsigned long long)pc);
		int64_t rel = (int64_t)((addr - SBPF_MM_BYTECODE) / 8) - (int64_t)(pc + 1);
		at[1] = (uint8_t)((at[1] & 0x0f) | 0x10);
		store_u32(at + 4, (uint32_t)rel, false);
		return 0;
	}
	const char *name = sym_name(l, symtab, s);
	if (!name)
		return lerr(l, "UnknownSymbol(%u)", s->name);
	uint32_t key = sbpf_hash(name, strlen(name));
	if (!sbpf_syscalls_find(l->syscalls, key))
		return lerr(l, "UnresolvedSymbol(\"%s\", %llu, %llu)", name, (unsigned long long)pc,
			    (unsigned long long)(pc * 8));
	at[1] &= 0x0f;
	store_u32(at + 4, key, false);
	return 0;
}

static int apply_one(struct link *l, const struct sx_shdr *symtab, size_t target, uint64_t off,
		     uint32_t type, uint32_t sym)
{
	const struct sx_shdr *t = &l->e.sh[target];
	bool text = l->is_text[target];
	uint8_t *buf = text ? l->text : l->ro;
	uint64_t at = l->base[target] + off;
	uint64_t width = type == R_BPF_64_64 ? 16 : type == R_BPF_64_ABS32 ? 4 : 8;
	if (off > t->size || width > t->size - off)
		return lerr(l, "relocation at %#llx of %s out of its section", (unsigned long long)off,
			    sec_name(l, t));
	struct sx_sym s;
	int rc = symbol(l, symtab, sym, &s);
	if (rc)
		return rc;
	uint64_t addr = 0;
	if (type != R_BPF_64_32 && !sym_addr(l, &s, &addr)) {
		const char *name = sym_name(l, symtab, &s);
		return lerr(l, "UnresolvedSymbol(\"%s\", %llu, %llu)", name ? name : "?",
			    (unsigned long long)(at / 8), (unsigned long long)at);
	}
	switch (type) {
	case R_BPF_64_64: {
		uint64_t v = addr + (uint64_t)(int64_t)(int32_t)load_u32(buf + at + 4, false);
		store_u32(buf + at + 4, (uint32_t)v, false);
		store_u32(buf + at + 12, (uint32_t)(v >> 32), false);
		return 0;
	}
	case R_BPF_64_ABS64:
		store_u64(buf + at, addr + load_u64(buf + at, false), false);
		return 0;
	case R_BPF_64_ABS32:
		store_u32(buf + at, (uint32_t)(addr + load_u32(buf + at, false)), false);
		return 0;
	case R_BPF_64_32:
		if (!text || at % 8)
			return lerr(l, "R_BPF_64_32 outside the code");
		return reloc_call(l, symtab, &s, buf + at, at / 8);
	default:
		return lerr(l, "UnknownRelocation(%u)", type);
	}
}

static int apply_relocations(struct link *l)
{
	for (size_t i = 0; i < l->e.nsh; i++) {
		const struct sx_shdr *r = &l->e.sh[i];
		if (r->type != SHT_REL_ || r->info >= l->e.nsh || l->base[r->info] == UINT64_MAX)
			continue;
		if (r->link >= l->e.nsh || l->e.sh[r->link].type != SHT_SYMTAB_)
			return lerr(l, "relocation section %s has no symbol table", sec_name(l, r));
		struct cur c = cur_make(l->e.bytes, l->e.size, false);
		cur_seek(&c, r->offset);
		for (uint64_t n = r->size / 16; n; n--) {
			uint64_t off = cur_u64(&c), info = cur_u64(&c);
			if (!cur_ok(&c))
				return lerr(l, "relocation section %s runs past the end of the file",
					    sec_name(l, r));
			int rc = apply_one(l, &l->e.sh[r->link], r->info, off, (uint32_t)info,
					   (uint32_t)(info >> 32));
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Function symbols become the program's names; "entrypoint" is where it starts. */
static int collect_functions(struct link *l, struct sbpf_program *p)
{
	bool have_entry = false;
	size_t cap = 0;
	for (size_t i = 0; i < l->e.nsh; i++) {
		const struct sx_shdr *tab = &l->e.sh[i];
		if (tab->type != SHT_SYMTAB_)
			continue;
		for (uint64_t k = 0; k < tab->size / 24; k++) {
			struct sx_sym s;
			uint64_t addr;
			if (sx_read_sym(l->e.bytes, l->e.size, tab->offset + k * 24, &s))
				break;
			const char *name = sym_name(l, tab, &s);
			if ((s.info & 0xf) != STT_FUNC_ || !name || !sym_addr(l, &s, &addr) ||
			    addr < SBPF_MM_BYTECODE)
				continue;
			uint64_t pc = (addr - SBPF_MM_BYTECODE) / 8;
			if (!strcmp(name, "entrypoint")) {
				p->entry_pc = pc;
				have_entry = true;
			}
			const char *copy = arena_strdup(&p->arena, name);
			struct sbpf_symbol *sym = copy ? sbpf_add_symbol(p, &cap) : NULL;
			if (!sym)
				return err_set(-ENOMEM, "%s: out of memory", l->name);
			*sym = (struct sbpf_symbol){ pc, pc + (s.size + 7) / 8, copy };
		}
	}
	if (!have_entry)
		return lerr(l, "no function named entrypoint");
	sbpf_sort_symbols(p);
	return 0;
}

int sbpf_link_object(const char *name, const uint8_t *bytes, size_t size,
		     const struct sbpf_syscalls *syscalls, struct sbpf_program *p)
{
	struct link l = { .name = name, .syscalls = syscalls };
	struct sx_ehdr h;
	if (sx_read_ehdr(bytes, size, &h) || h.ident[4] != 2 || h.ident[5] != 1 ||
	    h.machine != 247 || h.shentsize != 64 || !h.shnum || h.shstrndx >= h.shnum)
		return lerr(&l, "not a 64-bit little-endian eBPF object");
	l.e.bytes = bytes;
	l.e.size = size;
	l.e.eh = h;
	l.e.nsh = h.shnum;
	l.e.sh = calloc(h.shnum, sizeof(*l.e.sh));
	l.base = calloc(h.shnum, sizeof(*l.base));
	l.is_text = calloc(h.shnum, sizeof(*l.is_text));
	int rc = 0;
	if (!l.e.sh || !l.base || !l.is_text)
		rc = err_set(-ENOMEM, "%s: out of memory", name);
	for (size_t i = 0; !rc && i < h.shnum; i++)
		if (sx_read_shdr(bytes, size, h.shoff + i * 64, &l.e.sh[i]))
			rc = lerr(&l, "section header %zu runs past the end of the file", i);
	if (!rc) {
		l.e.shstrtab = &l.e.sh[h.shstrndx];
		rc = place_sections(&l);
	}
	if (!rc)
		rc = apply_relocations(&l);
	if (!rc) {
		p->image = l.text;
		p->text = l.text;
		p->text_len = l.text_len;
		p->text_vaddr = SBPF_MM_BYTECODE;
		p->ro_owned = l.ro;
		p->ro = l.ro;
		p->ro_len = l.ro_len;
		p->ro_vaddr = SBPF_MM_RODATA;
		p->ninsns = l.text_len / 8;
		l.text = l.ro = NULL;
		rc = collect_functions(&l, p);
	}
	free(l.text);
	free(l.ro);
	free(l.base);
	free(l.is_text);
	free(l.e.sh);
	return rc;
}
