/*
 * ELF notes: walked from SHT_NOTE sections, or from PT_NOTE segments in files whose section
 * table is gone. Entries are 4-byte aligned in both ELF classes (what every producer emits,
 * whatever the gABI says about 8), except PT_NOTE segments that declare 8-byte alignment.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "elf/elf.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int walk(struct elf_file *f, uint64_t off, uint64_t size, uint64_t addr, uint64_t align,
		int (*fn)(const struct elf_note *, void *), void *ctx)
{
	struct cur c = cur_make(f->map + off, size, f->big_endian);
	while (cur_left(&c) >= 12) {
		uint64_t start = cur_off(&c);
		uint32_t namesz = cur_u32(&c), descsz = cur_u32(&c);
		struct elf_note n = { .type = cur_u32(&c) };
		const uint8_t *name = cur_bytes(&c, namesz);
		cur_seek(&c, align_up(cur_off(&c), align));
		uint64_t desc_off = cur_off(&c);
		n.desc = cur_bytes(&c, descsz);
		cur_seek(&c, align_up(cur_off(&c), align));
		if (!cur_ok(&c))
			return err_set(-EINVAL, "%s: note at 0x%llx runs past its section", f->path,
				       (unsigned long long)(off + start));
		n.name = namesz && name[namesz - 1] == 0 ? (const char *)name : "";
		n.desc_size = descsz;
		n.offset = off + desc_off;
		n.addr = addr ? addr + desc_off : 0;
		int r = fn(&n, ctx);
		if (r)
			return r;
	}
	return 0;
}

int elf_notes(struct elf_file *f, int (*fn)(const struct elf_note *n, void *ctx), void *ctx)
{
	bool any = false;
	for (size_t i = 0; i < f->nsections; i++) {
		const struct elf_section *s = &f->sections[i];
		if (s->type != SHT_NOTE)
			continue;
		any = true;
		int r = walk(f, s->offset, s->size, s->addr, s->addralign == 8 ? 8 : 4, fn, ctx);
		if (r)
			return r;
	}
	for (size_t i = 0; !any && i < f->nsegments; i++) {
		const struct elf_segment *p = &f->segments[i];
		if (p->type != PT_NOTE)
			continue;
		if (p->offset > f->size || p->filesz > f->size - p->offset)
			return err_set(-EINVAL, "%s: PT_NOTE segment runs past the end of the file",
				       f->path);
		int r = walk(f, p->offset, p->filesz, p->vaddr, p->align == 8 ? 8 : 4, fn, ctx);
		if (r)
			return r;
	}
	return 0;
}

struct build_id {
	const uint8_t *id;
	size_t len;
};

static int find_build_id(const struct elf_note *n, void *ctx)
{
	struct build_id *b = ctx;
	if (n->type != NT_GNU_BUILD_ID || strcmp(n->name, "GNU") || n->desc_size == 0)
		return 0;
	b->id = n->desc;
	b->len = n->desc_size;
	return 1;
}

int elf_build_id(struct elf_file *f, const uint8_t **id, size_t *len)
{
	struct build_id b = { 0 };
	int r = elf_notes(f, find_build_id, &b);
	if (r < 0)
		return r;
	if (!b.id)
		return -ENOENT;
	*id = b.id;
	*len = b.len;
	return 0;
}
