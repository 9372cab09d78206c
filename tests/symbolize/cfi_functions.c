/*
 * Three hot functions with known shares of the run (49, 33 and 18 units of work each
 * round), not inlined, for tests/symbolize/cfi_functions.test.sh: built once with symbols
 * and stripped (a copy), each recorded, the shares tally gives compared.
 */
#include <stdlib.h>

static volatile unsigned long sink;

/* Each with a multiplier of its own, so that no compiler folds them into one. */
#define WORK(name, mul)                                                          \
	__attribute__((noinline, noclone)) static void name(unsigned units)      \
	{                                                                        \
		unsigned long x = sink;                                          \
		for (unsigned long i = 0; i < units * 20000ul; i++)              \
			x = x * mul + i;                                         \
		sink = x;                                                        \
	}

WORK(hot_a, 6364136223846793005ul)
WORK(hot_b, 2862933555777941757ul)
WORK(hot_c, 3202034522624059733ul)

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	for (unsigned r = 0; r < rounds; r++) {
		hot_a(49);
		hot_b(33);
		hot_c(18);
	}
	return 0;
}
