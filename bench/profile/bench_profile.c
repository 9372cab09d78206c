/*
 * The profile model and outputs at scale: 10 million samples over 200,000 distinct stacks
 * (depth 12-27, 5,000 function names, a module, pcs), as a sampler would hand them over.
 * Times each stage with a monotonic clock and reports peak RSS; writes the pprof and folded
 * files so run.sh can time peers (go tool pprof) on the same profile. Deterministic: a
 * fixed-seed generator, so every run measures the same work.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "profile/profile.h"
#include "report/report.h"
#if __has_include("report/flamegraph.h")
#include "report/flamegraph.h"
#define HAVE_FLAMEGRAPH 1
#endif

#define NSAMPLES 10000000u
#define NSTACKS 200000u
#define NFUNCS 5000u
#define MAXDEPTH 28

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ x >> 33;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_time(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long peak_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/* Stack i, innermost first: upper levels shared by ever larger groups of stacks, so the
 * tree has realistic common prefixes; the leaf level makes every stack distinct. */
static size_t make_stack(const uint32_t *frames, uint32_t i, struct prof_loc *out)
{
	size_t depth = 12 + mix(i) % 16;
	for (size_t d = 0; d < depth; d++) {
		uint64_t group = d + 1 < depth ? i >> (d < 17 ? 17 - d : 0) : i;
		uint64_t h = mix(group * 131 + d);
		struct prof_loc *l = &out[depth - 1 - d];
		l->frame = frames[d + 1 < depth ? h % NFUNCS : i % NFUNCS];
		l->pc = 0x1000 + (h % NFUNCS) * 0x100 + (d + 1 < depth ? 0x10 : (i >> 13) % 4 * 4);
		l->line = 0;
	}
	return depth;
}

static double cpu0;

/* Wall and CPU time since t0 (the machine is shared: CPU time is the steadier figure). */
static void report(const char *stage, double t0)
{
	double c = cpu_time();
	printf("%-28s %7.2f s wall %7.2f s cpu   peak RSS %5ld MiB\n", stage, now() - t0,
	       c - cpu0, peak_rss_mb());
	cpu0 = c;
	fflush(stdout);
}

static void start(double *t0)
{
	cpu0 = cpu_time();
	*t0 = now();
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	/* A smaller count (second argument) is for profiling the benchmark itself. */
	uint32_t nsamples = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : NSAMPLES;
	char path[4096];
	struct prof *p;
	if (prof_new(&p) || prof_add_metric(p, "samples", "count") < 0 ||
	    prof_add_metric(p, "cpu", "nanoseconds") < 0)
		return 1;
	prof_set_source(p, "bench: synthetic");
	uint32_t mod = prof_module(p, "/usr/bin/bench", "00112233445566778899aabbccddeeff", 0x400000);
	static uint32_t frames[NFUNCS];
	for (uint32_t f = 0; f < NFUNCS; f++) {
		char name[64];
		snprintf(name, sizeof(name), "module%u::function_%u", f % 37, f);
		struct prof_frame_desc d = { PROF_NATIVE, name, "src/bench.c", f, mod, 0x1000 + f * 0x100 };
		frames[f] = prof_frame(p, &d);
	}
	struct prof_loc stack[MAXDEPTH];
	double t0;
	/* The generator's own cost, to tell it apart from the model's. */
	start(&t0);
	uint64_t sink = 0;
	for (uint32_t s = 0; s < nsamples; s++) {
		double u = (double)(mix(s + 0x9e37) >> 11) / 9007199254740992.0;
		uint32_t i = s < NSTACKS ? s : (uint32_t)(u * u * NSTACKS);
		sink += make_stack(frames, i, stack) + stack[0].pc;
	}
	report(sink ? "generate stacks only" : "generate", t0);
	start(&t0);
	for (uint32_t s = 0; s < nsamples; s++) {
		/* Skewed like real profiles: a few stacks are hot, most are rare. */
		double u = (double)(mix(s + 0x9e37) >> 11) / 9007199254740992.0;
		uint32_t i = s < NSTACKS ? s : (uint32_t)(u * u * NSTACKS);
		int64_t w[2] = { 1, 1000000 };
		size_t n = make_stack(frames, i, stack);
		if (prof_add_stack(p, stack, n, w))
			return fprintf(stderr, "add_stack failed\n"), 1;
	}
	if (prof_finish(p))
		return 1;
	printf("%u samples\n", nsamples);
	report("build", t0);
	printf("  %zu nodes, %zu frames\n", prof_nnodes(p), prof_nframes(p));

	FILE *devnull = fopen("/dev/null", "w");
	start(&t0);
	struct rep_text_opts to = { .metric = -1 };
	rep_text(devnull, p, &to);
	report("report (top tables)", t0);
	start(&t0);
	to.tree = true;
	rep_text(devnull, p, &to);
	report("report --tree", t0);

	snprintf(path, sizeof(path), "%s/bench.pb.gz", dir);
	FILE *f = fopen(path, "w");
	start(&t0);
	if (!f || rep_pprof(f, p) || fclose(f))
		return fprintf(stderr, "pprof export failed\n"), 1;
	report("export pprof", t0);
	snprintf(path, sizeof(path), "%s/bench.folded", dir);
	f = fopen(path, "w");
	start(&t0);
	struct rep_folded_opts fo = { -1, false };
	if (!f || rep_folded(f, p, &fo) || fclose(f))
		return 1;
	report("export folded", t0);
	start(&t0);
	rep_speedscope(devnull, p, "bench");
	report("export speedscope", t0);
#ifdef HAVE_FLAMEGRAPH
	struct rep_flame_opts fl;
	rep_flame_opts_init(&fl);
	snprintf(path, sizeof(path), "%s/bench.svg", dir);
	f = fopen(path, "w");
	start(&t0);
	if (!f || rep_flamegraph(f, p, &fl) || fclose(f))
		return fprintf(stderr, "flame graph failed\n"), 1;
	report("flame graph (SVG, minwidth)", t0);
#endif
	fclose(devnull);
	prof_free(p);
	return 0;
}
