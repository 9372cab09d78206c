/*
 * The architectures the unwinder knows: their stack, frame and return-address registers,
 * what a call preserves, and how perf numbers the registers it samples. x86-64 only; see
 * unwind.h for what aarch64 needs.
 */
#include "unwind/unwind.h"

#include <string.h>

/* arch/x86/include/uapi/asm/perf_regs.h: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS,
 * then R8-R15 from 16. DWARF (psABI figure 3.36): AX 0, DX 1, CX 2, BX 3, SI 4, DI 5,
 * BP 6, SP 7, R8-R15 8-15, return address 16. */
static const int8_t x86_64_dwarf_of_perf[24] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1,
	8, 9, 10, 11, 12, 13, 14, 15,
};

const struct unw_arch unw_arch_x86_64 = {
	.name = "x86-64",
	.nregs = 17,
	.sp = UNW_X86_RSP,
	.fp = UNW_X86_RBP,
	.pc = UNW_X86_RIP,
	/* rbx, rbp, r12-r15 */
	.callee_saved = 1u << 3 | 1u << 6 | 1u << 12 | 1u << 13 | 1u << 14 | 1u << 15,
	.dwarf_of_perf = x86_64_dwarf_of_perf,
	.nperf = 24,
};

void unw_regs_from_perf(const struct unw_arch *a, uint64_t abi, uint64_t mask,
			const uint64_t regs[64], struct unw_regs *out)
{
	memset(out, 0, sizeof(*out));
	if (!abi)
		return;
	uint64_t have = a->nperf < 64 ? mask & ((1ull << a->nperf) - 1) : mask;
	for (; have; have &= have - 1) { /* the registers the sample has, lowest first */
		unsigned i = (unsigned)__builtin_ctzll(have);
		int d = a->dwarf_of_perf[i];
		if (d < 0)
			continue;
		out->r[d] = regs[i];
		out->valid |= 1ull << d;
	}
}
