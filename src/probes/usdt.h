/*
 * USDT probes: the systemtap v3 "stapsdt" notes of an ELF file (what <sys/sdt.h> and
 * tally/trace.h emit), their argument specs, and where a uprobe goes (file offsets of the
 * probe and of its semaphore). Argument specs are assembler operands ("-4@%edi",
 * "8@-16(%rbp,%rax,8)", "-8@[sp, 8]"); x86-64 and aarch64 are decoded.
 *
 * Ownership: a struct usdt_list owns its probes and their strings (one arena);
 * usdt_list_free() releases them. The list does not keep the ELF file.
 */
#ifndef TALLY_PROBES_USDT_H
#define TALLY_PROBES_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

struct elf_file;

enum usdt_arch { USDT_ARCH_X86_64, USDT_ARCH_AARCH64 };

enum usdt_arg_kind {
	USDT_ARG_CONST, /* value */
	USDT_ARG_REG,   /* the register reg */
	USDT_ARG_MEM,   /* at reg + index * scale + value (+ the address of symbol) */
};

/* Registers: x86-64 uses USDT_X86_*; aarch64 uses 0-30 for x0-x30 and USDT_A64_SP. */
enum {
	USDT_X86_AX, USDT_X86_BX, USDT_X86_CX, USDT_X86_DX, USDT_X86_SI, USDT_X86_DI,
	USDT_X86_BP, USDT_X86_SP, USDT_X86_R8, USDT_X86_R9, USDT_X86_R10, USDT_X86_R11,
	USDT_X86_R12, USDT_X86_R13, USDT_X86_R14, USDT_X86_R15, USDT_X86_IP,
	USDT_X86_NREGS
};
#define USDT_A64_SP 31
#define USDT_A64_NREGS 32
#define USDT_NO_REG (-1)

struct usdt_arg {
	int size;         /* bytes, as the spec says (1, 2, 4, 8; 16 for long double) */
	bool is_signed;
	bool is_float;
	enum usdt_arg_kind kind;
	int reg;          /* REG, or MEM base; USDT_NO_REG if none */
	int reg_width;    /* bytes of the named register (eax: 4) */
	int reg_shift;    /* bits: 8 for ah/bh/ch/dh, else 0 */
	int index;        /* MEM index register or USDT_NO_REG */
	int scale;        /* MEM index scale */
	int64_t value;    /* CONST value, MEM displacement */
	const char *symbol; /* MEM displacement symbol ("fv(%rip)"), or NULL */
	bool symbol_found;  /* symbol_addr is its link-time address (from .symtab/.dynsym) */
	uint64_t symbol_addr;
	const char *text; /* the operand as written, after the '@' */
};

struct usdt_probe {
	const char *provider;
	const char *name;
	uint64_t pc;             /* virtual address of the probe, adjusted for .stapsdt.base */
	uint64_t note_base;      /* .stapsdt.base as recorded in the note */
	uint64_t semaphore;      /* virtual address, 0 when the probe has none */
	uint64_t pc_offset;      /* file offset of the probe */
	uint64_t sem_offset;     /* file offset of the semaphore, 0 when none */
	uint64_t note_offset;    /* file offset of the note's descriptor */
	const char *args_text;   /* the argument string as stored */
	struct usdt_arg *args;
	size_t nargs;
};

struct usdt_list {
	struct usdt_probe *v;
	size_t n, cap;
	enum usdt_arch arch;
	bool relocatable; /* from an ET_REL object: addresses are unrelocated, unknown */
	struct arena arena;
};

/* Reads every stapsdt note of f. A file without notes gives an empty list (not an error);
 * a malformed note fails with a message naming the file and the note's offset. */
int usdt_read(struct elf_file *f, struct usdt_list *out);
void usdt_list_free(struct usdt_list *l);

/* Decodes one note descriptor (what follows the "stapsdt" name): pc, base, semaphore
 * (each 4 or 8 bytes), provider, name and argument string. Strings go into arena. */
int usdt_parse_desc(const uint8_t *desc, size_t size, bool is64, bool big_endian,
		    struct arena *arena, struct usdt_probe *out);

/* Parses an argument string ("-4@%edi 8@8(%rax)") into args (allocated in arena). The
 * message of a failure names the argument; callers prefix the file. */
int usdt_parse_args(const char *text, enum usdt_arch arch, struct arena *arena,
		    struct usdt_arg **args, size_t *nargs);

/* The name of register reg for arch ("rax", "x3", "sp"). */
const char *usdt_reg_name(enum usdt_arch arch, int reg);

/* Formats one argument for people: "s32 %edi", "u64 mem[%rbp-16]", "s32 $5". */
void usdt_arg_describe(const struct usdt_arg *a, enum usdt_arch arch, char *buf, size_t len);

/* provider:name matches pattern "PROVIDER:NAME", each side a shell glob; a pattern with no
 * colon matches the name alone. */
bool usdt_match(const struct usdt_probe *p, const char *pattern);

#endif
