/*
 * bench/unwind's tally side: the figures perf script's are compared with (samples,
 * single-frame share, average depth, complete share) and where tally's post-processing time
 * goes: opening and indexing the file, unwinding every sample (no names), and unwinding and
 * symbolizing (inline frames, kernel frames) as a report does, without its output. Each
 * phase is timed on its own run (wall and CPU); the peak memory is the whole process's.
 * Then the symbolizer's share per module: the distinct addresses the samples name in it
 * (return addresses minus one, as reports look them up), the CPU time of opening it and
 * of looking each address up once, in a fresh symbolizer (using the debug cache, as
 * reports do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/err.h"
#include "elf/elf.h"
#include "replay/namer.h"
#include "tally/tally.h"

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

static int nothing(const struct replay_stack *st __attribute__((unused)),
		   void *arg __attribute__((unused)))
{
	return 0;
}

static int nothing_named(const struct replay_sym_stack *st __attribute__((unused)),
			 void *arg __attribute__((unused)))
{
	return 0;
}

/* The distinct module addresses of the samples, grouped by module. */
struct addr {
	const struct unw_module *mod;
	uint64_t addr;
};

struct addrs {
	struct addr *v;
	size_t n, cap;
};

static int collect(const struct replay_stack *st, void *arg)
{
	struct addrs *a = arg;
	for (size_t i = 0; i < st->n; i++) {
		const struct unw_frame *fr = &st->frames[i];
		if (!fr->mod || !fr->rel || !fr->mod->file)
			continue;
		if (a->n == a->cap) {
			a->cap = a->cap ? a->cap * 2 : 1024;
			if (!(a->v = realloc(a->v, a->cap * sizeof(*a->v))))
				return -1;
		}
		a->v[a->n++] = (struct addr){ fr->mod, i ? fr->rel - 1 : fr->rel };
	}
	return 0;
}

static int by_module(const void *x, const void *y)
{
	const struct addr *a = x, *b = y;
	int c = strcmp(a->mod->file, b->mod->file);
	return c ? c : a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Per module: distinct addresses, CPU time to open a symbolizer, to look them all up. */
static int per_module(struct perf_data *d)
{
	struct addrs a = { 0 };
	struct unw_ctx *c = NULL;
	if (replay_unwind_data(d, UNW_AUTO, collect, &a, NULL, &c))
		return -1;
	qsort(a.v, a.n, sizeof(*a.v), by_module);
	struct tally_frame tf[32];
	for (size_t i = 0; i < a.n;) {
		size_t j = i, distinct = 0;
		struct tally_symbolizer *s = NULL;
		struct tally_symbolizer_opts o = { .sz = sizeof(o), .debug_cache = true };
		struct clocks t0 = now();
		if (tally_symbolizer_open(a.v[i].mod->file, &o, &s))
			s = NULL;
		struct clocks t1 = now();
		for (; j < a.n && a.v[j].mod == a.v[i].mod; j++)
			if (j == i || a.v[j].addr != a.v[j - 1].addr) {
				distinct++;
				if (s)
					tally_symbolize(s, a.v[j].addr, tf, 32);
			}
		struct clocks t2 = now();
		printf("  symbolize %s: %zu frames, %zu distinct addresses; open %.2f ms, "
		       "lookups %.2f ms (cpu)\n",
		       a.v[i].mod->file, j - i, distinct, (t1.cpu - t0.cpu) * 1e3,
		       (t2.cpu - t1.cpu) * 1e3);
		if (s)
			tally_symbolizer_close(s);
		i = j;
	}
	unw_ctx_free(c);
	free(a.v);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: unwind_stats FILE\n");
		return 2;
	}
	struct perf_data *d;
	struct replay_quality q;
	fputs("tally phases:", stdout);
	struct clocks t = now();
	if (perf_data_open(argv[1], &d))
		goto fail;
	since("open+index", t);
	t = now();
	if (replay_unwind_data(d, UNW_AUTO, nothing, NULL, NULL, NULL))
		goto fail;
	since("unwind", t);
	perf_data_close(d);
	t = now();
	if (perf_data_open(argv[1], &d) ||
	    replay_symbolized_data(d, UNW_AUTO, nothing_named, NULL, &q))
		goto fail;
	perf_data_close(d);
	since("open+unwind+symbolize", t);
	const struct unw_stats *s = &q.stats;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double n = s->samples ? (double)s->samples : 1;
	printf(" peak %.1f MiB\n", ru.ru_maxrss / 1024.0);
	printf("tally: %llu samples, %.1f%% single-frame, avg depth %.1f, %.1f%% complete, "
	       "%llu lost\n",
	       (unsigned long long)s->samples, 100.0 * s->single / n, s->frames / n,
	       100.0 * s->complete / n, (unsigned long long)q.info.lost);
	if (perf_data_open(argv[1], &d))
		goto fail;
	int rc = per_module(d);
	perf_data_close(d);
	if (rc)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "tally: %s\n", err_msg());
	return 1;
}
