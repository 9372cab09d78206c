/*
 * The disassembler: operand layouts come from the instruction kind's format, so the text
 * of every opcode of every version is written by the same dozen lines.
 */
#include "sbpf/disasm.h"

#include <stdio.h>

#include "sbpf/program.h"
#include "sbpf/syscall.h"

static const char *sign(int16_t off)
{
	return off < 0 ? "-" : "+";
}

static unsigned mag(int16_t off)
{
	return off < 0 ? (unsigned)(-(int)off) : (unsigned)off;
}

static size_t clamp(int n, size_t size)
{
	if (n < 0 || !size)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

/* Text for everything but calls, which need the program to be named. */
static int format_plain(enum sbpf_version v, const struct sbpf_insn *i, int64_t lddw_imm,
			uint64_t pc, char *buf, size_t size)
{
	enum sbpf_kind k = sbpf_kind_of(v, i->op);
	const char *m = sbpf_kind_mnemonic(k);
	switch (sbpf_kind_format(k)) {
	case F_LDDW: return snprintf(buf, size, "%s r%u, 0x%llx", m, i->dst, (unsigned long long)lddw_imm);
	case F_LD: return snprintf(buf, size, "%s r%u, [r%u%s0x%x]", m, i->dst, i->src, sign(i->off), mag(i->off));
	case F_STI: return snprintf(buf, size, "%s [r%u%s0x%x], %lld", m, i->dst, sign(i->off), mag(i->off), (long long)i->imm);
	case F_STR: return snprintf(buf, size, "%s [r%u%s0x%x], r%u", m, i->dst, sign(i->off), mag(i->off), i->src);
	case F_AI: return snprintf(buf, size, "%s r%u, %lld", m, i->dst, (long long)i->imm);
	case F_AR: return snprintf(buf, size, "%s r%u, r%u", m, i->dst, i->src);
	case F_NEG: return snprintf(buf, size, "%s r%u", m, i->dst);
	case F_END: return snprintf(buf, size, "%s%lld r%u", m, (long long)i->imm, i->dst);
	case F_JA: return snprintf(buf, size, "%s lbb_%lld", m, (long long)pc + 1 + i->off);
	case F_JI: return snprintf(buf, size, "%s r%u, %lld, lbb_%lld", m, i->dst, (long long)i->imm, (long long)pc + 1 + i->off);
	case F_JR: return snprintf(buf, size, "%s r%u, r%u, lbb_%lld", m, i->dst, i->src, (long long)pc + 1 + i->off);
	case F_CALLX: {
		unsigned r = sbpf_callx_uses_src(v) ? i->src : sbpf_callx_uses_dst(v) ? i->dst : (unsigned)i->imm;
		return snprintf(buf, size, "%s r%u", m, r);
	}
	case F_EXIT: return snprintf(buf, size, "%s", m);
	case F_CALL: return snprintf(buf, size, "call %lld", (long long)i->imm);
	case F_NONE: break;
	}
	return snprintf(buf, size, "unknown opcode=%#x", i->op);
}

size_t sbpf_disasm_raw(enum sbpf_version v, const uint8_t *slot, const uint8_t *next,
		       uint64_t pc, char *buf, size_t size)
{
	struct sbpf_insn i = sbpf_decode(slot);
	int64_t lddw = (int64_t)(uint32_t)i.imm;
	if (next)
		lddw = (int64_t)((uint64_t)(uint32_t)i.imm | (uint64_t)sbpf_decode(next).imm << 32);
	return clamp(format_plain(v, &i, lddw, pc, buf, size), size);
}

size_t sbpf_disasm(const struct sbpf_program *p, uint64_t pc, char *buf, size_t size)
{
	if (pc >= p->ninsns)
		return clamp(snprintf(buf, size, "<pc %llu outside the program>", (unsigned long long)pc), size);
	const struct sbpf_dinsn *d = &p->code[pc];
	if (d->kind != SBPF_K_CALL) {
		const uint8_t *next = pc + 1 < p->ninsns ? p->text + (pc + 1) * 8 : NULL;
		return sbpf_disasm_raw(p->version, p->text + pc * 8, next, pc, buf, size);
	}
	int n;
	if (d->pad == SBPF_CALL_SYSCALL) {
		n = snprintf(buf, size, "syscall %s", p->syscalls->v[d->imm].name);
	} else if (d->pad == SBPF_CALL_INTERNAL) {
		const struct sbpf_symbol *s = sbpf_program_symbol_at(p, (uint64_t)d->imm);
		if (s && s->pc == (uint64_t)d->imm)
			n = snprintf(buf, size, "call %s", s->name);
		else
			n = snprintf(buf, size, "call function_%lld", (long long)d->imm);
	} else {
		struct sbpf_insn i = sbpf_decode(p->text + pc * 8);
		n = snprintf(buf, size, "%s %lld", i.src == 0 || !sbpf_static_syscalls(p->version) ? "syscall" : "call",
			     (long long)(uint32_t)i.imm);
	}
	return clamp(n, size);
}
