/* Runs for argv[1] seconds firing rel:tick, writing its pid to argv[3] first and "ran to
 * the end" to argv[2] last: proof it was neither killed nor left stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <tally/trace.h>

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	FILE *f = fopen(argv[3], "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
		return 1;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double secs = atof(argv[1]);
	volatile double x = 1;
	unsigned long i = 0;
	do {
		for (int k = 0; k < 20000; k++)
			x = x * 1.0000001 + 0.25;
		TALLY_TRACEPOINT(rel, tick, i++);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	f = fopen(argv[2], "w");
	if (!f || fputs("ran to the end\n", f) < 0 || fclose(f))
		return 1;
	return 0;
}
