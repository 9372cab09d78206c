/*
 * The cost of a tracepoint nothing is attached to: tight loops with a probe of 0, 1 and 6
 * arguments (one of them expensive to prepare), built once per VARIANT:
 *   none     no tracepoint at all (the baseline)
 *   tally    TALLY_TRACEPOINT, detached
 *   off      TALLY_TRACEPOINT with -DTALLY_NO_TRACEPOINTS
 *   sdt      <sys/sdt.h> STAP_PROBEn, no semaphore (arguments always prepared)
 *   sdt_sem  <sys/sdt.h> gated by its semaphore by hand, as bitcoin does
 * Prints "ARITY ns_per_iteration" for the best of REPEATS runs of about 0.1 s each. An empty
 * asm keeps the compiler from folding the loop (Clang computes it in closed form otherwise)
 * without costing an instruction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(V_tally) || defined(V_off)
#include <tally/trace.h>
#define P0(p, n) TALLY_TRACEPOINT(p, n)
#define P1(p, n, a) TALLY_TRACEPOINT(p, n, a)
#define P6(p, n, a, b, c, d, e, f) TALLY_TRACEPOINT(p, n, a, b, c, d, e, f)
#elif defined(V_sdt)
#include <sys/sdt.h>
#define P0(p, n) STAP_PROBE(p, n)
#define P1(p, n, a) STAP_PROBE1(p, n, a)
#define P6(p, n, a, b, c, d, e, f) STAP_PROBE6(p, n, a, b, c, d, e, f)
#elif defined(V_sdt_sem)
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
__extension__ unsigned short bench_p0_semaphore __attribute__((unused, section(".probes")));
__extension__ unsigned short bench_p1_semaphore __attribute__((unused, section(".probes")));
__extension__ unsigned short bench_p6_semaphore __attribute__((unused, section(".probes")));
#define SEM(p, n) (__builtin_expect(*(volatile unsigned short *)&p##_##n##_semaphore != 0, 0))
#define P0(p, n) do { if (SEM(p, n)) STAP_PROBE(p, n); } while (0)
#define P1(p, n, a) do { if (SEM(p, n)) STAP_PROBE1(p, n, a); } while (0)
#define P6(p, n, a, b, c, d, e, f) do { if (SEM(p, n)) STAP_PROBE6(p, n, a, b, c, d, e, f); } while (0)
#else
#define P0(p, n) do { } while (0)
#define P1(p, n, a) do { } while (0)
#define P6(p, n, a, b, c, d, e, f) do { } while (0)
#endif

#define REPEATS 5
#define OPAQUE(x) __asm__ __volatile__("" : "+r"(x))

/* What a real probe might format: a few hundred cycles of hashing. */
__attribute__((noinline)) static unsigned long expensive(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ul;
	return x;
}

static const char *names[] = { "alpha", "beta", "gamma", "delta" };

__attribute__((noinline)) static unsigned long loop0(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) {
		s += i ^ (s >> 3);
		OPAQUE(s);
		P0(bench, p0);
	}
	return s;
}

__attribute__((noinline)) static unsigned long loop1(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) {
		s += i ^ (s >> 3);
		OPAQUE(s);
		P1(bench, p1, s);
	}
	return s;
}

__attribute__((noinline)) static unsigned long loop6(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) {
		s += i ^ (s >> 3);
		OPAQUE(s);
		P6(bench, p6, s, i, expensive(s), names[i & 3], (int)(i & 7), (double)s);
	}
	return s;
}

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double best_ns(unsigned long (*fn)(unsigned long), unsigned long *sink)
{
	unsigned long n = 1000000;
	double t0 = seconds();
	*sink += fn(n);
	double t = seconds() - t0;
	n = (unsigned long)((double)n * 0.1 / (t > 1e-6 ? t : 1e-6)) + 1;
	double best = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		t0 = seconds();
		*sink += fn(n);
		double ns = (seconds() - t0) * 1e9 / (double)n;
		best = ns < best ? ns : best;
	}
	return best;
}

int main(void)
{
	unsigned long sink = 0;
	printf("0 %.3f\n", best_ns(loop0, &sink));
	printf("1 %.3f\n", best_ns(loop1, &sink));
	printf("6 %.3f\n", best_ns(loop6, &sink));
	return sink == 42; /* keeps the loops' results alive */
}
