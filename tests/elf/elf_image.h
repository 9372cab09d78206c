/*
 * ELF images built by tests: the header of a little-endian 64-bit x86-64 shared object
 * whose section table is at shoff, with shnum entries and names in section shstrndx.
 */
#ifndef TALLY_TESTS_ELF_IMAGE_H
#define TALLY_TESTS_ELF_IMAGE_H

#include <elf.h>
#include <string.h>

static inline void elf_image_header(void *img, uint64_t shoff, uint16_t shnum,
				    uint16_t shstrndx)
{
	Elf64_Ehdr *eh = img;
	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = shnum;
	eh->e_shstrndx = shstrndx;
}

#endif
