/*
 * The demo's example: a hot loop whose work is three inlined calls deep. A profiler without
 * inline frames sees only main and compute; tally shows every level with its line.
 */
#include <stdio.h>
#include <stdlib.h>

static inline unsigned mix(unsigned x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	return x ^ (x >> 15);
}

static inline unsigned round_of(unsigned x, unsigned k)
{
	return mix(x + k) + 3 * mix(x ^ (k << 7));
}

static inline unsigned block(unsigned x)
{
	for (unsigned k = 0; k < 8; k++)
		x = round_of(x, k);
	return x;
}

static unsigned data[4096];

__attribute__((noinline)) unsigned compute(unsigned n)
{
	unsigned acc = 0;
	for (unsigned i = 0; i < n; i++)
		acc = block(acc ^ data[i % 4096]);
	return acc;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000000;
	for (unsigned i = 0; i < 4096; i++)
		data[i] = (unsigned)rand();
	printf("%u\n", compute(n));
	return 0;
}
