/*
 * A loaded sBPF program: the ELF loader (v0-v2 lenient rules, v3+ strict rules), raw
 * bytecode, relocations, the function registry and the verifier. Loading follows the
 * reference VM (anza-xyz/sbpf) rule for rule; every rejection carries the reference's error
 * name and arguments (SBPF_LOAD_ERRORS), so a message reads like
 * `prog.so: WritableSectionNotSupported(".data")`.
 *
 * Ownership: struct sbpf_program owns its relocated copy of the file, the read-only region,
 * the pre-decoded instructions and the registry; sbpf_program_free() releases all of it.
 * The syscall table passed at load must outlive the program.
 */
#ifndef TALLY_SBPF_PROGRAM_H
#define TALLY_SBPF_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "sbpf/isa.h"

struct sbpf_syscalls;

/* How a call instruction was resolved at load time (struct sbpf_dinsn.call). */
enum sbpf_call_kind {
	SBPF_CALL_UNRESOLVED, /* runs into UnsupportedInstruction */
	SBPF_CALL_SYSCALL,    /* imm: index into the syscall table */
	SBPF_CALL_INTERNAL,   /* imm: target pc */
	SBPF_CALL_OUTSIDE,    /* registered target outside the text: CallOutsideTextSegment */
};

/* One pre-decoded instruction slot (lddw keeps its full 64-bit immediate in the first).
 * The array has one more entry than the program, a sentinel of kind SBPF_K_COUNT. */
struct sbpf_dinsn {
	uint8_t kind; /* enum sbpf_kind for the program's version */
	uint8_t dst;
	uint8_t src;
	uint8_t pad;  /* enum sbpf_call_kind for calls */
	int32_t off;
	int64_t imm;
};

/* The function registry: key (murmur3 of the pc, or pc in v3) -> pc, with an optional name. */
struct sbpf_func {
	uint32_t key;
	uint32_t pc;
	const char *name; /* "" when unnamed */
};
struct sbpf_registry {
	struct sbpf_func *v; /* open-addressed by key; key 0 slots are told apart by used[] */
	uint8_t *used;
	size_t cap; /* power of two */
	size_t n;
};
int sbpf_registry_add(struct sbpf_registry *r, uint32_t key, uint32_t pc, const char *name);
const struct sbpf_func *sbpf_registry_get(const struct sbpf_registry *r, uint32_t key);
bool sbpf_registry_remove(struct sbpf_registry *r, uint32_t key);
void sbpf_registry_free(struct sbpf_registry *r);

/* A function symbol from .symtab (for names in errors, disassembly and profiles). */
struct sbpf_symbol {
	uint64_t pc;
	uint64_t end_pc; /* exclusive; the next symbol's pc when the size is 0 */
	const char *name;
};

struct sbpf_load_options {
	/* Deployment checks (the reference's reject_broken_elfs): unknown syscalls and
	 * sh_addr != sh_offset are errors instead of run-time failures. */
	bool reject_broken_elfs;
	/* Only this version is accepted (SBPF_VRESERVED: any of v0..v4). For raw bytecode
	 * it is the version to run it as (default v3). */
	enum sbpf_version version;
	/* The bytes are bytecode, not an ELF file. */
	bool raw;
};

struct sbpf_program {
	enum sbpf_version version;
	const char *name;         /* for messages */
	const uint8_t *text;      /* the bytecode, inside image or ro */
	uint64_t text_len;        /* bytes */
	uint64_t text_vaddr;      /* VM address of text[0] */
	uint64_t ninsns;          /* text_len / 8 */
	uint64_t entry_pc;
	const uint8_t *ro;        /* the read-only region's bytes (may be NULL when empty) */
	uint64_t ro_len;
	uint64_t ro_vaddr;
	struct sbpf_dinsn *code;  /* ninsns entries */
	struct sbpf_registry funcs;
	struct sbpf_symbol *syms; /* sorted by pc */
	size_t nsyms;
	const struct sbpf_syscalls *syscalls;
	/* owned storage */
	uint8_t *image;           /* relocated copy of the file (or of the raw bytecode) */
	uint8_t *ro_owned;
	struct arena arena;
};

/* Loads an ELF (ET_DYN sBPF, or an ET_REL eBPF object) or raw bytecode from memory. On failure returns a negative
 * code with the message "NAME: ReferenceError(args)[: detail]". */
int sbpf_program_load(const char *name, const uint8_t *bytes, size_t size,
		      const struct sbpf_syscalls *syscalls, const struct sbpf_load_options *opt,
		      struct sbpf_program **out);
/* Reads the file and loads it. */
int sbpf_program_load_file(const char *path, const struct sbpf_syscalls *syscalls,
			   const struct sbpf_load_options *opt, struct sbpf_program **out);
void sbpf_program_free(struct sbpf_program *p);

/* The function symbol covering pc, or NULL. */
const struct sbpf_symbol *sbpf_program_symbol_at(const struct sbpf_program *p, uint64_t pc);
/* The syscall the instruction at pc calls, or NULL when it calls none. */
const struct sbpf_syscall *sbpf_program_syscall_at(const struct sbpf_program *p, uint64_t pc);

/* The reference verifier (RequisiteVerifier): 0 or an error "VerifierError(...)". */
int sbpf_verify(const uint8_t *text, uint64_t len, enum sbpf_version v, char *msg,
		size_t msg_size);
/* The reference's LocalVerifier (what `solana program deploy` checks on v3+): every static
 * syscall in the table, no unlinked call; 0 or "VerifierError(...)". */
int sbpf_verify_local(const uint8_t *text, uint64_t len, enum sbpf_version v,
		      const struct sbpf_syscalls *syscalls, char *msg, size_t msg_size);

#endif
