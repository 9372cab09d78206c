/* A long sBPF run for `tally sbpf run --sample`: entrypoint calls hot (through loop), warm
 * and cold, whose loops have one body and run 3:2:1 times as long. */
#include "../sbpf/programs/solana.h"

__attribute__((noinline)) static u64 loop(u64 n)
{
	volatile u64 x = 1;
	for (u64 i = 0; i < n; i++)
		x = x * 3 + i;
	return x;
}

__attribute__((noinline)) static u64 hot(u64 n)
{
	return loop(3 * n);
}

__attribute__((noinline)) static u64 warm(u64 n)
{
	volatile u64 x = 0;
	for (u64 i = 0; i < 2 * n; i++)
		x = x * 3 + i;
	return x;
}

__attribute__((noinline)) static u64 cold(u64 n)
{
	volatile u64 x = 0;
	for (u64 i = 0; i < n; i++)
		x = x * 3 + i;
	return x;
}

u64 entrypoint(const u8 *input)
{
	u64 r = 0, rounds = input[0];
	for (u64 k = 0; k < rounds; k++)
		r ^= hot(100000) ^ warm(100000) ^ cold(100000);
	return r;
}
