/*
 * Call-frame information: .eh_frame (found through .eh_frame_hdr's binary-search table, or
 * indexed on first use when there is no usable header) and .debug_frame (indexed on first
 * use). A lookup runs the CIE and FDE programs up to the pc and returns the row in force
 * there. DWARF expressions (DW_CFA_def_cfa_expression in PLT entries, DW_CFA_expression)
 * are evaluated by dwarf_expr_eval() with caller-supplied register and memory readers.
 *
 * Ownership: struct dwarf_cfi points into the section bytes given to dwarf_cfi_open(), which
 * must outlive it, and owns only its index. Rows point into the same bytes (expressions).
 * Not thread-safe: the first lookup that misses the header builds the index.
 */
#ifndef TALLY_DWARF_CFI_H
#define TALLY_DWARF_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Registers whose rules a row keeps: x86-64 uses 0-16 (16 is the return address column),
 * aarch64 0-32 (x30 is the link register, 31 sp). Rules for higher numbers (vector
 * registers) are parsed and dropped: unwinding never needs them. */
#define DWARF_CFI_NREGS 33

enum dwarf_rule_kind {
	DWARF_RULE_UNSET = 0,  /* never mentioned: same value for callee-saved registers */
	DWARF_RULE_UNDEFINED,  /* explicitly undefined: for the return address, the outermost frame */
	DWARF_RULE_SAME,
	DWARF_RULE_OFFSET,     /* saved at CFA + off */
	DWARF_RULE_VAL_OFFSET, /* value is CFA + off */
	DWARF_RULE_REGISTER,   /* in register reg */
	DWARF_RULE_EXPR,       /* saved at the address the expression computes (CFA pushed first) */
	DWARF_RULE_VAL_EXPR,   /* value is what the expression computes (CFA pushed first) */
};

struct dwarf_rule {
	uint8_t kind;
	uint16_t reg;
	int64_t off;
	const uint8_t *expr;
	uint32_t expr_len;
};

enum dwarf_cfa_kind { DWARF_CFA_REG_OFFSET = 0, DWARF_CFA_EXPR };

struct dwarf_cfi_row {
	uint64_t start, end; /* the pcs [start, end) this row covers, in the file's addresses */
	struct {
		uint8_t kind;
		uint16_t reg;
		int64_t off;
		const uint8_t *expr;
		uint32_t expr_len;
	} cfa;
	struct dwarf_rule regs[DWARF_CFI_NREGS];
	uint16_t ra_reg;
	bool signal_frame; /* 'S' augmentation: the pc is not a return address, don't subtract 1 */
};

struct dwarf_cfi_section {
	const uint8_t *data; /* NULL when absent */
	size_t size;
	uint64_t vaddr; /* where the section is loaded, for pc-relative pointers */
};

struct dwarf_cfi_src {
	const char *name; /* the file, for messages */
	struct dwarf_cfi_section eh_frame, eh_frame_hdr, debug_frame;
	uint8_t addr_size; /* 8 or 4 */
	bool big_endian;
};

struct dwarf_cfi;

int dwarf_cfi_open(const struct dwarf_cfi_src *src, struct dwarf_cfi **out);
/* The CFI of an ELF file: .eh_frame[_hdr] from f, .debug_frame from f or, when f has none,
 * from its separate debug file dbg (may be NULL). Both files must outlive the result. */
struct elf_file;
int dwarf_cfi_open_elf(struct elf_file *f, struct elf_file *dbg, struct dwarf_cfi **out);
void dwarf_cfi_close(struct dwarf_cfi *c);

/* The row for pc: 0, -ENOENT (no message) when no FDE covers pc, or a negative code with
 * a message naming the file and offset of the malformed entry. */
int dwarf_cfi_row_at(struct dwarf_cfi *c, uint64_t pc, struct dwarf_cfi_row *row);

/* Calls fn with the pc range of every FDE, .eh_frame first, then .debug_frame (tests,
 * dumps). A non-zero return stops the walk and is returned. */
int dwarf_cfi_each_fde(struct dwarf_cfi *c, int (*fn)(uint64_t start, uint64_t end, void *arg),
		       void *arg);

/* DWARF expression evaluation (the stack machine subset CFI uses: literals, constants,
 * breg, stack operations, arithmetic, comparisons, branches, deref). */
struct dwarf_expr_env {
	int (*reg)(void *arg, unsigned regno, uint64_t *val);
	int (*mem)(void *arg, uint64_t addr, unsigned size, uint64_t *val);
	void *arg;
	uint8_t addr_size;
	bool big_endian;
};

/* Evaluates expr with initial (when push_initial) on the stack; the result is the top of
 * the stack. -EINVAL for a malformed or unsupported expression, or the reader's error. */
int dwarf_expr_eval(const uint8_t *expr, size_t len, const struct dwarf_expr_env *env,
		    bool push_initial, uint64_t initial, uint64_t *result);

#endif
