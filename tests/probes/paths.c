/*
 * Two call paths to one probe, for tally record -e usdt: usage: paths N1 N2 [THREADS [GOFILE]]
 * main -> run -> path_a -> path_b fires tally_test:hit N1 times, main -> run -> path_c N2
 * times, in THREADS threads (default 0: main alone; with threads, main only starts and
 * joins them and run hangs below worker). With GOFILE, run first waits for that file (up
 * to 10 minutes): a tracer attaching with -p is then in place before the first hit. Built with
 * -O2 -fomit-frame-pointer: the stacks can only come from CFI. The global `level` (i % 3
 * at each hit) is a probe argument the compiler addresses rip-relative
 * ("-8@level(%rip)"), for probes count --args: 300 and 200 hits give it the values 0, 1
 * and 2 167, 167 and 166 times.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
static const char *gofile;

__attribute__((noinline)) static void run(void)
{
	for (int i = 0; gofile && access(gofile, F_OK) && i < 600000; i++)
		usleep(1000);
	for (long i = 0; i < n1; i++) {
		level = i % 3;
		path_a(i);
	}
	for (long i = 0; i < n2; i++) {
		level = i % 3;
		path_c(i);
	}
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
	gofile = argc > 4 ? argv[4] : NULL;
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
