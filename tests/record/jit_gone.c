/* JIT code named by a perf map, in a process that ends early: a page of x86-64 code made at
 * run time, /tmp/perf-PID.map naming it jit_gone_loop, run for argv[1] seconds; then exit.
 * Prints its pid first, for the test to remove its map. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	/* mov ecx, 100000; 1: dec ecx; jnz 1b; ret */
	static const uint8_t code[] = { 0xb9, 0xa0, 0x86, 0x01, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_gone_loop\n", (unsigned long)(uintptr_t)p, sizeof(code));
	fclose(f);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	void (*fn)(void) = (void (*)(void))(void *)p;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fn();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < atof(argv[1]));
	return 0;
}
