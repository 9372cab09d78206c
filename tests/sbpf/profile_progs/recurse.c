/* Recursion (fib), a syscall in a loop (sol_log_64_, 100 CU each) and a loop that can run
 * out of CU (input[1] rounds of spinning). */
#include "../programs/solana.h"

__attribute__((noinline)) static u64 fib(u64 n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static void log_loop(u64 n)
{
	for (u64 i = 0; i < n; i++)
		sol_log_64_(i, n, 0, 0, 0);
}

__attribute__((noinline)) static u64 spin(u64 n)
{
	volatile u64 x = 0;
	for (u64 i = 0; i < n * 1000; i++)
		x += i;
	return x;
}

u64 entrypoint(const u8 *input)
{
	u64 r = fib(input[0]);
	log_loop(input[1]);
	return r + spin(input[2]);
}
