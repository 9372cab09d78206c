/*
 * libFuzzer target: the ELF reader on arbitrary bytes: headers, every section's contents
 * (decompression and relocation included; odd sections first inflated as a stream in two
 * steps, as front mode reads them), symbols, notes, build-id, debuglink, address
 * translation.
 */
#include <stddef.h>
#include <stdint.h>

#include "elf/elf.h"

static int count_note(const struct elf_note *n, void *ctx)
{
	*(size_t *)ctx += n->desc_size;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *f;
	if (elf_open_mem("fuzz.elf", data, size, &f))
		return 0;
	for (size_t i = 0; i < f->nsections; i++) {
		const uint8_t *p;
		size_t n, total;
		if (i % 2 && !elf_section_prefix(f, &f->sections[i], 1, &p, &n, &total))
			elf_section_prefix(f, &f->sections[i], total / 2 + 1, &p, &n, &total);
		elf_section_data(f, &f->sections[i], &p, &n);
	}
	struct elf_symtab t;
	if (!elf_symbols(f, ELF_SYMS_BOTH, true, &t))
		elf_symtab_free(&t);
	size_t total = 0;
	elf_notes(f, count_note, &total);
	const uint8_t *id;
	size_t len;
	elf_build_id(f, &id, &len);
	const char *link;
	uint32_t crc;
	elf_debuglink(f, &link, &crc);
	uint64_t x;
	elf_vaddr_to_offset(f, f->entry, &x);
	elf_offset_to_vaddr(f, 0x1000, &x);
	elf_section_at(f, f->entry);
	elf_close(f);
	return 0;
}
