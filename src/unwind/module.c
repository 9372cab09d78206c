/*
 * Modules: the ELF files behind mappings, opened once per context and kept with their CFI
 * (a context bounded by unw_ctx_bound_unused closes those no mapping names any more, past
 * its bound).
 * "[vdso]" is perf's cached copy of the recorded vDSO, or this process's own vDSO image
 * (getauxval) when its build-id matches or none was recorded; other bracketed names
 * ([heap], [stack], ...) and files that cannot be opened have no module. A file rebuilt
 * since the recording (build-id differs) is replaced by perf's cached copy or not used:
 * its CFI would describe other code.
 */
#include "unwind/unwind_internal.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/err.h"
#include "base/vec.h"
#include "elf/elf.h"
#include "elf/gopclntab.h"

static const struct unw_expect *expected(const struct unw_ctx *c, const char *path)
{
	for (size_t i = c->nexpects; i > 0; i--)
		if (!strcmp(c->expects[i - 1].path, path))
			return &c->expects[i - 1];
	return NULL;
}

int unw_ctx_expect_build_id(struct unw_ctx *c, const char *path, const uint8_t *id, size_t len)
{
	/* A bounded context (a recording's) is told again of what it knows at every file the
	 * recording begins: nothing to add. Its list is as short as its modules are few; a
	 * report's, told each of thousands once, is not searched. */
	const struct unw_expect *was = c->max_unused ? expected(c, path) : NULL;
	if (was && was->len == (len > 20 ? 20 : len) && !memcmp(was->id, id, was->len))
		return 0;
	char *copy = strdup(path);
	struct unw_expect *e = copy ? vec_push_raw((void **)&c->expects, &c->nexpects,
						   &c->capexpects, sizeof(*e))
				    : NULL;
	if (!e) {
		free(copy);
		return -ENOMEM;
	}
	e->path = copy;
	e->len = (uint8_t)(len > 20 ? 20 : len);
	memcpy(e->id, id, e->len);
	return 0;
}

/* The file the recording saw: path itself when its build-id matches (or none was
 * recorded), else perf's cached copy. */
static int open_matching(const struct unw_ctx *c, const char *path, struct elf_file **out,
			 char **file)
{
	const struct unw_expect *e = expected(c, path);
	return elf_open_build_id(strcmp(path, "[vdso]") ? ELF_CACHED_FILE : ELF_CACHED_VDSO, path,
				 e ? e->id : NULL, e ? e->len : 0, out, file);
}

/* Profiles name a module by path and build-id: kept in hex, as pprof mappings carry it. */
static void hex_build_id(struct unw_module *m)
{
	const uint8_t *id;
	size_t len;
	if (elf_build_id(m->elf, &id, &len) || len > (sizeof(m->build_id) - 1) / 2)
		return;
	hex_encode(id, len, m->build_id);
}

/* The functions Go's runtime starts its stacks in: its assembly marks them TOPFRAME and its
 * own traceback stops there (runtime/asm_amd64.s). The table names assembly functions without
 * the ".abi0" the symbol table adds. */
static const char *const go_top_names[] = { "runtime.goexit", "runtime.mstart",
					    "runtime.rt0_go" };

static bool is_go_top(const char *name)
{
	for (size_t i = 0; i < sizeof(go_top_names) / sizeof(*go_top_names); i++) {
		size_t n = strlen(go_top_names[i]);
		if (!strncmp(name, go_top_names[i], n) && (!name[n] || !strcmp(name + n, ".abi0")))
			return true;
	}
	return false;
}

/* A Go binary's .gopclntab and outermost functions; a damaged table gives none (its stacks
 * are then truncated, as before). */
static void find_go_top(struct unw_module *m)
{
	struct elf_gopclntab *t;
	if (elf_gopclntab_open(m->elf, &t)) {
		err_clear();
		return;
	}
	m->go = t;
	size_t n = elf_gopclntab_nfuncs(t);
	for (size_t i = 0; i < n && m->ngo_top < sizeof(m->go_top) / sizeof(*m->go_top); i++) {
		struct elf_gofunc fn;
		if (elf_gopclntab_func(t, i, &fn) && fn.name && is_go_top(fn.name)) {
			m->go_top[m->ngo_top][0] = fn.entry;
			m->go_top[m->ngo_top++][1] = fn.end;
		}
	}
}

static struct unw_module *open_module(const struct unw_ctx *c, const char *path)
{
	struct unw_module *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	int r = open_matching(c, path, &m->elf, &m->file);
	if (!r) {
		hex_build_id(m);
		find_go_top(m);
	}
	if (!r)
		r = dwarf_cfi_open_elf(m->elf, NULL, &m->cfi);
	if (r) {
		m->failed = true;
		err_clear();
	}
	return m;
}

/* The build-ids expected of path, forgotten with its module: a path mapped again later
 * is opened as it is then (the process maps what the path holds now). Else a recording
 * of programs that map ever new files would keep one for each. */
static void forget_expected(struct unw_ctx *c, const char *path)
{
	size_t out = 0;
	for (size_t i = 0; i < c->nexpects; i++) {
		if (strcmp(c->expects[i].path, path))
			c->expects[out++] = c->expects[i];
		else
			free(c->expects[i].path);
	}
	c->nexpects = out;
}

/* Closes the modules no mapping names beyond c->max_unused, the least recently mapped
 * first. Nothing else holds them: the rule cache's rows are dropped, and a walk of the
 * memo that had their frames was made in a space that has changed since (its mapping of
 * them is gone), so it is never matched again. */
static void close_unused(struct unw_ctx *c)
{
	while (c->max_unused) {
		size_t unused = 0, oldest = 0;
		for (size_t i = 0; i < c->nmods; i++)
			if (!c->mods[i]->refs && (!unused++ || c->mods[i]->tick < c->mods[oldest]->tick))
				oldest = i;
		if (unused <= c->max_unused)
			return;
		struct unw_module *m = c->mods[oldest];
		unw_rule_forget(c, m);
		forget_expected(c, m->path);
		memmove(c->mods + oldest, c->mods + oldest + 1,
			(c->nmods - oldest - 1) * sizeof(*c->mods));
		c->nmods--;
		unw_module_free(m);
	}
}

struct unw_module *unw_module_get(struct unw_ctx *c, const char *path)
{
	if (!path[0] || (path[0] == '[' && strcmp(path, "[vdso]")))
		return NULL;
	for (size_t i = 0; i < c->nmods; i++)
		if (!strcmp(c->mods[i]->path, path)) {
			c->mods[i]->tick = c->ticks;
			return c->mods[i];
		}
	close_unused(c);
	struct unw_module *m = open_module(c, path);
	if (m)
		m->tick = c->ticks;
	struct unw_module **slot =
		m ? vec_push_raw((void **)&c->mods, &c->nmods, &c->capmods, sizeof(*c->mods)) : NULL;
	if (!slot) {
		if (m)
			unw_module_free(m);
		return NULL;
	}
	*slot = m;
	return m;
}

/* .eh_frame does not cover the pc: a separate debug file's .debug_frame may. */
bool unw_module_try_debug(struct unw_module *m)
{
	if (m->dbg_tried || m->failed)
		return false;
	m->dbg_tried = true;
	struct dwarf_cfi *cfi;
	bool ok = !elf_open_debug_file(m->elf, NULL, NULL, &m->dbg) &&
		  !dwarf_cfi_open_elf(m->elf, m->dbg, &cfi);
	if (!ok) {
		err_clear();
		return false;
	}
	dwarf_cfi_close(m->cfi);
	m->cfi = cfi;
	return true;
}

void unw_module_free(struct unw_module *m)
{
	elf_gopclntab_close(m->go);
	dwarf_cfi_close(m->cfi);
	if (m->elf)
		elf_close(m->elf);
	if (m->dbg)
		elf_close(m->dbg);
	free(m->path);
	free(m->file);
	free(m);
}

bool unw_file_vaddr(const struct unw_mapping *m, uint64_t addr, uint64_t *vaddr)
{
	if (!m->mod || m->mod->failed)
		return false;
	const struct elf_file *f = m->mod->elf;
	uint64_t off = addr - m->start + m->pgoff;
	/* The first executable segment the mapping covers is the search's answer whenever it
	 * holds off: an earlier one holding off would have been found first. */
	const struct elf_segment *t = m->text;
	if (t && off >= t->offset && off - t->offset < t->filesz) {
		*vaddr = off - t->offset + t->vaddr;
		return true;
	}
	/* Prefer an executable segment: lld's default layout puts a read-only and an
	 * executable segment in the same file page, and only the latter holds code. */
	for (int want_x = 1; want_x >= 0; want_x--)
		for (size_t i = 0; i < f->nsegments; i++) {
			const struct elf_segment *s = &f->segments[i];
			if (s->type != PT_LOAD || (want_x && !(s->flags & PF_X)))
				continue;
			if (off >= s->offset && off - s->offset < s->filesz) {
				*vaddr = off - s->offset + s->vaddr;
				return true;
			}
		}
	return false;
}
