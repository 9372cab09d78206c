/*
 * Native frames of a Ruby sample (vm.h). rb_vm_exec by its symbol (.dynsym: libruby
 * exports it); functions by the FDEs of the module's CFI, read once per module that holds
 * a C method's function, sorted, then found by binary search.
 */
#include "replay/sources/ruby/vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "dwarf/cfi.h"
#include "elf/elf.h"

static void find_vm_exec(struct replay_rb_module *m)
{
	struct elf_symtab t;
	if (!m->mod->elf || elf_symbols_unsorted(m->mod->elf, ELF_SYMS_BOTH, false, &t)) {
		err_clear();
		return;
	}
	for (size_t i = 0; i < t.n; i++)
		if (t.syms[i].size && !strcmp(t.syms[i].name, "rb_vm_exec")) {
			m->lo = t.syms[i].addr;
			m->hi = t.syms[i].addr + t.syms[i].size;
		}
	elf_symtab_free(&t);
}

static struct replay_rb_module *module_of(struct replay_rb_vm_index *x,
					  const struct unw_module *mod)
{
	for (size_t i = x->mods.n; i > 0; i--)
		if (x->mods.v[i - 1]->mod == mod)
			return x->mods.v[i - 1];
	struct replay_rb_module *m = calloc(1, sizeof(*m)), **slot = vec_push(&x->mods);
	if (!m || !slot) {
		free(m);
		if (slot)
			x->mods.n--;
		return NULL;
	}
	*slot = m;
	m->mod = mod;
	find_vm_exec(m);
	return m;
}

/* A return address points after its call: the call is what lies in the function. */
static uint64_t at(const struct unw_frame *frames, size_t i)
{
	return i ? frames[i].rel - 1 : frames[i].rel;
}

int replay_rb_vm_exec_frame(struct replay_rb_vm_index *x, const struct unw_frame *frames,
			    size_t i, bool *yes)
{
	*yes = false;
	if (!frames[i].mod || !frames[i].rel)
		return 0;
	const struct replay_rb_module *m = module_of(x, frames[i].mod);
	if (!m)
		return err_set(-ENOMEM, "out of memory");
	*yes = at(frames, i) >= m->lo && at(frames, i) < m->hi;
	return 0;
}

struct fde_pair {
	uint64_t start, end;
};
typedef VEC(struct fde_pair) fde_vec;

static int collect(uint64_t start, uint64_t end, void *arg)
{
	fde_vec *all = arg;
	struct fde_pair *p = vec_push(all);
	if (!p)
		return -ENOMEM;
	*p = (struct fde_pair){ start, end };
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct fde_pair *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int read_fdes(struct replay_rb_module *m)
{
	m->fdes_read = true;
	if (!m->mod->cfi)
		return 0;
	fde_vec all = { 0 };
	int r = dwarf_cfi_each_fde(m->mod->cfi, collect, &all);
	err_clear();
	if (all.n)
		qsort(all.v, all.n, sizeof(*all.v), by_start);
	bool room = r != -ENOMEM && vec_reserve(&m->fde_start, all.n) &&
		    vec_reserve(&m->fde_end, all.n);
	for (size_t i = 0; room && i < all.n; i++) {
		m->fde_start.v[m->fde_start.n++] = all.v[i].start;
		m->fde_end.v[m->fde_end.n++] = all.v[i].end;
	}
	vec_free(&all);
	return room ? 0 : err_set(-ENOMEM, "out of memory");
}

int replay_rb_in_function(struct replay_rb_vm_index *x, const struct unw_frame *frames,
			  size_t i, uint64_t func, bool *yes)
{
	*yes = false;
	const struct unw_frame *fr = &frames[i];
	if (!fr->mod || !fr->rel)
		return 0;
	struct replay_rb_module *m = module_of(x, fr->mod);
	if (!m)
		return err_set(-ENOMEM, "out of memory");
	if (!m->fdes_read && read_fdes(m))
		return -ENOMEM;
	uint64_t pc = at(frames, i), start = func - (fr->pc - fr->rel);
	size_t lo = 0, hi = m->fde_start.n; /* the last FDE starting at or before pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->fde_start.v[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	*yes = lo && m->fde_start.v[lo - 1] == start && pc < m->fde_end.v[lo - 1];
	return 0;
}

void replay_rb_vm_index_free(struct replay_rb_vm_index *x)
{
	for (size_t i = 0; i < x->mods.n; i++) {
		vec_free(&x->mods.v[i]->fde_start);
		vec_free(&x->mods.v[i]->fde_end);
		free(x->mods.v[i]);
	}
	vec_free(&x->mods);
}
