/*
 * One probe, tally_test:multi, fired from two translation units of the program (multi_a.c
 * and here) and from two shared objects built from multi_lib.c. The program must hold one
 * semaphore for it, and each shared object its own. usage: multi N
 */
#include <stdio.h>
#include <stdlib.h>

#include <tally/trace.h>

void multi_a(unsigned long n);
void multi_lib1(unsigned long n);
void multi_lib2(unsigned long n);

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	for (unsigned long i = 0; i < n; i++)
		TALLY_TRACEPOINT(tally_test, multi, i, 0);
	multi_a(n);
	multi_lib1(n);
	multi_lib2(n);
	return 0;
}
