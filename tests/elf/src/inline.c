/* A small program with inlining, recursion and a cold path: the ELF tests build it in
 * many shapes (compressed, stripped, relocatable, other architectures). */
#include <stdio.h>
#include <stdlib.h>

static inline int square(int x)
{
	return x * x;
}

static inline __attribute__((always_inline)) int quad(int x)
{
	return square(square(x));
}

__attribute__((noinline)) int leaf(int x)
{
	if (__builtin_expect(x == 123456, 0)) {
		fprintf(stderr, "unlikely %d\n", x);
		abort();
	}
	return quad(x) + 1;
}

int recurse(int n)
{
	return n <= 0 ? 0 : recurse(n - 1) + quad(n);
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", leaf(argc) + recurse(argc * 10));
	return 0;
}
