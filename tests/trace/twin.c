/*
 * The same probes built with tally/trace.h and, with -DUSE_SDT, with systemtap's
 * <sys/sdt.h> (semaphores on, gated the same way). trace.test.sh compares the notes of both
 * builds: raw note bytes and relocations of the objects, and readelf -n of the programs.
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef USE_SDT
#define _SDT_HAS_SEMAPHORES 1
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define SEM(name) __extension__ unsigned short twin_##name##_semaphore \
	__attribute__((unused, section(".probes")));
SEM(none) SEM(one) SEM(three) SEM(mixed) SEM(twelve)
#define FIRE(name, ...) \
	do { \
		if (__builtin_expect(*(volatile unsigned short *)&twin_##name##_semaphore != 0, 0)) \
			STAP_PROBEV(twin, name, ##__VA_ARGS__); \
	} while (0)
#else
#include <tally/trace.h>
#define FIRE(name, ...) TALLY_TRACEPOINT(twin, name, ##__VA_ARGS__)
#endif

struct rec {
	long id;
	const char *tag;
	double weight;
};

__attribute__((noinline)) long work(long n, int k, struct rec *r, unsigned char u, float f)
{
	long sum = 0;
	FIRE(none);
	for (long i = 0; i < n; i++) {
		FIRE(one, i);
		sum += i * k;
	}
	FIRE(three, n, k, r->tag);
	FIRE(mixed, r->weight, u, f, (short)k, r->id, &r->id, 42);
	FIRE(twelve, n, k, r->id, r->tag, r->weight, u, f, sum, n * 2, (char)k, 7, r);
	return sum;
}

int main(int argc, char **argv)
{
	struct rec r = { 7, "seven", 2.5 };
	long n = argc > 1 ? atol(argv[1]) : 3;
	printf("%ld\n", work(n, argc, &r, (unsigned char)argc, (float)argc));
	return 0;
}
