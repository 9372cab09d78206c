/*
 * Functions from the unwind tables, for code no symbol names (a stripped binary): every FDE
 * of .eh_frame and .debug_frame (the module's, else its debug file's) gives a function's
 * [start, end). The index is built once per module, when a lookup first finds no name, and
 * read without a lock after. Hostile CFI: an FDE is kept only when its whole range lies in
 * one section of code (SHF_EXECINSTR, not the PLT), so a lying length cannot swallow the
 * module; a damaged table is used as far as it reads. Where FDEs overlap, an address
 * belongs to the one starting last at or before it that covers it, among the nearest four
 * (as the unwinder's own index, dwarf/cfi.c).
 *
 * A lookup here follows a miss in the symbol table, and a stripped module's every lookup
 * comes here: so that naming stripped code costs no more than naming code through its
 * .symtab (bench/symbolize/stripped.sh), the sorted functions have a page index, the count
 * of functions starting below each page of the span they cover, and a lookup searches only
 * its page's functions (a few) instead of all (a binary search of a dozen steps for a
 * program of thousands of functions). Pages are 4 KiB, larger where the span would need
 * more than two pages per function (a hostile FDE far away), so the index stays small.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/search.h"
#include "base/vec.h"
#include "dwarf/cfi.h"
#include "symbolize/symbolize_internal.h"

typedef VEC(struct sym_cfi_func) func_vec;

struct collect {
	struct elf_file *elf;
	func_vec *out;
};

static int add_fde(uint64_t start, uint64_t end, void *arg)
{
	struct collect *c = arg;
	if (end <= start)
		return 0;
	struct elf_section *sec = elf_section_at(c->elf, start);
	/* The PLT's one FDE covers every stub: it is no function (profiles name it [plt]). */
	if (!sec || !(sec->flags & SHF_EXECINSTR) || sec->type == SHT_NOBITS ||
	    end - sec->addr > sec->size || !strncmp(sec->name, ".plt", 4))
		return 0;
	struct sym_cfi_func *f = vec_push(c->out);
	if (!f)
		return -ENOMEM;
	*f = (struct sym_cfi_func){ start, end };
	return 0;
}

static int by_range(const void *a, const void *b)
{
	const struct sym_cfi_func *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* The page index of m's sorted functions; left NULL out of memory (lookups then search
 * them all). */
static void index_pages(struct sym_module *m)
{
	const struct sym_cfi_func *f = m->cfi_funcs;
	size_t n = m->ncfi_funcs;
	uint64_t base = f[0].start, span = f[n - 1].start - base;
	unsigned shift = 12;
	while (shift < 63 && (span >> shift) > 2 * n)
		shift++;
	size_t npages = (size_t)(span >> shift) + 1;
	uint32_t *pages = malloc((npages + 1) * sizeof(*pages));
	if (!pages || n > UINT32_MAX) {
		free(pages);
		return;
	}
	/* Page p < npages starts at most span past base: no overflow. */
	size_t i = 0;
	for (size_t p = 0; p < npages; p++) {
		uint64_t below = base + ((uint64_t)p << shift);
		while (i < n && f[i].start < below)
			i++;
		pages[p] = (uint32_t)i;
	}
	pages[npages] = (uint32_t)n;
	m->cfi_pages = pages;
	m->cfi_npages = npages;
	m->cfi_base = base;
	m->cfi_shift = shift;
}

/* Out of memory or with unusable CFI the index stays empty: names are then as before. */
static void build(struct sym_module *m)
{
	struct dwarf_cfi *cfi;
	func_vec v = { 0 };
	if (m->elf->type == ET_REL || dwarf_cfi_open_elf(m->elf, m->debug_elf, &cfi)) {
		err_clear();
		return;
	}
	struct collect c = { m->elf, &v };
	if (dwarf_cfi_each_fde(cfi, add_fde, &c))
		err_clear(); /* the FDEs read before the damage are kept */
	dwarf_cfi_close(cfi);
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), by_range);
	m->cfi_funcs = v.v;
	m->ncfi_funcs = v.n;
	if (v.n)
		index_pages(m);
}

/* How many of m's functions start at or below addr. */
static size_t starting_by(const struct sym_module *m, uint64_t addr)
{
	if (!m->cfi_pages)
		return UPPER_BOUND(m->cfi_funcs, m->ncfi_funcs, .start, addr);
	if (addr < m->cfi_base)
		return 0;
	uint64_t p = (addr - m->cfi_base) >> m->cfi_shift;
	if (p >= m->cfi_npages)
		return m->ncfi_funcs;
	size_t lo = m->cfi_pages[p], hi = m->cfi_pages[p + 1];
	return lo + UPPER_BOUND(m->cfi_funcs + lo, hi - lo, .start, addr);
}

bool sym_cfi_function(struct sym_module *m, uint64_t addr, uint64_t *start, uint64_t *end)
{
	if (!atomic_load_explicit(&m->cfi_built, memory_order_acquire)) {
		pthread_mutex_lock(&m->cfi_lock);
		if (!atomic_load_explicit(&m->cfi_built, memory_order_relaxed)) {
			build(m);
			atomic_store_explicit(&m->cfi_built, true, memory_order_release);
		}
		pthread_mutex_unlock(&m->cfi_lock);
	}
	size_t lo = starting_by(m, addr);
	for (size_t i = lo; i > 0 && lo - i < 4; i--) {
		const struct sym_cfi_func *f = &m->cfi_funcs[i - 1];
		if (addr < f->end) {
			*start = f->start;
			*end = f->end;
			return true;
		}
	}
	return false;
}

void sym_cfi_free(struct sym_module *m)
{
	free(m->cfi_funcs);
	free(m->cfi_pages);
	m->cfi_funcs = NULL;
	m->ncfi_funcs = 0;
	m->cfi_pages = NULL;
}

const char *sym_cfi_name(const char *module_path, uint64_t start, char *buf, size_t size)
{
	const char *path = module_path ? module_path : "", *base = strrchr(path, '/');
	snprintf(buf, size, "%.200s!fn_%" PRIx64, base ? base + 1 : path, start);
	return buf;
}
