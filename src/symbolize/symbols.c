/*
 * Symbol tables as llvm-symbolizer uses them: the module's .symtab, or its .dynsym when
 * .symtab is absent; function, object, no-type and ifunc symbols. Of the aliases at one
 * address llvm-symbolizer takes the largest, the last of those in table order; addr2line
 * the largest, the first in table order. A symbol of size 0 covers everything up to the
 * next symbol (for addr2line every symbol does, whatever its size). The fallback table,
 * a separate debug file's symbols, names what the first cannot (and is addr2line's table).
 */
#include <errno.h>
#include <stdlib.h>

#include "base/search.h"
#include "base/err.h"
#include "symbolize/symbolize_internal.h"

int sym_symbols_load(struct sym_module *m, struct elf_file *f, bool both,
		     struct sym_symbols *out)
{
	int err = elf_symbols(f, both ? ELF_SYMS_BOTH : ELF_SYMS_SYMTAB_ELSE_DYNSYM, true,
			      &out->tab);
	if (err)
		return err;
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

const char *sym_symbols_find(const struct sym_symbols *s, uint64_t addr, bool any_size,
			     uint64_t *start, size_t *idx)
{
	size_t lo = UPPER_BOUND(s->tab.syms, s->tab.n, .addr, addr);
	if (lo == 0)
		return NULL;
	size_t i = lo - 1; /* sorted by (address, size, table order): the largest is last */
	const struct elf_symbol *sym = &s->tab.syms[i];
	if (!any_size && sym->size && addr - sym->addr >= sym->size)
		return NULL;
	while (any_size && i > 0 && s->tab.syms[i - 1].addr == sym->addr &&
	       s->tab.syms[i - 1].size == sym->size)
		sym = &s->tab.syms[--i];
	*start = sym->addr;
	*idx = i;
	return s->demangled[i];
}

void sym_symbols_free(struct sym_symbols *s)
{
	elf_symtab_free(&s->tab);
	free(s->demangled);
	s->demangled = NULL;
}
