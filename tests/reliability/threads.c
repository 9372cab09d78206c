/* usage: threads N MS [GO]: starts N threads, each waits (with GO: until the file GO
 * exists), fires rel:work, spins MS ms of CPU and waits at a barrier for all the others:
 * N threads alive at once. Prints "threads N" at the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <tally/trace.h>

static pthread_barrier_t all;
static double ms;
static const char *go;

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	while (go && access(go, F_OK))
		usleep(10000);
	TALLY_TRACEPOINT(rel, work);
	double t0 = cpu_ms();
	volatile double x = 1;
	while (cpu_ms() - t0 < ms)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 0.25;
	pthread_barrier_wait(&all);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	ms = argc > 2 ? atof(argv[2]) : 2;
	go = argc > 3 ? argv[3] : NULL;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	pthread_barrier_init(&all, NULL, (unsigned)n);
	int made = 0;
	for (int i = 0; i < n; i++)
		made += !pthread_create(&t[i], &a, worker, NULL);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	printf("threads %d\n", made);
	return made == n ? 0 : 1;
}
