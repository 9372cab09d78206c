/*
 * Symbol tables. .symtab and .dynsym are read into one array of defined symbols sorted by
 * (address, size, table order), a stable order: callers that choose among aliases at one
 * address (llvm-symbolizer takes the last) see them as the file lists them. An attached
 * MiniDebugInfo file's .symtab stands in for a missing .symtab (minidebuginfo.c).
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/bulk.h"
#include "base/cursor.h"
#include "base/radix.h"
#include "base/err.h"
#include "elf/elf.h"

static bool wanted(uint8_t type, bool want_all)
{
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	return want_all && (type == STT_NOTYPE || type == STT_OBJECT);
}

/* Whether every name offset inside strs is a terminated string: true when the table ends
 * with a NUL, as every linker writes it; then no name needs a search for its end. */
static bool names_terminated(const struct elf_file *f, const struct elf_section *strs)
{
	return strs->size && f->map[strs->offset + strs->size - 1] == 0;
}

/* Calls keep(sym, ctx) for each of s's wanted symbols, in table order, their order
 * counted on from *order. */
static void each_wanted(struct elf_file *f, const struct elf_section *s, bool want_all,
			void (*keep)(const struct elf_symbol *sym, void *ctx), void *ctx,
			uint32_t *order)
{
	if (s->link >= f->nsections || s->type == SHT_NOBITS)
		return;
	const struct elf_section *strs = &f->sections[s->link];
	if (strs->type == SHT_NOBITS)
		return;
	const char *str = (const char *)f->map + strs->offset;
	bool terminated = names_terminated(f, strs);
	unsigned entsize = f->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	const uint8_t *p = f->map + s->offset, *end = p + s->size; /* checked at open */
	bool be = f->big_endian;
	const char *file = NULL; /* the ELF gABI puts STT_FILE before its file's locals */
	for (; (size_t)(end - p) >= entsize; p += entsize) {
		struct elf_symbol sym = { .dynamic = s->type == SHT_DYNSYM };
		uint32_t name = load_u32(p, be);
		uint8_t info;
		if (f->is64) { /* Elf64_Sym: name, info, other, shndx, value, size */
			info = p[4];
			sym.shndx = load_u16(p + 6, be);
			sym.addr = load_u64(p + 8, be);
			sym.size = load_u64(p + 16, be);
		} else { /* Elf32_Sym: name, value, size, info, other, shndx */
			sym.addr = load_u32(p + 4, be);
			sym.size = load_u32(p + 8, be);
			info = p[12];
			sym.shndx = load_u16(p + 14, be);
		}
		sym.type = ELF64_ST_TYPE(info);
		sym.bind = ELF64_ST_BIND(info);
		bool named = name < strs->size &&
			     (terminated || memchr(str + name, 0, strs->size - name));
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
		sym.order = (*order)++;
		keep(&sym, ctx);
	}
}

/* The file whose .symtab is f's: f, or the MiniDebugInfo file attached to it. */
static struct elf_file *symtab_file(struct elf_file *f)
{
	return f->minidebug ? f->minidebug : f;
}

/* Reads the tables which names, .symtab first, through each_wanted. A MiniDebugInfo
 * .symtab leaves out what .dynsym has (GDB's recipe): .dynsym is read beside it. */
static void each_table(struct elf_file *f, enum elf_syms_which which, bool want_all,
		       void (*keep)(const struct elf_symbol *sym, void *ctx), void *ctx,
		       uint32_t *n_symtab)
{
	uint32_t order = 0;
	struct elf_file *st = symtab_file(f);
	for (size_t i = 0; i < st->nsections; i++)
		if (st->sections[i].type == SHT_SYMTAB)
			each_wanted(st, &st->sections[i], want_all, keep, ctx, &order);
	*n_symtab = order;
	bool dyn = which == ELF_SYMS_BOTH || order == 0 || st != f;
	for (size_t i = 0; dyn && i < f->nsections; i++)
		if (f->sections[i].type == SHT_DYNSYM)
			each_wanted(f, &f->sections[i], want_all, keep, ctx, &order);
}

static void append(const struct elf_symbol *sym, void *ctx)
{
	struct elf_symtab *t = ctx;
	t->syms[t->n++] = *sym;
}

int elf_symbols_unsorted(struct elf_file *f, enum elf_syms_which which, bool want_all,
			 struct elf_symtab *out)
{
	struct elf_symtab t = { 0 };
	/* Room for every entry of both kinds of table at once, and for sorting them, on huge
	 * pages when that is a megabyte or more: grown by doubling, the copies and their fresh
	 * pages were a tenth of opening libc's tables, python3.11d's 24,700 symbols faulted
	 * in 300 small pages, and the sort's keys in a mapping of their own took a second
	 * huge page, cleared whole (a tenth of looking up one address of python3.11d). */
	size_t cap = 0, entsize = f->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	for (size_t i = 0; i < f->nsections; i++) /* sizes checked against the file at open */
		if (f->sections[i].type == SHT_SYMTAB || f->sections[i].type == SHT_DYNSYM)
			cap += f->sections[i].size / entsize;
	for (size_t i = 0; f->minidebug && i < f->minidebug->nsections; i++)
		if (f->minidebug->sections[i].type == SHT_SYMTAB) /* same class: checked */
			cap += f->minidebug->sections[i].size / entsize;
	if (cap && !(t.syms = huge_map(cap * sizeof(*t.syms) + radix_scratch_size(cap), &t.map,
				       &t.map_len)))
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	t.sort_room = t.syms ? t.syms + cap : NULL;
	uint32_t n_symtab;
	each_table(f, which, want_all, append, &t, &n_symtab);
	t.n_symtab = n_symtab;
	*out = t;
	return 0;
}

struct nearest {
	uint64_t addr;
	bool first_alias, found;
	struct elf_symbol best;
};

/* Keeps sym when it sorts after the best so far, as the sorted table orders them: by
 * address, size, then table order (the later of two aliases, or with first_alias the
 * earlier). */
static void take_nearer(const struct elf_symbol *sym, void *ctx)
{
	struct nearest *n = ctx;
	if (sym->addr > n->addr)
		return;
	const struct elf_symbol *b = &n->best;
	if (n->found && (sym->addr != b->addr ? sym->addr < b->addr
			 : sym->size != b->size ? sym->size < b->size
						: n->first_alias))
		return;
	n->best = *sym;
	n->found = true;
}

bool elf_symbol_at_or_below(struct elf_file *f, enum elf_syms_which which, bool want_all,
			    uint64_t addr, bool first_alias, struct elf_symbol *out)
{
	struct nearest n = { .addr = addr, .first_alias = first_alias };
	uint32_t n_symtab;
	each_table(f, which, want_all, take_nearer, &n, &n_symtab);
	if (n.found)
		*out = n.best;
	return n.found;
}

static bool before(const struct elf_symbol *x, const struct elf_symbol *y)
{
	return x->size != y->size ? x->size < y->size : x->order < y->order;
}

/* Symbols at one address (aliases: two or three, 2,400 such runs in libc's tables), by
 * size then table order: an insertion sort, where a qsort call each cost more than the
 * radix sort of the whole table. */
static void sort_aliases(struct elf_symbol *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct elf_symbol x = s[i];
		size_t j = i;
		for (; j > 0 && before(&x, &s[j - 1]); j--)
			s[j] = s[j - 1];
		s[j] = x;
	}
}

/* By (address, size, table order): a radix sort by address, then each run of aliases at
 * one address (a few symbols) by size and order. qsort's comparisons of whole symbols over
 * the whole table were most of loading a large one. */
int elf_symtab_sort(struct elf_symtab *t)
{
	if (radix_sort_in(t->syms, t->n, sizeof(*t->syms), offsetof(struct elf_symbol, addr),
			  t->sort_room))
		return -ENOMEM;
	for (size_t i = 0, j; i < t->n; i = j) {
		for (j = i + 1; j < t->n && t->syms[j].addr == t->syms[i].addr; j++)
			;
		sort_aliases(t->syms + i, j - i);
	}
	return 0;
}

int elf_symbols(struct elf_file *f, enum elf_syms_which which, bool want_all,
		struct elf_symtab *out)
{
	int err = elf_symbols_unsorted(f, which, want_all, out);
	if (!err && elf_symtab_sort(out)) {
		elf_symtab_free(out);
		err = err_set(-ENOMEM, "%s: out of memory", f->path);
	}
	return err;
}

void elf_symtab_free(struct elf_symtab *t)
{
	huge_unmap(t->map, t->map_len);
	*t = (struct elf_symtab){ 0 };
}
