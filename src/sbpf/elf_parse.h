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
enum sx_err {
	SX_OK,
	SX_INVALID_FILE_HEADER,
	SX_INVALID_PROGRAM_HEADER,
	SX_INVALID_SECTION_HEADER,
	SX_STRING_TOO_LONG,
	SX_OUT_OF_BOUNDS,
	SX_INVALID_SIZE,
	SX_OVERLAP,
	SX_SECTION_NOT_IN_ORDER,
	SX_NO_SECTION_NAME_STRING_TABLE,
	SX_INVALID_DYNAMIC_SECTION_TABLE,
	SX_INVALID_ALIGNMENT,
	SX_NO_STRING_TABLE,
	SX_NO_DYNAMIC_STRING_TABLE,
};

#define SX_SECTION_NAME_MAX 16
#define SX_SYMBOL_NAME_MAX 64
#define SX_DEBUG_SYMBOL_NAME_MAX 255
#define SX_DT_NUM 35

struct sx_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct sx_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

struct sx_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t addralign, entsize;
};

struct sx_sym {
	uint32_t name;
	uint8_t info, other;
	uint16_t shndx;
	uint64_t value, size;
};

/* A parsed file. Tables are malloc'd copies; the bytes are borrowed. */
struct sx_elf {
	const uint8_t *bytes;
	size_t size;
	struct sx_ehdr eh;
	struct sx_phdr *ph;
	size_t nph;
	struct sx_shdr *sh;
	size_t nsh;
	const struct sx_shdr *shstrtab, *symtab, *strtab, *dynstr;
	uint64_t dyn[SX_DT_NUM];
	bool has_rel;
	uint64_t rel_off, rel_count;
	bool has_dynsym;
	uint64_t dynsym_off, dynsym_count;
	/* set with SX_STRING_TOO_LONG: the bytes that had no NUL, and the limit */
	char too_long[SX_DEBUG_SYMBOL_NAME_MAX + 1];
	size_t too_long_max;
};

/* The file header alone (strict loading reads only this and the program headers). */
enum sx_err sx_read_ehdr(const uint8_t *b, size_t size, struct sx_ehdr *eh);
enum sx_err sx_read_phdr(const uint8_t *b, size_t size, uint64_t off, struct sx_phdr *ph);
enum sx_err sx_read_shdr(const uint8_t *b, size_t size, uint64_t off, struct sx_shdr *sh);
enum sx_err sx_read_sym(const uint8_t *b, size_t size, uint64_t off, struct sx_sym *s);

/* The lenient parse (the reference's Elf64::parse). On failure e is left for sx_free. */
enum sx_err sx_parse(const uint8_t *b, size_t size, struct sx_elf *e);
void sx_free(struct sx_elf *e);

/* A NUL-terminated string at off in a SHT_STRTAB section, at most max bytes long. */
enum sx_err sx_string(struct sx_elf *e, const struct sx_shdr *strtab, uint64_t off, size_t max,
		      const char **s, size_t *len);
enum sx_err sx_section_name(struct sx_elf *e, const struct sx_shdr *sh, const char **s,
			    size_t *len);
/* True when the section's name is exactly name (false when the name cannot be read). */
bool sx_section_is(struct sx_elf *e, const struct sx_shdr *sh, const char *name);

/* The reference's Debug spelling of a parser error, e.g. `StringTooLong(".bss.x", 16)`. */
void sx_err_format(const struct sx_elf *e, enum sx_err err, char *buf, size_t size);

struct sbpf_program;
/* Fills p->syms from .symtab and .dynsym function symbols (best effort: a table that cannot
 * be read gives no names, never an error). */
void sbpf_collect_symbols(struct sbpf_program *p, const uint8_t *bytes, size_t size);

#endif
