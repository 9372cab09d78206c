/*
 * Recursion, an inline chain, syscalls in a loop and read-only tables: the shapes the
 * profiler has to attribute. Arithmetic stays 64-bit (see docs/sbpf.md on alu32).
 */
#include "solana.h"

static const char *const words[] = { "zero", "one", "two", "three" };
static const u64 primes[] = { 2, 3, 5, 7, 11, 13, 17, 19 };

__attribute__((noinline)) u64 fib(u64 n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) u64 multiply(u64 a, u64 b)
{
	return a * b;
}

static inline __attribute__((always_inline)) u64 square(u64 x)
{
	return multiply(x, x);
}

static inline __attribute__((always_inline)) u64 sum_squares(u64 n)
{
	u64 s = 0;
	for (u64 i = 1; i <= n; i++)
		s += square(i);
	return s;
}

static u64 length(const char *s)
{
	u64 n = 0;
	while (s[n])
		n++;
	return n;
}

u64 entrypoint(const u8 *input)
{
	u64 n = input[0] & 7;
	const char *w = words[n & 3];
	sol_log_(w, length(w));
	u64 acc = 0;
	for (u64 i = 0; i < 4; i++) {
		acc = acc * 31 + primes[(n + i) & 7];
		sol_log_64_(i, acc, fib(i + n), 0, 0);
	}
	u8 copy[16];
	sol_memcpy_(copy, input, sizeof(copy));
	return acc + sum_squares(n + 3) + fib(12) + copy[1];
}
