/*
 * Eval-loop activations among native frames (eval.h). A module's symbols are read
 * once, when a frame first lies in it: those named _PyEval_EvalFrameDefault or a clone of
 * it (a name with a "." suffix: .cold, .part.N), from its own tables and, when it has
 * them, from its separate debug file's .symtab, where the clones are.
 */
#include "replay/sources/python/eval.h"

#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"

#define EVAL_NAME "_PyEval_EvalFrameDefault"

static bool is_eval_name(const char *name)
{
	size_t n = sizeof(EVAL_NAME) - 1;
	return !strncmp(name, EVAL_NAME, n) && (name[n] == 0 || name[n] == '.');
}

static void add_range(struct replay_eval_module *m, uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < m->nranges; i++)
		if (m->lo[i] == lo && m->hi[i] == hi)
			return;
	if (m->nranges < REPLAY_EVAL_MAX_RANGES) {
		m->lo[m->nranges] = lo;
		m->hi[m->nranges++] = hi;
	}
}

/* The eval ranges among f's symbols; whether it has the function itself. */
static bool scan(struct elf_file *f, struct replay_eval_module *m)
{
	struct elf_symtab t;
	if (elf_symbols_unsorted(f, ELF_SYMS_BOTH, false, &t)) {
		err_clear();
		return false;
	}
	bool found = false;
	for (size_t i = 0; i < t.n; i++)
		if (t.syms[i].size && is_eval_name(t.syms[i].name)) {
			add_range(m, t.syms[i].addr, t.syms[i].addr + t.syms[i].size);
			found |= !strcmp(t.syms[i].name, EVAL_NAME);
		}
	elf_symtab_free(&t);
	return found;
}

static void look_at(struct replay_eval_module *m)
{
	struct elf_file *elf = m->mod->elf, *dbg;
	if (!elf || !scan(elf, m))
		return;
	if (!elf_open_debug_file(elf, NULL, NULL, &dbg)) {
		scan(dbg, m);
		elf_close(dbg);
	}
	err_clear();
}

static struct replay_eval_module *module_of(struct replay_eval_index *x,
					    const struct unw_module *mod)
{
	for (size_t i = x->mods.n; i > 0; i--)
		if (x->mods.v[i - 1].mod == mod)
			return &x->mods.v[i - 1];
	struct replay_eval_module *m = vec_push(&x->mods);
	if (!m)
		return NULL;
	m->mod = mod;
	look_at(m);
	return m;
}

int replay_eval_frame(struct replay_eval_index *x, const struct unw_frame *frames, size_t i,
		      bool *yes)
{
	const struct unw_frame *fr = &frames[i];
	*yes = false;
	if (!fr->mod || !fr->rel)
		return 0;
	const struct replay_eval_module *m = module_of(x, fr->mod);
	if (!m)
		return err_set(-ENOMEM, "out of memory");
	/* A return address points after its call: the call is what lies in the function. */
	uint64_t at = i ? fr->rel - 1 : fr->rel;
	for (unsigned k = 0; k < m->nranges; k++)
		*yes |= at >= m->lo[k] && at < m->hi[k];
	return 0;
}

void replay_eval_index_free(struct replay_eval_index *x)
{
	vec_free(&x->mods);
}
