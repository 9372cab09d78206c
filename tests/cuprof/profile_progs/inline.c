/* The seed's inline chain: square is inlined into entrypoint and calls multiply, which is
 * not inlined; the profile must read entrypoint -> square -> multiply. Built with -DEXTRA,
 * entrypoint runs one more instruction (a register move). */
#include "../../sbpf/programs/solana.h"

__attribute__((noinline)) static u64 multiply(u64 x, u64 y)
{
	volatile u64 r = x * y;
	return r;
}

static inline __attribute__((always_inline)) u64 square(u64 x)
{
	return multiply(x, x);
}

u64 entrypoint(const u8 *input)
{
	u64 v = input[0];
	u64 acc = square(v);
#ifdef EXTRA
	asm volatile("r3 = r3" ::: "r3");
#endif
	return acc + multiply(v, 3);
}
