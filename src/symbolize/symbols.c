/*
 * Symbol tables as llvm-symbolizer uses them: the module's .symtab, or its .dynsym when
 * .symtab is absent; function, object, no-type and ifunc symbols. Of the aliases at one
 * address llvm-symbolizer takes the largest, the last of those in table order; addr2line
 * the largest, the first in table order. A symbol of size 0 covers everything up to the
 * next symbol (for addr2line every symbol does, whatever its size). The fallback table,
 * a separate debug file's symbols, names what the first cannot (and is addr2line's table).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/bulk.h"
#include "base/search.h"
#include "symbolize/symbolize_internal.h"

/* For a batch, symbol tables load on a thread of their own while the DWARF opens and is
 * indexed: reading a large .symtab takes as long as reading every unit header of a large
 * .debug_info, and sorting it twice that. Lookups wait for them; the open does not (a
 * table's damaged entries are skipped, so only memory can run out, and then names come
 * from DWARF alone). The two share nothing but the name arena, which has its lock.
 * Lookups one at a time load the table when the second comes, in the lookup: the first
 * finds its symbol in one pass over the file's table instead. A single address of
 * python3.11d (24,700 symbols) then never reads, sorts or maps a table (1.5 ms), and a
 * thread of its own saved nothing on a virtual machine whose idle CPU took 2-3 ms to
 * start it. */
struct sym_loader {
	struct sym_module *m;
	pthread_t thread;
	bool apart; /* runs on thread, to be joined */
	pthread_mutex_t lock; /* with loaded: for threads waiting on done */
	pthread_cond_t loaded;
	atomic_bool done;
	atomic_bool scanned; /* a lookup scanned the file's table: the next one loads it */
	/* The debug file's table (m->fallback) is read when a lookup first needs it: with
	 * DWARF, llvm-symbolizer's answers need it only for code DWARF does not describe. */
	pthread_mutex_t fallback_lock;
	atomic_bool fallback_read;
};

/* The room for the demangled names: sparse (base/bulk.h), since a lookup names a few
 * symbols of a table of tens of thousands; calloc on the loading thread's fresh heap
 * cleared all of python3.11d's 200 KB, a tenth of looking up one address. */
static size_t demangled_size(const struct sym_symbols *s)
{
	return (s->tab.n ? s->tab.n : 1) * sizeof(*s->demangled);
}

/* f's .symtab, else its .dynsym; with both, the two merged (in table order); sorted, with
 * room for the demangled names. Out of memory, the table is left empty: names then come
 * from elsewhere. */
static void load_table(struct elf_file *f, bool both, struct sym_symbols *out)
{
	enum elf_syms_which which = both ? ELF_SYMS_BOTH : ELF_SYMS_SYMTAB_ELSE_DYNSYM;
	if (elf_symbols_unsorted(f, which, true, &out->tab) || elf_symtab_sort(&out->tab) ||
	    !(out->demangled = sparse_map(demangled_size(out))))
		sym_symbols_free(out);
}

/* Names are demangled when a lookup first returns them: a lookup names a few hundred
 * symbols of a table of tens of thousands. Two threads may both demangle one name; either
 * copy serves. */
static const char *demangled(struct sym_module *m, const struct sym_symbols *s, size_t i)
{
	const char *d = atomic_load_explicit(&s->demangled[i], memory_order_acquire);
	if (!d) {
		d = sym_demangle(m, s->tab.syms[i].name);
		atomic_store_explicit(&s->demangled[i], d, memory_order_release);
	}
	return d;
}

/* The symbol llvm-symbolizer (or with any_size, addr2line) names addr with, found in the
 * table when it is loaded, else by a pass over the file's table. */
static bool nearest(const struct sym_symbols *s, struct elf_file *scan, uint64_t addr,
		    bool any_size, struct elf_symbol *sym, size_t *idx)
{
	if (scan) {
		*idx = SIZE_MAX;
		return elf_symbol_at_or_below(scan, ELF_SYMS_SYMTAB_ELSE_DYNSYM, true, addr,
					      any_size, sym);
	}
	size_t lo = UPPER_BOUND(s->tab.syms, s->tab.n, .addr, addr);
	if (lo == 0)
		return false;
	size_t i = lo - 1; /* sorted by (address, size, table order): the largest is last */
	while (any_size && i > 0 && s->tab.syms[i - 1].addr == s->tab.syms[i].addr &&
	       s->tab.syms[i - 1].size == s->tab.syms[i].size)
		i--;
	*sym = s->tab.syms[i];
	*idx = i;
	return true;
}

const char *sym_symbols_find(struct sym_module *m, const struct sym_symbols *s, uint64_t addr,
			     bool any_size, uint64_t *start, const char **file)
{
	struct elf_symbol sym;
	size_t i;
	bool scan = s == &m->symbols && !atomic_load_explicit(&m->loader->done,
							      memory_order_acquire);
	if (!nearest(s, scan ? m->elf : NULL, addr, any_size, &sym, &i) ||
	    (!any_size && sym.size && addr - sym.addr >= sym.size))
		return NULL;
	*start = sym.addr;
	*file = sym.file;
	return i == SIZE_MAX ? sym_demangle(m, sym.name) : demangled(m, s, i);
}

void sym_symbols_free(struct sym_symbols *s)
{
	sparse_unmap((void *)s->demangled, demangled_size(s));
	s->demangled = NULL;
	elf_symtab_free(&s->tab);
}

static void load_locked(struct sym_loader *l)
{
	load_table(l->m->elf, false, &l->m->symbols);
	atomic_store_explicit(&l->done, true, memory_order_release);
	pthread_cond_broadcast(&l->loaded);
}

static void *load(void *arg)
{
	struct sym_loader *l = arg;
	pthread_mutex_lock(&l->lock);
	load_locked(l);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int sym_symbols_start(struct sym_module *m)
{
	struct sym_loader *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->m = m;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->loaded, NULL);
	pthread_mutex_init(&l->fallback_lock, NULL);
	m->loader = l;
	l->apart = m->opts.many && !pthread_create(&l->thread, NULL, load, l);
	if (m->opts.many && !l->apart)
		load(l);
	return 0;
}

/* A batch's thread that would wait indexes the units the batch will need meanwhile. */
void sym_symbols_wait(struct sym_module *m)
{
	struct sym_loader *l = m->loader;
	/* The load first: after the first lookup it is all that runs, where an exchange on
	 * every lookup cost a quarter of a lookup's time. */
	if (!l->apart && !atomic_load_explicit(&l->scanned, memory_order_acquire) &&
	    !atomic_exchange_explicit(&l->scanned, true, memory_order_acq_rel))
		return; /* the first lookup one at a time: sym_symbols_find scans */
	while (!atomic_load_explicit(&l->done, memory_order_acquire) && sym_build_planned(m))
		;
	if (atomic_load_explicit(&l->done, memory_order_acquire))
		return; /* no lock taken: every lookup asks */
	pthread_mutex_lock(&l->lock);
	if (!l->apart && !atomic_load_explicit(&l->done, memory_order_relaxed))
		load_locked(l);
	while (!atomic_load_explicit(&l->done, memory_order_relaxed))
		pthread_cond_wait(&l->loaded, &l->lock);
	pthread_mutex_unlock(&l->lock);
}

const struct sym_symbols *sym_fallback(struct sym_module *m)
{
	struct sym_loader *l = m->loader;
	if (!m->debug_elf || atomic_load_explicit(&l->fallback_read, memory_order_acquire))
		return &m->fallback;
	pthread_mutex_lock(&l->fallback_lock);
	if (!atomic_load_explicit(&l->fallback_read, memory_order_relaxed)) {
		load_table(m->debug_elf, true, &m->fallback);
		atomic_store_explicit(&l->fallback_read, true, memory_order_release);
	}
	pthread_mutex_unlock(&l->fallback_lock);
	return &m->fallback;
}

void sym_symbols_stop(struct sym_module *m)
{
	struct sym_loader *l = m->loader;
	if (!l)
		return;
	if (l->apart)
		pthread_join(l->thread, NULL);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->loaded);
	pthread_mutex_destroy(&l->fallback_lock);
	free(l);
	m->loader = NULL;
}
