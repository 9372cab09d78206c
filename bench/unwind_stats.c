/*
 * bench/unwind's tally side: the figures perf script's are compared with (samples,
 * single-frame share, average depth, complete share) and where tally's post-processing time
 * goes: opening and indexing the file, unwinding every sample (no names), and unwinding and
 * symbolizing (inline frames, kernel frames) into folded stacks as a report does. Each
 * phase is timed on its own run (wall and CPU); the peak memory is the whole process's.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "base/err.h"
#include "record/record.h"

struct clocks {
	struct timespec wall;
	double cpu;
};

static struct clocks now(void)
{
	struct clocks c;
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &c.wall);
	getrusage(RUSAGE_SELF, &ru);
	c.cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		ru.ru_stime.tv_usec / 1e6;
	return c;
}

static void since(const char *what, struct clocks a)
{
	struct clocks b = now();
	printf(" %s %.1f ms (cpu %.1f);", what,
	       (b.wall.tv_sec - a.wall.tv_sec) * 1e3 + (b.wall.tv_nsec - a.wall.tv_nsec) / 1e6,
	       (b.cpu - a.cpu) * 1e3);
}

static int nothing(const struct rec_stack *st __attribute__((unused)),
		   void *arg __attribute__((unused)))
{
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: unwind_stats FILE\n");
		return 2;
	}
	FILE *sink = fopen("/dev/null", "w");
	struct perf_data *d;
	struct rec_quality q;
	if (!sink)
		return 1;
	fputs("tally phases:", stdout);
	struct clocks t = now();
	if (perf_data_open(argv[1], &d))
		goto fail;
	since("open+index", t);
	t = now();
	if (rec_replay_data(d, UNW_AUTO, nothing, NULL, NULL, NULL))
		goto fail;
	since("unwind", t);
	perf_data_close(d);
	t = now();
	if (rec_folded(argv[1], UNW_AUTO, sink, &q))
		goto fail;
	since("open+unwind+symbolize", t);
	fclose(sink);
	const struct unw_stats *s = &q.stats;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double n = s->samples ? (double)s->samples : 1;
	printf(" peak %.1f MiB\n", ru.ru_maxrss / 1024.0);
	printf("tally: %llu samples, %.1f%% single-frame, avg depth %.1f, %.1f%% complete, "
	       "%llu lost\n",
	       (unsigned long long)s->samples, 100.0 * s->single / n, s->frames / n,
	       100.0 * s->complete / n, (unsigned long long)q.info.lost);
	return 0;
fail:
	fprintf(stderr, "tally: %s\n", err_msg());
	return 1;
}
