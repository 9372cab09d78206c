/*
 * The native frames' modules as the Lua source sees them (modules.h). A module's symbols
 * are read once, when a frame first lies in it; its FDE starts once a C function is looked
 * for in it.
 */
#include "replay/sources/lua/modules.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "dwarf/cfi.h"
#include "elf/elf.h"

static bool defines_lua_api(struct elf_file *f)
{
	struct elf_symtab t;
	if (elf_symbols_unsorted(f, ELF_SYMS_BOTH, false, &t)) {
		err_clear();
		return false;
	}
	bool found = false;
	for (size_t i = 0; i < t.n && !found; i++)
		found = t.syms[i].size && !strcmp(t.syms[i].name, "lua_pcallk");
	elf_symtab_free(&t);
	return found;
}

struct starts {
	uint64_t *v;
	size_t n, cap;
	bool failed;
};

static int add_start(uint64_t start, uint64_t end, void *arg)
{
	struct starts *s = arg;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			s->failed = true;
			return 1;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = start;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void read_starts(struct replay_lua_module *m)
{
	m->starts_read = true;
	struct dwarf_cfi *cfi = NULL;
	if (!m->mod->elf || dwarf_cfi_open_elf(m->mod->elf, NULL, &cfi)) {
		err_clear();
		return;
	}
	struct starts s = { 0 };
	dwarf_cfi_each_fde(cfi, add_start, &s);
	dwarf_cfi_close(cfi);
	err_clear();
	if (s.failed) {
		free(s.v);
		return;
	}
	qsort(s.v, s.n, sizeof(*s.v), cmp_u64);
	m->starts = s.v;
	m->nstarts = s.n;
}

struct replay_lua_module *replay_lua_module_of(struct replay_lua_modules *x,
					       const struct unw_module *mod)
{
	for (size_t i = x->v.n; i > 0; i--)
		if (x->v.v[i - 1].mod == mod)
			return &x->v.v[i - 1];
	struct replay_lua_module *m = vec_push(&x->v);
	if (!m)
		return NULL;
	*m = (struct replay_lua_module){ .mod = mod };
	m->interp = mod->elf && defines_lua_api(mod->elf);
	return m;
}

bool replay_lua_frame_starts_at(struct replay_lua_modules *x, const struct unw_frame *frames,
				size_t i, uint64_t entry)
{
	const struct unw_frame *fr = &frames[i];
	if (!fr->mod || !fr->rel || fr->pc < fr->rel)
		return false;
	struct replay_lua_module *m = replay_lua_module_of(x, fr->mod);
	if (!m)
		return false;
	if (!m->starts_read)
		read_starts(m);
	/* A return address points after its call: the call is what lies in the function. */
	uint64_t at = i ? fr->rel - 1 : fr->rel, want = entry - (fr->pc - fr->rel);
	if (want > at)
		return false;
	size_t lo = 0, hi = m->nstarts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->starts[mid] <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && m->starts[lo - 1] == want;
}

void replay_lua_modules_free(struct replay_lua_modules *x)
{
	for (size_t i = 0; i < x->v.n; i++)
		free(x->v.v[i].starts);
	vec_free(&x->v);
}
