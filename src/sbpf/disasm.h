/*
 * One sBPF instruction as text, in the reference VM's assembler syntax ("ldxb r2, [r1+0xc]",
 * "jeq r3, 8, lbb_19", "call function_4", "syscall sol_log_"), for annotation and error
 * messages. Jump targets are absolute ("lbb_PC"); calls name the function from the
 * program's symbols, or "function_PC".
 */
#ifndef TALLY_SBPF_DISASM_H
#define TALLY_SBPF_DISASM_H

#include <stddef.h>
#include <stdint.h>

#include "sbpf/isa.h"

struct sbpf_program;

/* The instruction at pc of a loaded program (calls resolved as the program resolves
 * them). Returns the length written, truncated to size - 1. */
size_t sbpf_disasm(const struct sbpf_program *p, uint64_t pc, char *buf, size_t size);

/* A raw slot (slot[0..8), and slot[8..16) for lddw when next is non-NULL) of version v. */
size_t sbpf_disasm_raw(enum sbpf_version v, const uint8_t *slot, const uint8_t *next,
		       uint64_t pc, char *buf, size_t size);

#endif
