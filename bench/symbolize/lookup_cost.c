/*
 * The cost of naming an address through libtally, without the printing that `tally
 * symbolize` adds (whose time follows the length of what it prints): every address of a
 * file, ROUNDS times, through tally_symbolize, in the process's CPU time. The first round
 * also builds the indexes; the best round is printed, in nanoseconds per address, with the
 * number of addresses that got a name (a symbol's, DWARF's, or a range from the unwind
 * tables). Usage: lookup_cost BINARY ADDRESSES-FILE [ROUNDS]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tally/tally.h"

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t *read_addrs(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1024;
	uint64_t *v = malloc(cap * sizeof(*v));
	char line[64];
	*n = 0;
	while (v && fgets(line, sizeof(line), f)) {
		if (*n == cap) {
			uint64_t *w = realloc(v, (cap *= 2) * sizeof(*v));
			if (!w) {
				free(v);
				v = NULL;
				break;
			}
			v = w;
		}
		v[(*n)++] = strtoull(line, NULL, 16);
	}
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: lookup_cost BINARY ADDRESSES-FILE [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	size_t n;
	uint64_t *addrs = read_addrs(argv[2], &n);
	if (!addrs || !n) {
		fprintf(stderr, "lookup_cost: %s: no addresses\n", argv[2]);
		return 1;
	}
	TALLY_OPTS(tally_symbolizer_opts, o);
	struct tally_symbolizer *s;
	int r = tally_symbolizer_open(argv[1], &o, &s);
	if (r) {
		fprintf(stderr, "lookup_cost: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	double best = 0;
	size_t named = 0;
	for (int k = 0; k < rounds; k++) {
		double t0 = cpu_now();
		named = 0;
		for (size_t i = 0; i < n; i++) {
			struct tally_frame f[8];
			int m = tally_symbolize(s, addrs[i], f, 8);
			if (m > 0) {
				const struct tally_frame *outer = &f[(m > 8 ? 8 : m) - 1];
				named += outer->function || outer->from_cfi;
			}
		}
		double t = cpu_now() - t0;
		if (!k || t < best)
			best = t;
	}
	printf("%.1f %zu %zu\n", best * 1e9 / (double)n, named, n);
	tally_symbolizer_close(s);
	free(addrs);
	return 0;
}
