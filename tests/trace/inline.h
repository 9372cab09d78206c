/* A probe in a C++ inline function that two translation units emit (a COMDAT function at
 * -O0): the linker keeps one copy, and its note must go with the discarded one. */
#include <tally/trace.h>

inline int bump(int x)
{
	TALLY_TRACEPOINT(tally_test, inl, x);
	return x + 1;
}
int other(int);
