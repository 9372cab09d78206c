/*
 * bench/unwind's tally side: unwinds and symbolizes (inline frames, kernel frames) every
 * sample of a perf.data into folded stacks, as a report does, and prints the figures perf
 * script's are compared with (samples, single-frame share, average depth, complete share)
 * with the wall time and peak memory of doing so.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "base/err.h"
#include "record/record.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: unwind_stats FILE\n");
		return 2;
	}
	FILE *sink = fopen("/dev/null", "w");
	if (!sink)
		return 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct rec_quality q;
	if (rec_folded(argv[1], UNW_AUTO, sink, &q)) {
		fprintf(stderr, "tally: %s\n", err_msg());
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fclose(sink);
	const struct unw_stats *s = &q.stats;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double n = s->samples ? (double)s->samples : 1;
	double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		     ru.ru_stime.tv_usec / 1e6;
	printf("tally: %llu samples, %.1f%% single-frame, avg depth %.1f, %.1f%% complete, "
	       "%llu lost; unwind+symbolize %.3f s wall, %.3f s cpu, %.1f MiB\n",
	       (unsigned long long)s->samples, 100.0 * s->single / n, s->frames / n,
	       100.0 * s->complete / n, (unsigned long long)q.info.lost,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, cpu,
	       ru.ru_maxrss / 1024.0);
	return 0;
}
