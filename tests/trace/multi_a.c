/* The second translation unit firing tally_test:multi (see multi_main.c). */
#include <tally/trace.h>

void multi_a(unsigned long n);

void multi_a(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		TALLY_TRACEPOINT(tally_test, multi, i, 1);
}
