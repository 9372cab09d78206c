/*
 * Relocations of .debug_* sections in relocatable objects (ET_REL). In a `-c` object every
 * section starts at address 0 and the debug sections hold only addends: the addresses and
 * cross-section offsets appear once the relocations are applied. Section addresses stay 0,
 * so addresses come out section-relative, as llvm-symbolizer reports them for objects.
 * x86-64 and aarch64 use RELA; BPF uses REL, whose addend is the value already in place.
 */
#include <elf.h>
#include <errno.h>

#include "base/cursor.h"
#include "base/err.h"
#include "elf/elf_internal.h"

/* BPF relocation types, from the kernel's and LLVM's BPF ABI documents. */
enum { R_BPF_64_ABS64 = 2, R_BPF_64_ABS32 = 3, R_BPF_64_NODYLD32 = 4 };

/* How a relocation type writes: width in bytes (0: nothing), and whether it is PC-relative. */
struct how {
	unsigned width;
	bool pcrel;
	bool known;
};

static struct how classify(uint16_t machine, uint32_t type)
{
	struct how h = { 0, false, true };
	switch (machine) {
	case EM_X86_64:
		if (type == R_X86_64_64) h.width = 8;
		else if (type == R_X86_64_32 || type == R_X86_64_32S) h.width = 4;
		else if (type == R_X86_64_PC32) h.width = 4, h.pcrel = true;
		else if (type == R_X86_64_PC64) h.width = 8, h.pcrel = true;
		else if (type != R_X86_64_NONE) h.known = false;
		break;
	case EM_AARCH64:
		if (type == R_AARCH64_ABS64) h.width = 8;
		else if (type == R_AARCH64_ABS32) h.width = 4;
		else if (type == R_AARCH64_PREL32) h.width = 4, h.pcrel = true;
		else if (type != R_AARCH64_NONE) h.known = false;
		break;
	case EM_386:
		if (type == R_386_32) h.width = 4;
		else if (type != R_386_NONE) h.known = false;
		break;
	case ELF_EM_BPF:
	case ELF_EM_SBPF:
		if (type == R_BPF_64_ABS64) h.width = 8;
		else if (type == R_BPF_64_ABS32 || type == R_BPF_64_NODYLD32) h.width = 4;
		else if (type != 0) h.known = false;
		break;
	default:
		h.known = false;
	}
	return h;
}

static int symbol_value(struct elf_file *f, const struct elf_section *symtab, uint32_t sym,
			uint64_t *value)
{
	unsigned entsize = f->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	if (symtab->type != SHT_SYMTAB || (uint64_t)sym >= symtab->size / entsize)
		return -EINVAL;
	struct cur c = cur_make(f->map + symtab->offset, symtab->size, f->big_endian);
	cur_seek(&c, (uint64_t)sym * entsize);
	uint16_t shndx;
	if (f->is64) {
		cur_skip(&c, 6);
		shndx = cur_u16(&c);
		*value = cur_u64(&c);
	} else {
		cur_skip(&c, 4);
		*value = cur_u32(&c);
		cur_skip(&c, 6);
		shndx = cur_u16(&c);
	}
	if (shndx != SHN_UNDEF && shndx < f->nsections)
		*value += f->sections[shndx].addr;
	return cur_ok(&c) ? 0 : -EINVAL;
}

static int apply_one(struct elf_file *f, const struct elf_section *s, const struct elf_section *r,
		     struct cur *c, uint8_t *buf, size_t size)
{
	unsigned w = f->is64 ? 8 : 4;
	uint64_t off = cur_uN(c, w), info = cur_uN(c, w);
	int64_t addend = r->type == SHT_RELA ? (int64_t)cur_uN(c, w) : 0;
	uint32_t sym = f->is64 ? (uint32_t)(info >> 32) : (uint32_t)(info >> 8);
	uint32_t type = f->is64 ? (uint32_t)info : (uint32_t)(info & 0xff);
	struct how h = classify(f->machine, type);
	if (!h.known)
		return err_set(-ENOTSUP, "%s: %s: relocation type %u of machine %u not supported",
			       f->path, r->name, type, f->machine);
	if (!h.width)
		return 0;
	if (off > size || h.width > size - off)
		return err_set(-EINVAL, "%s: %s: relocation at 0x%llx lies outside %s", f->path,
			       r->name, (unsigned long long)off, s->name);
	uint64_t value;
	if (symbol_value(f, &f->sections[r->link], sym, &value))
		return err_set(-EINVAL, "%s: %s: relocation at 0x%llx names a bad symbol %u",
			       f->path, r->name, (unsigned long long)off, sym);
	uint8_t *p = buf + off;
	if (r->type == SHT_REL)
		addend = h.width == 8 ? (int64_t)load_u64(p, f->big_endian)
				      : (int64_t)(int32_t)load_u32(p, f->big_endian);
	value += (uint64_t)addend;
	if (h.pcrel)
		value -= s->addr + off;
	if (h.width == 8)
		store_u64(p, value, f->big_endian);
	else
		store_u32(p, (uint32_t)value, f->big_endian);
	return 0;
}

int elf_relocate(struct elf_file *f, const struct elf_section *s, uint8_t *buf, size_t size)
{
	for (size_t i = 0; i < f->nsections; i++) {
		const struct elf_section *r = &f->sections[i];
		if ((r->type != SHT_REL && r->type != SHT_RELA) || r->info != s->index)
			continue;
		if (r->link >= f->nsections)
			return err_set(-EINVAL, "%s: %s: bad symbol table index", f->path, r->name);
		unsigned w = f->is64 ? 8 : 4;
		unsigned entsize = r->type == SHT_RELA ? 3 * w : 2 * w;
		struct cur c = cur_make(f->map + r->offset, r->size, f->big_endian);
		while (cur_left(&c) >= entsize) {
			int err = apply_one(f, s, r, &c, buf, size);
			if (err)
				return err;
		}
	}
	return 0;
}
