/*
 * The sBPF instruction set: encoding, opcodes, memory layout and the per-version feature
 * switches. Opcode values and version rules follow the reference VM (anza-xyz/sbpf): v0 is
 * the deployed legacy format, v1/v2 the abandoned SIMD-0166/0173/0174 experiments, v3 adds
 * static syscalls, strict ELF headers, rodata at 0, jmp32 and callx through dst, v4 aligned
 * memory. Everything here is a constant or a tiny inline: the interpreter builds its
 * dispatch table from these once per program, so version checks cost nothing per step.
 */
#ifndef TALLY_SBPF_ISA_H
#define TALLY_SBPF_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sbpf_version { SBPF_V0, SBPF_V1, SBPF_V2, SBPF_V3, SBPF_V4, SBPF_VRESERVED };

#define SBPF_INSN_SIZE 8
#define SBPF_REGION_BITS 32
#define SBPF_REGION_SIZE (1ull << SBPF_REGION_BITS)
#define SBPF_MM_RODATA 0ull
#define SBPF_MM_BYTECODE (1ull << 32)
#define SBPF_MM_STACK (2ull << 32)
#define SBPF_MM_HEAP (3ull << 32)
#define SBPF_MM_INPUT (4ull << 32)

#define SBPF_STACK_FRAME_SIZE 4096u
#define SBPF_MAX_CALL_DEPTH 64u
#define SBPF_HEAP_SIZE_DEFAULT (32u * 1024u)

/* Instruction classes (low three bits). */
enum {
	SBPF_CLS_LD = 0x00,
	SBPF_CLS_LDX = 0x01,
	SBPF_CLS_ST = 0x02,
	SBPF_CLS_STX = 0x03,
	SBPF_CLS_ALU32 = 0x04,
	SBPF_CLS_JMP64 = 0x05,
	SBPF_CLS_JMP32 = 0x06, /* also PQR (v2) */
	SBPF_CLS_ALU64 = 0x07,
};

/* Every opcode byte the reference VM knows, by its mnemonic. */
enum sbpf_opcode {
	OP_LDDW = 0x18,
	OP_LDXB = 0x71, OP_LDXH = 0x69, OP_LDXW = 0x61, OP_LDXDW = 0x79,
	OP_STB = 0x72, OP_STH = 0x6a, OP_STW = 0x62, OP_STDW = 0x7a,
	OP_STXB = 0x73, OP_STXH = 0x6b, OP_STXW = 0x63, OP_STXDW = 0x7b,
	/* v2 moved memory classes */
	OP_LD1B = 0x2c, OP_LD2B = 0x3c, OP_LD4B = 0x8c, OP_LD8B = 0x9c,
	OP_ST1B_IMM = 0x27, OP_ST2B_IMM = 0x37, OP_ST4B_IMM = 0x87, OP_ST8B_IMM = 0x97,
	OP_ST1B_REG = 0x2f, OP_ST2B_REG = 0x3f, OP_ST4B_REG = 0x8f, OP_ST8B_REG = 0x9f,

	OP_ADD32_IMM = 0x04, OP_ADD32_REG = 0x0c, OP_SUB32_IMM = 0x14, OP_SUB32_REG = 0x1c,
	OP_MUL32_IMM = 0x24, OP_MUL32_REG = 0x2c, OP_DIV32_IMM = 0x34, OP_DIV32_REG = 0x3c,
	OP_OR32_IMM = 0x44, OP_OR32_REG = 0x4c, OP_AND32_IMM = 0x54, OP_AND32_REG = 0x5c,
	OP_LSH32_IMM = 0x64, OP_LSH32_REG = 0x6c, OP_RSH32_IMM = 0x74, OP_RSH32_REG = 0x7c,
	OP_NEG32 = 0x84, OP_MOD32_IMM = 0x94, OP_MOD32_REG = 0x9c,
	OP_XOR32_IMM = 0xa4, OP_XOR32_REG = 0xac, OP_MOV32_IMM = 0xb4, OP_MOV32_REG = 0xbc,
	OP_ARSH32_IMM = 0xc4, OP_ARSH32_REG = 0xcc, OP_LE = 0xd4, OP_BE = 0xdc,

	OP_ADD64_IMM = 0x07, OP_ADD64_REG = 0x0f, OP_SUB64_IMM = 0x17, OP_SUB64_REG = 0x1f,
	OP_MUL64_IMM = 0x27, OP_MUL64_REG = 0x2f, OP_DIV64_IMM = 0x37, OP_DIV64_REG = 0x3f,
	OP_OR64_IMM = 0x47, OP_OR64_REG = 0x4f, OP_AND64_IMM = 0x57, OP_AND64_REG = 0x5f,
	OP_LSH64_IMM = 0x67, OP_LSH64_REG = 0x6f, OP_RSH64_IMM = 0x77, OP_RSH64_REG = 0x7f,
	OP_NEG64 = 0x87, OP_MOD64_IMM = 0x97, OP_MOD64_REG = 0x9f,
	OP_XOR64_IMM = 0xa7, OP_XOR64_REG = 0xaf, OP_MOV64_IMM = 0xb7, OP_MOV64_REG = 0xbf,
	OP_ARSH64_IMM = 0xc7, OP_ARSH64_REG = 0xcf, OP_HOR64_IMM = 0xf7,

	/* PQR class (v2) */
	OP_LMUL32_IMM = 0x86, OP_LMUL32_REG = 0x8e, OP_LMUL64_IMM = 0x96, OP_LMUL64_REG = 0x9e,
	OP_UHMUL64_IMM = 0x36, OP_UHMUL64_REG = 0x3e, OP_SHMUL64_IMM = 0xb6, OP_SHMUL64_REG = 0xbe,
	OP_UDIV32_IMM = 0x46, OP_UDIV32_REG = 0x4e, OP_UDIV64_IMM = 0x56, OP_UDIV64_REG = 0x5e,
	OP_UREM32_IMM = 0x66, OP_UREM32_REG = 0x6e, OP_UREM64_IMM = 0x76, OP_UREM64_REG = 0x7e,
	OP_SDIV32_IMM = 0xc6, OP_SDIV32_REG = 0xce, OP_SDIV64_IMM = 0xd6, OP_SDIV64_REG = 0xde,
	OP_SREM32_IMM = 0xe6, OP_SREM32_REG = 0xee, OP_SREM64_IMM = 0xf6, OP_SREM64_REG = 0xfe,

	OP_JA = 0x05,
	OP_JEQ_IMM = 0x15, OP_JEQ_REG = 0x1d, OP_JGT_IMM = 0x25, OP_JGT_REG = 0x2d,
	OP_JGE_IMM = 0x35, OP_JGE_REG = 0x3d, OP_JSET_IMM = 0x45, OP_JSET_REG = 0x4d,
	OP_JNE_IMM = 0x55, OP_JNE_REG = 0x5d, OP_JSGT_IMM = 0x65, OP_JSGT_REG = 0x6d,
	OP_JSGE_IMM = 0x75, OP_JSGE_REG = 0x7d, OP_CALL_IMM = 0x85, OP_CALL_REG = 0x8d,
	OP_EXIT = 0x95, OP_JLT_IMM = 0xa5, OP_JLT_REG = 0xad, OP_JLE_IMM = 0xb5,
	OP_JLE_REG = 0xbd, OP_JSLT_IMM = 0xc5, OP_JSLT_REG = 0xcd, OP_JSLE_IMM = 0xd5,
	OP_JSLE_REG = 0xdd,
	/* jmp32 (v3): the JMP64 conditional opcodes with class 6 */
};

/* A decoded instruction slot. imm is sign-extended; lddw's second half is not merged. */
struct sbpf_insn {
	uint8_t op;
	uint8_t dst;
	uint8_t src;
	int16_t off;
	int64_t imm;
};

static inline struct sbpf_insn sbpf_decode(const uint8_t *p)
{
	struct sbpf_insn i;
	i.op = p[0];
	i.dst = p[1] & 0x0f;
	i.src = p[1] >> 4;
	i.off = (int16_t)(uint16_t)(p[2] | p[3] << 8);
	i.imm = (int32_t)((uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			  (uint32_t)p[7] << 24);
	return i;
}

/* Version switches, named as in the reference so the rules can be compared line by line. */
static inline bool sbpf_manual_stack_frame_bump(enum sbpf_version v) { return v == SBPF_V1 || v == SBPF_V2; }
static inline bool sbpf_stack_frame_gaps(enum sbpf_version v) { return v == SBPF_V0; }
static inline bool sbpf_enable_pqr(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_explicit_sign_ext(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_swap_sub_imm(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_disable_neg(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_callx_uses_src(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_disable_lddw(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_disable_le(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_moved_mem_classes(enum sbpf_version v) { return v == SBPF_V2; }
static inline bool sbpf_static_syscalls(enum sbpf_version v) { return v >= SBPF_V3; }
static inline bool sbpf_strict_elf(enum sbpf_version v) { return v >= SBPF_V3; }
static inline bool sbpf_lower_rodata(enum sbpf_version v) { return v >= SBPF_V3; }
static inline bool sbpf_enable_jmp32(enum sbpf_version v) { return v >= SBPF_V3; }
static inline bool sbpf_callx_uses_dst(enum sbpf_version v) { return v >= SBPF_V3; }

/*
 * Instruction kinds: one per distinct semantics, shared by the verifier, the disassembler
 * and the interpreter's dispatch table. Several opcode bytes mean different things in
 * different versions (0x27 is mul64 in v0 and stb in v2), so the kind of a byte depends on
 * the version. X(kind, mnemonic, format).
 */
#define SBPF_KINDS(X)                                                                      \
	X(INVALID, "unknown", F_NONE)                                                      \
	X(LDDW, "lddw", F_LDDW)                                                            \
	X(LD1, "ldxb", F_LD) X(LD2, "ldxh", F_LD) X(LD4, "ldxw", F_LD) X(LD8, "ldxdw", F_LD) \
	X(ST1I, "stb", F_STI) X(ST2I, "sth", F_STI) X(ST4I, "stw", F_STI) X(ST8I, "stdw", F_STI) \
	X(ST1R, "stxb", F_STR) X(ST2R, "stxh", F_STR) X(ST4R, "stxw", F_STR)                 \
	X(ST8R, "stxdw", F_STR)                                                            \
	X(ADD32I, "add32", F_AI) X(ADD32R, "add32", F_AR) X(SUB32I, "sub32", F_AI)          \
	X(SUB32R, "sub32", F_AR) X(MUL32I, "mul32", F_AI) X(MUL32R, "mul32", F_AR)          \
	X(DIV32I, "div32", F_AI) X(DIV32R, "div32", F_AR) X(OR32I, "or32", F_AI)            \
	X(OR32R, "or32", F_AR) X(AND32I, "and32", F_AI) X(AND32R, "and32", F_AR)            \
	X(LSH32I, "lsh32", F_AI) X(LSH32R, "lsh32", F_AR) X(RSH32I, "rsh32", F_AI)          \
	X(RSH32R, "rsh32", F_AR) X(NEG32, "neg32", F_NEG) X(MOD32I, "mod32", F_AI)          \
	X(MOD32R, "mod32", F_AR) X(XOR32I, "xor32", F_AI) X(XOR32R, "xor32", F_AR)          \
	X(MOV32I, "mov32", F_AI) X(MOV32R, "mov32", F_AR) X(ARSH32I, "arsh32", F_AI)        \
	X(ARSH32R, "arsh32", F_AR) X(LE, "le", F_END) X(BE, "be", F_END)                    \
	X(ADD64I, "add64", F_AI) X(ADD64R, "add64", F_AR) X(SUB64I, "sub64", F_AI)          \
	X(SUB64R, "sub64", F_AR) X(MUL64I, "mul64", F_AI) X(MUL64R, "mul64", F_AR)          \
	X(DIV64I, "div64", F_AI) X(DIV64R, "div64", F_AR) X(OR64I, "or64", F_AI)            \
	X(OR64R, "or64", F_AR) X(AND64I, "and64", F_AI) X(AND64R, "and64", F_AR)            \
	X(LSH64I, "lsh64", F_AI) X(LSH64R, "lsh64", F_AR) X(RSH64I, "rsh64", F_AI)          \
	X(RSH64R, "rsh64", F_AR) X(NEG64, "neg64", F_NEG) X(MOD64I, "mod64", F_AI)          \
	X(MOD64R, "mod64", F_AR) X(XOR64I, "xor64", F_AI) X(XOR64R, "xor64", F_AR)          \
	X(MOV64I, "mov64", F_AI) X(MOV64R, "mov64", F_AR) X(ARSH64I, "arsh64", F_AI)        \
	X(ARSH64R, "arsh64", F_AR) X(HOR64I, "hor64", F_AI)                                 \
	X(LMUL32I, "lmul32", F_AI) X(LMUL32R, "lmul32", F_AR) X(LMUL64I, "lmul64", F_AI)    \
	X(LMUL64R, "lmul64", F_AR) X(UHMUL64I, "uhmul64", F_AI) X(UHMUL64R, "uhmul64", F_AR) \
	X(SHMUL64I, "shmul64", F_AI) X(SHMUL64R, "shmul64", F_AR)                           \
	X(UDIV32I, "udiv32", F_AI) X(UDIV32R, "udiv32", F_AR) X(UDIV64I, "udiv64", F_AI)    \
	X(UDIV64R, "udiv64", F_AR) X(UREM32I, "urem32", F_AI) X(UREM32R, "urem32", F_AR)    \
	X(UREM64I, "urem64", F_AI) X(UREM64R, "urem64", F_AR) X(SDIV32I, "sdiv32", F_AI)    \
	X(SDIV32R, "sdiv32", F_AR) X(SDIV64I, "sdiv64", F_AI) X(SDIV64R, "sdiv64", F_AR)    \
	X(SREM32I, "srem32", F_AI) X(SREM32R, "srem32", F_AR) X(SREM64I, "srem64", F_AI)    \
	X(SREM64R, "srem64", F_AR)                                                         \
	X(JEQ32I, "jeq32", F_JI) X(JEQ32R, "jeq32", F_JR) X(JGT32I, "jgt32", F_JI)          \
	X(JGT32R, "jgt32", F_JR) X(JGE32I, "jge32", F_JI) X(JGE32R, "jge32", F_JR)          \
	X(JLT32I, "jlt32", F_JI) X(JLT32R, "jlt32", F_JR) X(JLE32I, "jle32", F_JI)          \
	X(JLE32R, "jle32", F_JR) X(JSET32I, "jset32", F_JI) X(JSET32R, "jset32", F_JR)      \
	X(JNE32I, "jne32", F_JI) X(JNE32R, "jne32", F_JR) X(JSGT32I, "jsgt32", F_JI)        \
	X(JSGT32R, "jsgt32", F_JR) X(JSGE32I, "jsge32", F_JI) X(JSGE32R, "jsge32", F_JR)    \
	X(JSLT32I, "jslt32", F_JI) X(JSLT32R, "jslt32", F_JR) X(JSLE32I, "jsle32", F_JI)    \
	X(JSLE32R, "jsle32", F_JR)                                                         \
	X(JA, "ja", F_JA) X(JEQI, "jeq", F_JI) X(JEQR, "jeq", F_JR) X(JGTI, "jgt", F_JI)    \
	X(JGTR, "jgt", F_JR) X(JGEI, "jge", F_JI) X(JGER, "jge", F_JR) X(JLTI, "jlt", F_JI) \
	X(JLTR, "jlt", F_JR) X(JLEI, "jle", F_JI) X(JLER, "jle", F_JR)                      \
	X(JSETI, "jset", F_JI) X(JSETR, "jset", F_JR) X(JNEI, "jne", F_JI)                  \
	X(JNER, "jne", F_JR) X(JSGTI, "jsgt", F_JI) X(JSGTR, "jsgt", F_JR)                  \
	X(JSGEI, "jsge", F_JI) X(JSGER, "jsge", F_JR) X(JSLTI, "jslt", F_JI)                \
	X(JSLTR, "jslt", F_JR) X(JSLEI, "jsle", F_JI) X(JSLER, "jsle", F_JR)                \
	X(CALL, "call", F_CALL) X(CALLX, "callx", F_CALLX) X(EXIT, "exit", F_EXIT)

#define SBPF_KIND_ENUM(k, m, f) SBPF_K_##k,
enum sbpf_kind { SBPF_KINDS(SBPF_KIND_ENUM) SBPF_K_COUNT };
#undef SBPF_KIND_ENUM

/* How an instruction's operands are written (disassembly) and which fields it uses. */
enum sbpf_format {
	F_NONE, F_LDDW, F_LD, F_STI, F_STR, F_AI, F_AR, F_NEG, F_END,
	F_JA, F_JI, F_JR, F_CALL, F_CALLX, F_EXIT,
};

/* The kind of opcode byte op in version v (SBPF_K_INVALID when v has no such opcode). */
enum sbpf_kind sbpf_kind_of(enum sbpf_version v, uint8_t op);
const char *sbpf_kind_mnemonic(enum sbpf_kind k);
enum sbpf_format sbpf_kind_format(enum sbpf_kind k);

/* "v0".."v4" to a version; -1 on an unknown name. */
int sbpf_version_parse(const char *s, enum sbpf_version *out);

/* Murmur3 (32-bit, seed 0) of a symbol name: the key of syscalls and, in v0, functions. */
uint32_t sbpf_hash(const void *data, size_t len);

#endif
