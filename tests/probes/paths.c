/*
 * Two call paths to one probe, for tally record -e usdt: usage: paths N1 N2 [THREADS]
 * main -> path_a -> path_b fires tally_test:hit N1 times, main -> path_c N2 times, each
 * in THREADS threads (default 0: main alone; with threads, main only starts and joins them
 * and the paths hang below worker). Built with -O2 -fomit-frame-pointer: the stacks can
 * only come from CFI. The global `level` is a probe argument the compiler addresses
 * rip-relative ("8@level(%rip)"), for probes count --args.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <tally/trace.h>

long level = 42;
static volatile long sink;

__attribute__((noinline)) static void path_b(long i)
{
	TALLY_TRACEPOINT(tally_test, hit, i, level);
	sink += i;
}

__attribute__((noinline)) static void path_a(long i)
{
	path_b(i * 2);
	sink ^= i;
}

__attribute__((noinline)) static void path_c(long i)
{
	TALLY_TRACEPOINT(tally_test, hit, i, level);
	sink -= i;
}

static long n1, n2;

__attribute__((noinline)) static void run(void)
{
	for (long i = 0; i < n1; i++)
		path_a(i);
	for (long i = 0; i < n2; i++)
		path_c(i);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	run();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	n1 = strtol(argv[1], NULL, 10);
	n2 = strtol(argv[2], NULL, 10);
	int threads = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t t[16];
	if (threads > 16)
		return 2;
	if (!threads)
		run();
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return perror("pthread_create"), 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("fired %ld\n", (n1 + n2) * (threads ? threads : 1));
	return 0;
}
