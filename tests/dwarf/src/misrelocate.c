/*
 * Test tool: writes a BPF relocatable object "as linked" by a Solana platform-tools linker
 * before v1.51, or as linked correctly. The debug sections' relocations are applied in place
 * and their .rel sections neutralised (turned into SHT_PROGBITS), so readers see final
 * bytes. With "broken", every R_BPF_64_ABS64 into .debug_info or .debug_addr is applied the
 * way R_BPF_64_64 (lddw) is: the implicit addend read as an lddw immediate (low word at +4,
 * high word at +12), and the sum written back there, leaving the real addend's low word
 * at +0. Code sections are placed at TEXT_BASE, as a linker would place them: at address 0
 * a misapplied relocation would change nothing.
 *
 * usage: misrelocate good|broken IN.o OUT.o
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { R_BPF_64_ABS64 = 2, R_BPF_64_ABS32 = 3, R_BPF_64_NODYLD32 = 4 };

#define TEXT_BASE 0x120

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

int main(int argc, char **argv)
{
	if (argc != 4)
		return fprintf(stderr, "usage: misrelocate good|broken IN OUT\n"), 2;
	int broken = !strcmp(argv[1], "broken");
	FILE *f = fopen(argv[2], "rb");
	if (!f)
		return perror(argv[2]), 1;
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	rewind(f);
	unsigned char *d = malloc((size_t)size);
	if (!d || fread(d, 1, (size_t)size, f) != (size_t)size)
		return fprintf(stderr, "read failed\n"), 1;
	fclose(f);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)d;
	Elf64_Shdr *sh = (Elf64_Shdr *)(d + eh->e_shoff);
	const char *names = (const char *)d + sh[eh->e_shstrndx].sh_offset;
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_flags & SHF_EXECINSTR)
			sh[i].sh_addr = TEXT_BASE;
	for (int i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *r = &sh[i];
		if (r->sh_type != SHT_REL)
			continue;
		Elf64_Shdr *target = &sh[r->sh_info], *symtab = &sh[r->sh_link];
		const char *tname = names + target->sh_name;
		if (strncmp(tname, ".debug_", 7))
			continue;
		int lddw_style = broken && (!strcmp(tname, ".debug_info") || !strcmp(tname, ".debug_addr"));
		Elf64_Rel *rel = (Elf64_Rel *)(d + r->sh_offset);
		Elf64_Sym *syms = (Elf64_Sym *)(d + symtab->sh_offset);
		for (size_t k = 0; k < r->sh_size / sizeof(*rel); k++) {
			unsigned char *p = d + target->sh_offset + rel[k].r_offset;
			Elf64_Sym *s = &syms[ELF64_R_SYM(rel[k].r_info)];
			uint64_t value = s->st_value;
			if (s->st_shndx != SHN_UNDEF && s->st_shndx < eh->e_shnum)
				value += sh[s->st_shndx].sh_addr;
			switch (ELF64_R_TYPE(rel[k].r_info)) {
			case R_BPF_64_ABS64: {
				uint64_t v;
				if (!lddw_style) {
					memcpy(&v, p, 8);
					put64(p, v + value);
					break;
				}
				int high = rel[k].r_offset + 16 <= target->sh_size;
				uint32_t lo, hi = 0;
				memcpy(&lo, p + 4, 4);
				if (high)
					memcpy(&hi, p + 12, 4);
				v = value + (lo | (uint64_t)hi << 32);
				put32(p + 4, (uint32_t)v);
				if (high)
					put32(p + 12, (uint32_t)(v >> 32));
				break;
			}
			case R_BPF_64_ABS32:
			case R_BPF_64_NODYLD32: {
				uint32_t v;
				memcpy(&v, p, 4);
				put32(p, v + (uint32_t)value);
				break;
			}
			}
		}
		r->sh_type = SHT_PROGBITS;
	}
	f = fopen(argv[3], "wb");
	if (!f || fwrite(d, 1, (size_t)size, f) != (size_t)size || fclose(f))
		return perror(argv[3]), 1;
	free(d);
	return 0;
}
