/*
 * Host harness for the sBPF test programs: defines the syscalls as the Solana runtime logs
 * them, runs entrypoint() on the input file and prints what `tally sbpf run` prints for a
 * successful run (logs and return value), so the two outputs can be compared line by line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "solana.h"

void sol_log_(const char *msg, u64 len)
{
	printf("log: Program log: %.*s\n", (int)len, msg);
}

void sol_log_64_(u64 a, u64 b, u64 c, u64 d, u64 e)
{
	u64 v[5] = { a, b, c, d, e };
	printf("log: Program log: ");
	for (int i = 0; i < 5; i++)
		printf("%s0x%" PRIx64, i ? ", " : "", (uint64_t)v[i]);
	printf("\n");
}

void sol_memcpy_(void *dst, const void *src, u64 n)
{
	memcpy(dst, src, n);
}

int main(int argc, char **argv)
{
	static u8 input[4096];
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	if (f) {
		if (fread(input, 1, sizeof(input), f) == 0 && ferror(f))
			return 1;
		fclose(f);
	}
	u64 r = entrypoint(input);
	printf("result: success\nreturn value: %" PRIu64 " (%#" PRIx64 ")\n", (uint64_t)r, (uint64_t)r);
	return 0;
}
