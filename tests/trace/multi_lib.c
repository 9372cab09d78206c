/* A shared object firing tally_test:multi; built twice with -DLIB=1 and -DLIB=2. */
#include <tally/trace.h>

#define NAME_(n) multi_lib##n
#define NAME(n) NAME_(n)

void NAME(LIB)(unsigned long n);

void NAME(LIB)(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		TALLY_TRACEPOINT(tally_test, multi, i, LIB + 1);
}
