/*
 * Modules: the ELF files behind mappings, opened once per context and kept with their CFI.
 * "[vdso]" is this process's own vDSO image (getauxval), which is the recorded one when the
 * report runs on the machine and kernel that recorded; other bracketed names ([heap],
 * [stack], ...) and files that cannot be opened have no module.
 */
#include "unwind/unwind_internal.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "base/err.h"
#include "elf/elf.h"

static int open_vdso(struct elf_file **out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh)
		return -ENOENT;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return elf_open_mem("[vdso]", eh, size, out);
}

static struct unw_module *open_module(const char *path)
{
	struct unw_module *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	int r = !strcmp(path, "[vdso]") ? open_vdso(&m->elf) : elf_open(path, &m->elf);
	if (!r)
		r = dwarf_cfi_open_elf(m->elf, NULL, &m->cfi);
	if (r) {
		m->failed = true;
		err_clear();
	}
	return m;
}

struct unw_module *unw_module_get(struct unw_ctx *c, const char *path)
{
	if (!path[0] || (path[0] == '[' && strcmp(path, "[vdso]")))
		return NULL;
	for (size_t i = 0; i < c->nmods; i++)
		if (!strcmp(c->mods[i]->path, path))
			return c->mods[i];
	if (c->nmods == c->capmods) {
		size_t cap = c->capmods ? c->capmods * 2 : 16;
		void *n = realloc(c->mods, cap * sizeof(*c->mods));
		if (!n)
			return NULL;
		c->mods = n;
		c->capmods = cap;
	}
	struct unw_module *m = open_module(path);
	if (m)
		c->mods[c->nmods++] = m;
	return m;
}

/* .eh_frame does not cover the pc: a separate debug file's .debug_frame may. */
bool unw_module_try_debug(struct unw_module *m)
{
	if (m->dbg_tried || m->failed)
		return false;
	m->dbg_tried = true;
	char *path = NULL;
	if (elf_find_debug_file(m->elf, NULL, &path)) {
		err_clear();
		return false;
	}
	struct dwarf_cfi *cfi;
	bool ok = !elf_open(path, &m->dbg) && !dwarf_cfi_open_elf(m->elf, m->dbg, &cfi);
	free(path);
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
	dwarf_cfi_close(m->cfi);
	if (m->elf)
		elf_close(m->elf);
	if (m->dbg)
		elf_close(m->dbg);
	free(m->path);
	free(m);
}

bool unw_file_vaddr(const struct unw_mapping *m, uint64_t addr, uint64_t *vaddr)
{
	if (!m->mod || m->mod->failed)
		return false;
	const struct elf_file *f = m->mod->elf;
	uint64_t off = addr - m->start + m->pgoff;
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
