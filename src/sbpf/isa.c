/*
 * Opcode bytes to instruction kinds per version, version names, and the murmur3 hash that
 * names syscalls and (before v3) functions. The opcode map follows the reference
 * interpreter's match arms and their version guards.
 */
#include "sbpf/isa.h"

#include <string.h>

#define K(x) SBPF_K_##x

/* Opcodes whose meaning never changes between versions. */
static enum sbpf_kind common_kind(uint8_t op)
{
	switch (op) {
	case OP_ADD32_IMM: return K(ADD32I);
	case OP_ADD32_REG: return K(ADD32R);
	case OP_SUB32_IMM: return K(SUB32I);
	case OP_SUB32_REG: return K(SUB32R);
	case OP_OR32_IMM: return K(OR32I);
	case OP_OR32_REG: return K(OR32R);
	case OP_AND32_IMM: return K(AND32I);
	case OP_AND32_REG: return K(AND32R);
	case OP_LSH32_IMM: return K(LSH32I);
	case OP_LSH32_REG: return K(LSH32R);
	case OP_RSH32_IMM: return K(RSH32I);
	case OP_RSH32_REG: return K(RSH32R);
	case OP_XOR32_IMM: return K(XOR32I);
	case OP_XOR32_REG: return K(XOR32R);
	case OP_MOV32_IMM: return K(MOV32I);
	case OP_MOV32_REG: return K(MOV32R);
	case OP_ARSH32_IMM: return K(ARSH32I);
	case OP_ARSH32_REG: return K(ARSH32R);
	case OP_BE: return K(BE);
	case OP_ADD64_IMM: return K(ADD64I);
	case OP_ADD64_REG: return K(ADD64R);
	case OP_SUB64_IMM: return K(SUB64I);
	case OP_SUB64_REG: return K(SUB64R);
	case OP_OR64_IMM: return K(OR64I);
	case OP_OR64_REG: return K(OR64R);
	case OP_AND64_IMM: return K(AND64I);
	case OP_AND64_REG: return K(AND64R);
	case OP_LSH64_IMM: return K(LSH64I);
	case OP_LSH64_REG: return K(LSH64R);
	case OP_RSH64_IMM: return K(RSH64I);
	case OP_RSH64_REG: return K(RSH64R);
	case OP_XOR64_IMM: return K(XOR64I);
	case OP_XOR64_REG: return K(XOR64R);
	case OP_MOV64_IMM: return K(MOV64I);
	case OP_MOV64_REG: return K(MOV64R);
	case OP_ARSH64_IMM: return K(ARSH64I);
	case OP_ARSH64_REG: return K(ARSH64R);
	case OP_JA: return K(JA);
	case OP_JEQ_IMM: return K(JEQI);
	case OP_JEQ_REG: return K(JEQR);
	case OP_JGT_IMM: return K(JGTI);
	case OP_JGT_REG: return K(JGTR);
	case OP_JGE_IMM: return K(JGEI);
	case OP_JGE_REG: return K(JGER);
	case OP_JLT_IMM: return K(JLTI);
	case OP_JLT_REG: return K(JLTR);
	case OP_JLE_IMM: return K(JLEI);
	case OP_JLE_REG: return K(JLER);
	case OP_JSET_IMM: return K(JSETI);
	case OP_JSET_REG: return K(JSETR);
	case OP_JNE_IMM: return K(JNEI);
	case OP_JNE_REG: return K(JNER);
	case OP_JSGT_IMM: return K(JSGTI);
	case OP_JSGT_REG: return K(JSGTR);
	case OP_JSGE_IMM: return K(JSGEI);
	case OP_JSGE_REG: return K(JSGER);
	case OP_JSLT_IMM: return K(JSLTI);
	case OP_JSLT_REG: return K(JSLTR);
	case OP_JSLE_IMM: return K(JSLEI);
	case OP_JSLE_REG: return K(JSLER);
	case OP_CALL_IMM: return K(CALL);
	case OP_CALL_REG: return K(CALLX);
	case OP_EXIT: return K(EXIT);
	default: return K(INVALID);
	}
}

/* The classic load/store classes, present unless v2 moved them. */
static enum sbpf_kind classic_memory_kind(uint8_t op)
{
	switch (op) {
	case OP_LDXB: return K(LD1);
	case OP_LDXH: return K(LD2);
	case OP_LDXW: return K(LD4);
	case OP_LDXDW: return K(LD8);
	case OP_STB: return K(ST1I);
	case OP_STH: return K(ST2I);
	case OP_STW: return K(ST4I);
	case OP_STDW: return K(ST8I);
	case OP_STXB: return K(ST1R);
	case OP_STXH: return K(ST2R);
	case OP_STXW: return K(ST4R);
	case OP_STXDW: return K(ST8R);
	default: return K(INVALID);
	}
}

/* v2's memory instructions, on opcodes that were mul/div/neg/mod before. */
static enum sbpf_kind moved_memory_kind(uint8_t op)
{
	switch (op) {
	case OP_LD1B: return K(LD1);
	case OP_LD2B: return K(LD2);
	case OP_LD4B: return K(LD4);
	case OP_LD8B: return K(LD8);
	case OP_ST1B_IMM: return K(ST1I);
	case OP_ST2B_IMM: return K(ST2I);
	case OP_ST4B_IMM: return K(ST4I);
	case OP_ST8B_IMM: return K(ST8I);
	case OP_ST1B_REG: return K(ST1R);
	case OP_ST2B_REG: return K(ST2R);
	case OP_ST4B_REG: return K(ST4R);
	case OP_ST8B_REG: return K(ST8R);
	default: return K(INVALID);
	}
}

/* mul/div/mod, replaced by the PQR class in v2. */
static enum sbpf_kind muldiv_kind(uint8_t op)
{
	switch (op) {
	case OP_MUL32_IMM: return K(MUL32I);
	case OP_MUL32_REG: return K(MUL32R);
	case OP_DIV32_IMM: return K(DIV32I);
	case OP_DIV32_REG: return K(DIV32R);
	case OP_MOD32_IMM: return K(MOD32I);
	case OP_MOD32_REG: return K(MOD32R);
	case OP_MUL64_IMM: return K(MUL64I);
	case OP_MUL64_REG: return K(MUL64R);
	case OP_DIV64_IMM: return K(DIV64I);
	case OP_DIV64_REG: return K(DIV64R);
	case OP_MOD64_IMM: return K(MOD64I);
	case OP_MOD64_REG: return K(MOD64R);
	default: return K(INVALID);
	}
}

static enum sbpf_kind pqr_kind(uint8_t op)
{
	switch (op) {
	case OP_LMUL32_IMM: return K(LMUL32I);
	case OP_LMUL32_REG: return K(LMUL32R);
	case OP_LMUL64_IMM: return K(LMUL64I);
	case OP_LMUL64_REG: return K(LMUL64R);
	case OP_UHMUL64_IMM: return K(UHMUL64I);
	case OP_UHMUL64_REG: return K(UHMUL64R);
	case OP_SHMUL64_IMM: return K(SHMUL64I);
	case OP_SHMUL64_REG: return K(SHMUL64R);
	case OP_UDIV32_IMM: return K(UDIV32I);
	case OP_UDIV32_REG: return K(UDIV32R);
	case OP_UDIV64_IMM: return K(UDIV64I);
	case OP_UDIV64_REG: return K(UDIV64R);
	case OP_UREM32_IMM: return K(UREM32I);
	case OP_UREM32_REG: return K(UREM32R);
	case OP_UREM64_IMM: return K(UREM64I);
	case OP_UREM64_REG: return K(UREM64R);
	case OP_SDIV32_IMM: return K(SDIV32I);
	case OP_SDIV32_REG: return K(SDIV32R);
	case OP_SDIV64_IMM: return K(SDIV64I);
	case OP_SDIV64_REG: return K(SDIV64R);
	case OP_SREM32_IMM: return K(SREM32I);
	case OP_SREM32_REG: return K(SREM32R);
	case OP_SREM64_IMM: return K(SREM64I);
	case OP_SREM64_REG: return K(SREM64R);
	default: return K(INVALID);
	}
}

/* jmp32 (v3) reuses the JMP64 conditional operation bits with class 6. */
static enum sbpf_kind jmp32_kind(uint8_t op)
{
	if ((op & 7) != SBPF_CLS_JMP32)
		return K(INVALID);
	switch (common_kind((uint8_t)((op & ~7u) | SBPF_CLS_JMP64))) {
	case K(JEQI): return K(JEQ32I);
	case K(JEQR): return K(JEQ32R);
	case K(JGTI): return K(JGT32I);
	case K(JGTR): return K(JGT32R);
	case K(JGEI): return K(JGE32I);
	case K(JGER): return K(JGE32R);
	case K(JLTI): return K(JLT32I);
	case K(JLTR): return K(JLT32R);
	case K(JLEI): return K(JLE32I);
	case K(JLER): return K(JLE32R);
	case K(JSETI): return K(JSET32I);
	case K(JSETR): return K(JSET32R);
	case K(JNEI): return K(JNE32I);
	case K(JNER): return K(JNE32R);
	case K(JSGTI): return K(JSGT32I);
	case K(JSGTR): return K(JSGT32R);
	case K(JSGEI): return K(JSGE32I);
	case K(JSGER): return K(JSGE32R);
	case K(JSLTI): return K(JSLT32I);
	case K(JSLTR): return K(JSLT32R);
	case K(JSLEI): return K(JSLE32I);
	case K(JSLER): return K(JSLE32R);
	default: return K(INVALID);
	}
}

enum sbpf_kind sbpf_kind_of(enum sbpf_version v, uint8_t op)
{
	if (v >= SBPF_VRESERVED)
		return K(INVALID);
	enum sbpf_kind k = common_kind(op);
	if (k != K(INVALID))
		return k;
	if (op == OP_LDDW)
		return sbpf_disable_lddw(v) ? K(INVALID) : K(LDDW);
	if (op == OP_HOR64_IMM)
		return sbpf_disable_lddw(v) ? K(HOR64I) : K(INVALID);
	if (op == OP_LE)
		return sbpf_disable_le(v) ? K(INVALID) : K(LE);
	if (op == OP_NEG32 || op == OP_NEG64) {
		if (!sbpf_disable_neg(v))
			return op == OP_NEG32 ? K(NEG32) : K(NEG64);
	}
	if (sbpf_moved_mem_classes(v)) {
		k = moved_memory_kind(op);
	} else {
		k = classic_memory_kind(op);
	}
	if (k != K(INVALID))
		return k;
	if (sbpf_enable_pqr(v))
		return pqr_kind(op);
	k = muldiv_kind(op);
	if (k != K(INVALID))
		return k;
	if (sbpf_enable_jmp32(v))
		return jmp32_kind(op);
	return K(INVALID);
}

#define SBPF_KIND_MNEMONIC(k, m, f) m,
static const char *const mnemonics[] = { SBPF_KINDS(SBPF_KIND_MNEMONIC) };
#define SBPF_KIND_FORMAT(k, m, f) f,
static const unsigned char formats[] = { SBPF_KINDS(SBPF_KIND_FORMAT) };

const char *sbpf_kind_mnemonic(enum sbpf_kind k)
{
	return (unsigned)k < SBPF_K_COUNT ? mnemonics[k] : "unknown";
}

enum sbpf_format sbpf_kind_format(enum sbpf_kind k)
{
	return (unsigned)k < SBPF_K_COUNT ? (enum sbpf_format)formats[k] : F_NONE;
}

static const char *const version_names[] = { "v0", "v1", "v2", "v3", "v4" };

int sbpf_version_parse(const char *s, enum sbpf_version *out)
{
	for (unsigned i = 0; i < SBPF_VRESERVED; i++) {
		if (!strcmp(s, version_names[i])) {
			*out = (enum sbpf_version)i;
			return 0;
		}
	}
	return -1;
}

static uint32_t rotl32(uint32_t x, unsigned r)
{
	return x << r | x >> (32 - r);
}

static uint32_t murmur_mix(uint32_t k)
{
	k *= 0xcc9e2d51u;
	k = rotl32(k, 15);
	return k * 0x1b873593u;
}

/* Murmur3 x86_32 with seed 0, as the hash32 crate computes it for byte slices. */
uint32_t sbpf_hash(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t h = 0;
	size_t i = 0;
	for (; i + 4 <= len; i += 4) {
		uint32_t k = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
			     (uint32_t)p[i + 3] << 24;
		h ^= murmur_mix(k);
		h = rotl32(h, 13) * 5 + 0xe6546b64u;
	}
	uint32_t tail = 0;
	switch (len & 3) {
	case 3: tail |= (uint32_t)p[i + 2] << 16; /* fall through */
	case 2: tail |= (uint32_t)p[i + 1] << 8; /* fall through */
	case 1:
		tail |= p[i];
		h ^= murmur_mix(tail);
	}
	h ^= (uint32_t)len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}
