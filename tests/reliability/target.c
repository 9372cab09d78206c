/* usage: target END MARKER PIDFILE: writes its pid to PIDFILE, fires rel:tick about
 * every 50 us until the file END exists (or 60 s have passed), then writes "ran to the
 * end" to MARKER: proof that it was neither killed nor left stopped. */
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
	unsigned long i = 0;
	volatile double x = 1;
	for (time_t t0 = time(NULL); access(argv[1], F_OK) && time(NULL) - t0 < 60;) {
		for (int k = 0; k < 20000; k++)
			x = x * 1.0000001 + 0.25;
		TALLY_TRACEPOINT(rel, tick, i++);
	}
	f = fopen(argv[2], "w");
	if (!f || fputs("ran to the end\n", f) < 0 || fclose(f))
		return 1;
	return 0;
}
