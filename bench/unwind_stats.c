/*
 * bench/unwind's tally side: unwinds every sample of a perf.data with libtally and prints
 * the figures perf script's are compared with (samples, single-frame share, average
 * depth, complete share) and the wall time and peak memory of doing so.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "base/err.h"
#include "record/record.h"

static int each(const struct rec_stack *st, void *arg) { return 0; }

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: unwind_stats FILE\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct rec_replay_info info;
	struct unw_ctx *c;
	if (rec_replay(argv[1], UNW_AUTO, each, NULL, &info, &c)) {
		fprintf(stderr, "tally: %s\n", err_msg());
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	const struct unw_stats *s = unw_ctx_stats(c);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double n = s->samples ? (double)s->samples : 1;
	printf("tally: %llu samples, %.1f%% single-frame, avg depth %.1f, %.1f%% complete, "
	       "%llu lost; %.3f s, %.1f MiB\n",
	       (unsigned long long)s->samples, 100.0 * s->single / n, s->frames / n,
	       100.0 * s->complete / n, (unsigned long long)info.lost,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, ru.ru_maxrss / 1024.0);
	unw_ctx_free(c);
	return 0;
}
