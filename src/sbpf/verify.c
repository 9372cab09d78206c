/*
 * The load-time verifier, rule for rule the reference's RequisiteVerifier (which the Solana
 * runtime runs on every deployment and load): opcodes of the version, register numbers,
 * r10 read-only, jump targets inside the program and not into the middle of lddw, constant
 * divisors non-zero, shift amounts in range, byte-swap widths 16/32/64. Also its
 * LocalVerifier, which `solana program deploy` runs on v3+ programs before sending them:
 * every static syscall known, no call left unresolved by the linker (src 1, imm -1).
 */
#include "sbpf/program.h"
#include "sbpf/syscall.h"

#include <stdarg.h>
#include <stdio.h>

#define K(x) SBPF_K_##x

static int fail(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(msg, size, "VerifierError(");
	if (n > 0 && (size_t)n < size)
		n += vsnprintf(msg + n, size - (size_t)n, fmt, ap);
	if (n > 0 && (size_t)n < size)
		snprintf(msg + n, size - (size_t)n, ")");
	va_end(ap);
	return -1;
}

static bool is_jump(enum sbpf_kind k)
{
	return (k >= K(JEQ32I) && k <= K(JSLE32R)) || (k >= K(JA) && k <= K(JSLER));
}

static bool is_store(enum sbpf_kind k)
{
	return k >= K(ST1I) && k <= K(ST8R);
}

static bool needs_nonzero_imm(enum sbpf_kind k)
{
	switch (k) {
	case K(DIV32I): case K(MOD32I): case K(DIV64I): case K(MOD64I):
	case K(UDIV32I): case K(UDIV64I): case K(UREM32I): case K(UREM64I):
	case K(SDIV32I): case K(SDIV64I): case K(SREM32I): case K(SREM64I):
		return true;
	default:
		return false;
	}
}

/* Bits of the shifted value for immediate shifts, 0 for everything else. */
static int shift_bits(enum sbpf_kind k)
{
	switch (k) {
	case K(LSH32I): case K(RSH32I): case K(ARSH32I): return 32;
	case K(LSH64I): case K(RSH64I): case K(ARSH64I): return 64;
	default: return 0;
	}
}

static int check_jump(const uint8_t *text, uint64_t n, uint64_t pc, const struct sbpf_insn *i,
		      char *msg, size_t size)
{
	int64_t dst = (int64_t)pc + 1 + i->off;
	if (dst < 0 || (uint64_t)dst >= n)
		return fail(msg, size, "JumpOutOfCode(%llu, %llu)", (unsigned long long)dst,
			    (unsigned long long)pc);
	if (text[(uint64_t)dst * 8] == 0)
		return fail(msg, size, "JumpToMiddleOfLDDW(%lld, %llu)", (long long)dst,
			    (unsigned long long)pc);
	return 0;
}

static int check_registers(const struct sbpf_insn *i, enum sbpf_kind k, enum sbpf_version v,
			   uint64_t pc, char *msg, size_t size)
{
	if (i->src > 10)
		return fail(msg, size, "InvalidSourceRegister(%llu)", (unsigned long long)pc);
	if (i->dst <= 9 || (i->dst == 10 && is_store(k)))
		return 0;
	if (i->dst == 10 && sbpf_manual_stack_frame_bump(v) && i->op == OP_ADD64_IMM)
		return 0;
	if (i->dst == 10)
		return fail(msg, size, "CannotWriteR10(%llu)", (unsigned long long)pc);
	return fail(msg, size, "InvalidDestinationRegister(%llu)", (unsigned long long)pc);
}

static int check_one(const uint8_t *text, uint64_t n, uint64_t *pc, enum sbpf_version v,
		     char *msg, size_t size)
{
	uint64_t at = *pc;
	struct sbpf_insn i = sbpf_decode(text + at * 8);
	enum sbpf_kind k = sbpf_kind_of(v, i.op);
	if (k == K(INVALID))
		return fail(msg, size, "UnknownOpCode(%#x, %llu)", i.op, (unsigned long long)at);
	if (k == K(LDDW)) {
		if (at + 1 >= n)
			return fail(msg, size, "LDDWCannotBeLast");
		if (text[(at + 1) * 8] != 0)
			return fail(msg, size, "IncompleteLDDW(%llu)", (unsigned long long)at);
		*pc = at + 1;
	} else if (needs_nonzero_imm(k) && i.imm == 0) {
		return fail(msg, size, "DivisionByZero(%llu)", (unsigned long long)at);
	} else if ((k == K(LE) || k == K(BE)) && i.imm != 16 && i.imm != 32 && i.imm != 64) {
		return fail(msg, size, "UnsupportedLEBEArgument(%llu)", (unsigned long long)at);
	} else if (shift_bits(k) && (i.imm < 0 || i.imm >= shift_bits(k))) {
		return fail(msg, size, "ShiftWithOverflow(%llu, %d, %llu)",
			    (unsigned long long)(uint64_t)i.imm, shift_bits(k),
			    (unsigned long long)at);
	} else if (k == K(ADD64I) && i.dst == 10 && sbpf_manual_stack_frame_bump(v) &&
		   (i.imm & 63)) {
		return fail(msg, size, "UnalignedImmediate(%llu)", (unsigned long long)at);
	} else if (is_jump(k)) {
		if (check_jump(text, n, at, &i, msg, size))
			return -1;
	} else if (k == K(CALLX)) {
		int64_t reg = sbpf_callx_uses_src(v) ? i.src : sbpf_callx_uses_dst(v) ? i.dst : i.imm;
		if (reg < 0 || reg >= 10)
			return fail(msg, size, "InvalidRegister(%llu)", (unsigned long long)at);
	}
	return check_registers(&i, k, v, at, msg, size);
}

int sbpf_verify(const uint8_t *text, uint64_t len, enum sbpf_version v, char *msg, size_t size)
{
	if (len % 8)
		return fail(msg, size, "ProgramLengthNotMultiple");
	if (!len)
		return fail(msg, size, "NoProgram");
	uint64_t n = len / 8;
	uint64_t pc = 0;
	for (; pc < n; pc++)
		if (check_one(text, n, &pc, v, msg, size))
			return -1;
	return 0;
}

int sbpf_verify_local(const uint8_t *text, uint64_t len, enum sbpf_version v,
		      const struct sbpf_syscalls *syscalls, char *msg, size_t size)
{
	if (!sbpf_static_syscalls(v))
		return 0;
	for (uint64_t pc = 0; (pc + 1) * 8 <= len; pc++) {
		struct sbpf_insn i = sbpf_decode(text + pc * 8);
		if (i.op == OP_LDDW)
			pc++;
		else if (i.op == OP_CALL_IMM && i.src == 0 && !sbpf_syscalls_find(syscalls, (uint32_t)i.imm))
			return fail(msg, size, "InvalidSyscall(%u)", (uint32_t)i.imm);
		else if (i.op == OP_CALL_IMM && i.src == 1 && i.imm == -1)
			return fail(msg, size, "InvalidFunction(%llu)", (unsigned long long)pc);
	}
	return 0;
}
