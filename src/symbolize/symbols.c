/*
 * Symbol tables as llvm-symbolizer uses them: the module's .symtab, or its .dynsym when
 * .symtab is absent; function, object, no-type and ifunc symbols; at each address only the
 * symbol with the largest size (then the greatest name) survives, and a symbol of size 0
 * covers everything up to the next symbol. The fallback table (a separate debug file's
 * .symtab) holds functions only and is consulted only where the first has nothing.
 */
#include <errno.h>
#include <stdlib.h>

#include "base/err.h"
#include "symbolize/symbolize_internal.h"

static void keep_last_per_address(struct elf_symtab *t)
{
	size_t out = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (i + 1 < t->n && t->syms[i + 1].addr == t->syms[i].addr)
			continue;
		t->syms[out++] = t->syms[i];
	}
	t->n = out;
}

int sym_symbols_load(struct sym_module *m, struct elf_file *f, bool fallback,
		     struct sym_symbols *out)
{
	int err = elf_symbols(f, fallback ? ELF_SYMS_BOTH : ELF_SYMS_SYMTAB_ELSE_DYNSYM,
			      !fallback, &out->tab);
	if (err)
		return err;
	keep_last_per_address(&out->tab);
	out->demangled = calloc(out->tab.n ? out->tab.n : 1, sizeof(*out->demangled));
	if (!out->demangled)
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	for (size_t i = 0; i < out->tab.n; i++) {
		out->demangled[i] = sym_demangle(m, out->tab.syms[i].name);
		if (!out->demangled[i])
			return err_set(-ENOMEM, "%s: out of memory", f->path);
	}
	return 0;
}

const char *sym_symbols_find(const struct sym_symbols *s, uint64_t addr, uint64_t *start,
			     size_t *idx)
{
	size_t lo = 0, hi = s->tab.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->tab.syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct elf_symbol *sym = &s->tab.syms[lo - 1];
	if (sym->size && addr - sym->addr >= sym->size)
		return NULL;
	*start = sym->addr;
	*idx = lo - 1;
	return s->demangled[lo - 1];
}

void sym_symbols_free(struct sym_symbols *s)
{
	elf_symtab_free(&s->tab);
	free(s->demangled);
	s->demangled = NULL;
}
