/*
 * Symbol tables. .symtab and .dynsym are read into one array of defined symbols sorted by
 * (address, size, table order), a stable order: callers that choose among aliases at one
 * address (llvm-symbolizer takes the last) see them as the file lists them.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "elf/elf.h"

static bool wanted(uint8_t type, bool want_all)
{
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	return want_all && (type == STT_NOTYPE || type == STT_OBJECT);
}

static int read_table(struct elf_file *f, const struct elf_section *s, bool want_all,
		      struct elf_symtab *t, size_t *cap)
{
	if (s->link >= f->nsections || s->type == SHT_NOBITS)
		return 0;
	const struct elf_section *strs = &f->sections[s->link];
	if (strs->type == SHT_NOBITS)
		return 0;
	const char *str = (const char *)f->map + strs->offset;
	unsigned entsize = f->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	struct cur c = cur_make(f->map + s->offset, s->size, f->big_endian);
	const char *file = NULL; /* the ELF gABI puts STT_FILE before its file's locals */
	while (cur_left(&c) >= entsize) {
		struct elf_symbol sym = { .dynamic = s->type == SHT_DYNSYM };
		uint32_t name = cur_u32(&c);
		uint8_t info;
		if (f->is64) {
			info = cur_u8(&c);
			cur_u8(&c);
			sym.shndx = cur_u16(&c);
			sym.addr = cur_u64(&c);
			sym.size = cur_u64(&c);
		} else {
			sym.addr = cur_u32(&c);
			sym.size = cur_u32(&c);
			info = cur_u8(&c);
			cur_u8(&c);
			sym.shndx = cur_u16(&c);
		}
		sym.type = ELF64_ST_TYPE(info);
		sym.bind = ELF64_ST_BIND(info);
		bool named = name < strs->size && memchr(str + name, 0, strs->size - name);
		if (sym.type == STT_FILE)
			file = named ? str + name : NULL;
		if (!wanted(sym.type, want_all) || sym.shndx == SHN_UNDEF || sym.shndx == SHN_ABS)
			continue;
		if (!named || !str[name])
			continue;
		sym.name = str + name;
		sym.file = sym.bind == STB_LOCAL ? file : NULL;
		if (f->type == ET_REL && sym.shndx < f->nsections)
			sym.addr += f->sections[sym.shndx].addr;
		if (t->n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 256;
			struct elf_symbol *n = realloc(t->syms, ncap * sizeof(*n));
			if (!n)
				return err_set(-ENOMEM, "%s: out of memory", f->path);
			t->syms = n;
			*cap = ncap;
		}
		sym.order = (uint32_t)t->n;
		t->syms[t->n++] = sym;
	}
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct elf_symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int elf_symbols_unsorted(struct elf_file *f, enum elf_syms_which which, bool want_all,
			 struct elf_symtab *out)
{
	struct elf_symtab t = { 0 };
	size_t cap = 0;
	for (size_t i = 0; i < f->nsections; i++) {
		if (f->sections[i].type != SHT_SYMTAB)
			continue;
		int err = read_table(f, &f->sections[i], want_all, &t, &cap);
		if (err)
			return free(t.syms), err;
	}
	t.n_symtab = t.n;
	bool dyn = which == ELF_SYMS_BOTH || t.n == 0;
	for (size_t i = 0; dyn && i < f->nsections; i++) {
		if (f->sections[i].type != SHT_DYNSYM)
			continue;
		int err = read_table(f, &f->sections[i], want_all, &t, &cap);
		if (err)
			return free(t.syms), err;
	}
	*out = t;
	return 0;
}

void elf_symtab_sort(struct elf_symtab *t)
{
	if (t->n)
		qsort(t->syms, t->n, sizeof(*t->syms), by_addr);
}

int elf_symbols(struct elf_file *f, enum elf_syms_which which, bool want_all,
		struct elf_symtab *out)
{
	int err = elf_symbols_unsorted(f, which, want_all, out);
	if (!err)
		elf_symtab_sort(out);
	return err;
}

void elf_symtab_free(struct elf_symtab *t)
{
	free(t->syms);
	t->syms = NULL;
	t->n = 0;
}
