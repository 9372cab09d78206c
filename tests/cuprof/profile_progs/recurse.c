/* Recursion (fib of input[0]), a syscall in a loop (input[1] times sol_log_64_, 100 CU
 * each), a loop that can run out of CU (input[2] thousand rounds), and a failure deep in
 * the call tree on request (input[3]: 1 = unbounded recursion, 2 = abort four calls down,
 * 3 = an access violation four calls down). */
#include "../../sbpf/programs/solana.h"

extern void abort(void);

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

__attribute__((noinline)) static u64 fail_at(u64 depth, u64 how, const u8 *input)
{
	volatile u64 frame = depth; /* keeps the recursion a recursion */
	if (how == 1 || depth < 4)
		return fail_at(depth + 1, how, input) + frame;
	if (how == 2)
		abort();
	return *(volatile const u8 *)(input + (1ul << 20));
}

u64 entrypoint(const u8 *input)
{
	u64 r = fib(input[0]);
	log_loop(input[1]);
	if (input[3])
		r += fail_at(0, input[3], input);
	return r + spin(input[2]);
}
