/*
 * The sBPF loader's own ELF64 reader (internal to src/sbpf). A generic ELF reader accepts
 * files the sBPF loader must reject (overlapping tables, unordered sections, misaligned
 * tables, over-long names), and the loader's error names depend on which check fails
 * first, so this reader applies the reference parser's checks in the reference's order.
 */
#ifndef TALLY_SBPF_ELF_PARSE_H
#define TALLY_SBPF_ELF_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parser failures, named as the reference's ElfParserError. */
enum sbpf_elf_err {
	SBPF_ELF_OK,
	SBPF_ELF_INVALID_FILE_HEADER,
	SBPF_ELF_INVALID_PROGRAM_HEADER,
	SBPF_ELF_INVALID_SECTION_HEADER,
	SBPF_ELF_STRING_TOO_LONG,
	SBPF_ELF_OUT_OF_BOUNDS,
	SBPF_ELF_INVALID_SIZE,
	SBPF_ELF_OVERLAP,
	SBPF_ELF_SECTION_NOT_IN_ORDER,
	SBPF_ELF_NO_SECTION_NAME_STRING_TABLE,
	SBPF_ELF_INVALID_DYNAMIC_SECTION_TABLE,
	SBPF_ELF_INVALID_ALIGNMENT,
	SBPF_ELF_NO_STRING_TABLE,
	SBPF_ELF_NO_DYNAMIC_STRING_TABLE,
};

#define SBPF_ELF_SECTION_NAME_MAX 16
#define SBPF_ELF_SYMBOL_NAME_MAX 64
#define SBPF_ELF_DEBUG_SYMBOL_NAME_MAX 255
/* The reference's DT_NUM: dynamic tags from it on are not kept (<elf.h>'s DT_NUM, 38 since
 * DT_RELR, is larger). */
#define SBPF_ELF_DT_NUM 35

struct sbpf_elf_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct sbpf_elf_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

struct sbpf_elf_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t addralign, entsize;
};

struct sbpf_elf_sym {
	uint32_t name;
	uint8_t info, other;
	uint16_t shndx;
	uint64_t value, size;
};

/* A parsed file. Tables are malloc'd copies; the bytes are borrowed. */
struct sbpf_elf {
	const uint8_t *bytes;
	size_t size;
	struct sbpf_elf_ehdr eh;
	struct sbpf_elf_phdr *ph;
	size_t nph;
	struct sbpf_elf_shdr *sh;
	size_t nsh;
	const struct sbpf_elf_shdr *shstrtab, *symtab, *strtab, *dynstr;
	uint64_t dyn[SBPF_ELF_DT_NUM];
	bool has_rel;
	uint64_t rel_off, rel_count;
	bool has_dynsym;
	uint64_t dynsym_off, dynsym_count;
	/* set with SBPF_ELF_STRING_TOO_LONG: the bytes that had no NUL, and the limit */
	char too_long[SBPF_ELF_DEBUG_SYMBOL_NAME_MAX + 1];
	size_t too_long_max;
};

/* The file header alone (strict loading reads only this and the program headers). */
enum sbpf_elf_err sbpf_elf_read_ehdr(const uint8_t *b, size_t size, struct sbpf_elf_ehdr *eh);
enum sbpf_elf_err sbpf_elf_read_phdr(const uint8_t *b, size_t size, uint64_t off,
				     struct sbpf_elf_phdr *ph);
enum sbpf_elf_err sbpf_elf_read_shdr(const uint8_t *b, size_t size, uint64_t off,
				     struct sbpf_elf_shdr *sh);
enum sbpf_elf_err sbpf_elf_read_sym(const uint8_t *b, size_t size, uint64_t off,
				    struct sbpf_elf_sym *s);

/* The lenient parse (the reference's Elf64::parse). On failure e is left for sbpf_elf_free. */
enum sbpf_elf_err sbpf_elf_parse(const uint8_t *b, size_t size, struct sbpf_elf *e);
void sbpf_elf_free(struct sbpf_elf *e);

/* A NUL-terminated string at off in a SHT_STRTAB section, at most max bytes long. */
enum sbpf_elf_err sbpf_elf_string(struct sbpf_elf *e, const struct sbpf_elf_shdr *strtab,
				  uint64_t off, size_t max, const char **s, size_t *len);
enum sbpf_elf_err sbpf_elf_section_name(struct sbpf_elf *e, const struct sbpf_elf_shdr *sh,
					const char **s, size_t *len);
/* True when the section's name is exactly name (false when the name cannot be read). */
bool sbpf_elf_section_is(struct sbpf_elf *e, const struct sbpf_elf_shdr *sh, const char *name);

/* The reference's Debug spelling of a parser error, e.g. `StringTooLong(".bss.x", 16)`. */
void sbpf_elf_err_format(const struct sbpf_elf *e, enum sbpf_elf_err err, char *buf, size_t size);

struct sbpf_program;
/* Fills p->syms from .symtab and .dynsym function symbols (best effort: a table that cannot
 * be read gives no names, never an error). */
void sbpf_collect_symbols(struct sbpf_program *p, const uint8_t *bytes, size_t size);

#endif
