/*
 * Section lookup and contents. Contents are returned in place when they can be, and
 * otherwise (compressed, or a relocatable object's debug section that needs relocating)
 * built once into an owned buffer and cached on the section.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"
#include "elf/elf_internal.h"

int elf_own(struct elf_file *f, void *buf)
{
	if (f->nowned == f->capowned) {
		size_t cap = f->capowned ? f->capowned * 2 : 8;
		void **n = realloc(f->owned, cap * sizeof(*n));
		if (!n) {
			free(buf);
			return -ENOMEM;
		}
		f->owned = n;
		f->capowned = cap;
	}
	f->owned[f->nowned++] = buf;
	return 0;
}

static bool is_zdebug(const struct elf_section *s)
{
	return !strncmp(s->name, ".zdebug", 7);
}

struct elf_section *elf_section_by_name(struct elf_file *f, const char *name)
{
	for (size_t i = 0; i < f->nsections; i++)
		if (!strcmp(f->sections[i].name, name))
			return &f->sections[i];
	if (!strncmp(name, ".debug", 6)) {
		for (size_t i = 0; i < f->nsections; i++) {
			struct elf_section *s = &f->sections[i];
			if (is_zdebug(s) && !strcmp(s->name + 7, name + 6))
				return s;
		}
	}
	return NULL;
}

static bool needs_relocation(const struct elf_file *f, const struct elf_section *s)
{
	if (f->type != ET_REL || s->flags & SHF_ALLOC)
		return false;
	for (size_t i = 0; i < f->nsections; i++) {
		const struct elf_section *r = &f->sections[i];
		if ((r->type == SHT_REL || r->type == SHT_RELA) && r->info == s->index)
			return true;
	}
	return false;
}

static int load(struct elf_file *f, struct elf_section *s)
{
	const uint8_t *raw = f->map + s->offset;
	size_t size = s->type == SHT_NOBITS ? 0 : s->size;
	bool compressed = (s->flags & SHF_COMPRESSED) || is_zdebug(s);
	bool reloc = needs_relocation(f, s);
	if (!compressed && !reloc) {
		s->data = raw;
		s->data_size = size;
		return 0;
	}
	uint8_t *buf;
	size_t n;
	if (compressed) {
		int err = elf_decompress(f, s, raw, size, &buf, &n);
		if (err)
			return err;
	} else {
		buf = malloc(size ? size : 1);
		if (!buf)
			return err_set(-ENOMEM, "%s: out of memory", f->path);
		memcpy(buf, raw, size);
		n = size;
	}
	if (elf_own(f, buf))
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	if (reloc) {
		int err = elf_relocate(f, s, buf, n);
		if (err)
			return err;
	}
	s->data = buf;
	s->data_size = n;
	return 0;
}

int elf_section_data(struct elf_file *f, struct elf_section *s, const uint8_t **data,
		     size_t *size)
{
	if (!s->loaded) {
		int err = load(f, s);
		if (err)
			return err;
		s->loaded = true;
	}
	*data = s->data;
	*size = s->data_size;
	return 0;
}

int elf_section_data_by_name(struct elf_file *f, const char *name, const uint8_t **data,
			     size_t *size)
{
	struct elf_section *s = elf_section_by_name(f, name);
	if (!s)
		return -ENOENT;
	return elf_section_data(f, s, data, size);
}
