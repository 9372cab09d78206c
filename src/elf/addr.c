/*
 * Virtual address <-> file offset, through PT_LOAD segments only: section addresses can
 * disagree with what is mapped (lld's --rosegment layout puts read-only data and code in
 * separate segments whose offsets and addresses differ by different amounts; with
 * -z separate-code the first executable page is padded), and the loader only honours
 * segments.
 */
#include <elf.h>
#include <errno.h>

#include "elf/elf.h"

int elf_vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < f->nsegments; i++) {
		const struct elf_segment *p = &f->segments[i];
		if (p->type == PT_LOAD && vaddr >= p->vaddr && vaddr - p->vaddr < p->filesz) {
			*offset = p->offset + (vaddr - p->vaddr);
			return 0;
		}
	}
	return -ERANGE;
}

const uint8_t *elf_vaddr_bytes(const struct elf_file *f, uint64_t vaddr, uint64_t n)
{
	uint64_t off;
	if (elf_vaddr_to_offset(f, vaddr, &off) || off > f->size || f->size - off < n)
		return NULL;
	return f->map + off;
}

int elf_offset_to_vaddr(const struct elf_file *f, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nsegments; i++) {
		const struct elf_segment *p = &f->segments[i];
		if (p->type == PT_LOAD && offset >= p->offset && offset - p->offset < p->filesz) {
			*vaddr = p->vaddr + (offset - p->offset);
			return 0;
		}
	}
	return -ERANGE;
}

struct elf_section *elf_section_at(struct elf_file *f, uint64_t vaddr)
{
	for (size_t i = 0; i < f->nsections; i++) {
		struct elf_section *s = &f->sections[i];
		if ((s->flags & SHF_ALLOC) && vaddr >= s->addr && vaddr - s->addr < s->size)
			return s;
	}
	return NULL;
}
