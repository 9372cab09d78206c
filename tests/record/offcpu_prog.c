/*
 * Workloads for the thread and off-CPU tests: each mode does something whose time is known
 * in a function of known name, on named threads (pthread_setname_np), so that reports can
 * be checked against what the program did rather than against tally itself.
 *   threads MS    two threads "spin-a" and "spin-b" burn CPU in spin_a()/spin_b() for MS ms
 *   sleep N MS    a thread "sleeper" calls nanosleep N times for MS ms each in sleep_here()
 *   pipe MS       a thread "reader" blocks in read() on a pipe in read_here(); the main
 *                 thread writes after MS ms
 *   mutex MS      a thread "waiter" blocks on a mutex in lock_here() that the main thread
 *                 holds for MS ms
 *   fork N MS     N children each sleep MS ms in child_sleep()
 *   switch N [US] two threads bounce a byte through two pipes N times (context switches),
 *                 the main one working US microseconds per round trip; "loop SECONDS" on
 *                 stderr: how long that took
 * The measured times of what blocked (CLOCK_MONOTONIC around the call) go to stdout:
 * "blocked NAME NS" lines, the truth the tests compare with.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long arg_ms;
static long arg_n;
static int pipe_fd[2], back_fd[2];
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void report(const char *what, long long ns)
{
	printf("blocked %s %lld\n", what, ns);
	fflush(stdout);
}

__attribute__((noinline)) static void burn(long ms)
{
	long long end = now_ns() + ms * 1000000LL;
	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) static void spin_a(void) { burn(arg_ms); sink++; }
__attribute__((noinline)) static void spin_b(void) { burn(arg_ms); sink += 2; }

/* Each thread names itself before it works, so that no sample has the name it had
 * before; spin_a and spin_b differ so that the compiler does not fold them into one. */
static void *thread_a(void *x)
{
	(void)x;
	pthread_setname_np(pthread_self(), "spin-a");
	spin_a();
	return NULL;
}

static void *thread_b(void *x)
{
	(void)x;
	pthread_setname_np(pthread_self(), "spin-b");
	spin_b();
	return NULL;
}

__attribute__((noinline)) static void sleep_here(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	long long t0 = now_ns();
	nanosleep(&t, NULL);
	report("sleep_here", now_ns() - t0);
}

static void *sleeper(void *x)
{
	(void)x;
	for (long i = 0; i < arg_n; i++)
		sleep_here(arg_ms);
	return NULL;
}

__attribute__((noinline)) static void read_here(void)
{
	char c;
	long long t0 = now_ns();
	if (read(pipe_fd[0], &c, 1) != 1)
		exit(1);
	report("read_here", now_ns() - t0);
}

static void *reader(void *x) { (void)x; read_here(); return NULL; }

__attribute__((noinline)) static void lock_here(void)
{
	long long t0 = now_ns();
	pthread_mutex_lock(&mutex);
	report("lock_here", now_ns() - t0);
	pthread_mutex_unlock(&mutex);
}

static void *waiter(void *x) { (void)x; lock_here(); return NULL; }

__attribute__((noinline)) static void child_sleep(void)
{
	struct timespec t = { arg_ms / 1000, (arg_ms % 1000) * 1000000L };
	long long t0 = now_ns();
	nanosleep(&t, NULL);
	report("child_sleep", now_ns() - t0);
}

__attribute__((noinline)) static void bounce(int in, int out, long n, int first, long work_us)
{
	char c = 0;
	for (long i = 0; i < n; i++) {
		if (!first && read(in, &c, 1) != 1)
			exit(1);
		first = 0;
		for (long long end = now_ns() + work_us * 1000LL; now_ns() < end;)
			sink++;
		if (write(out, &c, 1) != 1)
			exit(1);
	}
}

static void *bouncer(void *x)
{
	(void)x;
	bounce(pipe_fd[0], back_fd[1], arg_n, 0, 0);
	return NULL;
}

static pthread_t start(void *(*fn)(void *), const char *name)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, NULL))
		exit(1);
	pthread_setname_np(t, name);
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *mode = argv[1];
	arg_n = strtol(argv[2], NULL, 10);
	arg_ms = argc > 3 ? strtol(argv[3], NULL, 10) : arg_n;
	if (pipe(pipe_fd) || pipe(back_fd))
		return 1;
	if (!strcmp(mode, "threads")) {
		pthread_t a = start(thread_a, "spin-a"), b = start(thread_b, "spin-b");
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else if (!strcmp(mode, "sleep")) {
		pthread_join(start(sleeper, "sleeper"), NULL);
	} else if (!strcmp(mode, "pipe")) {
		pthread_t t = start(reader, "reader");
		burn(arg_n);
		if (write(pipe_fd[1], "x", 1) != 1)
			return 1;
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "mutex")) {
		pthread_mutex_lock(&mutex);
		pthread_t t = start(waiter, "waiter");
		burn(arg_n);
		pthread_mutex_unlock(&mutex);
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "fork")) {
		for (long i = 0; i < arg_n; i++)
			if (fork() == 0) {
				child_sleep();
				_exit(0);
			}
		while (wait(NULL) > 0)
			;
	} else if (!strcmp(mode, "switch")) {
		long long t0 = now_ns();
		pthread_t t = start(bouncer, "bouncer");
		bounce(back_fd[0], pipe_fd[1], arg_n, 1, argc > 3 ? arg_ms : 0);
		char c;
		if (read(back_fd[0], &c, 1) != 1)
			return 1;
		pthread_join(t, NULL);
		fprintf(stderr, "loop %.4f\n", (double)(now_ns() - t0) / 1e9);
	} else {
		return 2;
	}
	return 0;
}
