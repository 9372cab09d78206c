/*
 * A program with tally tracepoints for the attach tests. usage: fire N [wait [GOFILE]]
 * Fires tally_test:fire N times; its first argument counts its own evaluations, and the
 * program prints "evaluated K" (0 unless a tracer is attached: the point of the semaphore).
 * With "wait" it first waits (up to 90 s by the clock) for a tracer to attach, and after
 * firing prints "fired" and waits as long for the semaphore to drop back to 0, printing
 * "detached" or failing. The bound is generous because a tracer told to stop on a loaded
 * machine (CI runs four tests at once) can take tens of seconds to print and detach.
 * A tracer raises the semaphore before its handler is in place (bpftrace attaches its BPF
 * program after perf_event_open), so the test may also name a GOFILE to wait for: it
 * creates it once the tracer says it is ready.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tally/trace.h>

static unsigned long evaluated;

static unsigned long count_eval(unsigned long i)
{
	evaluated++;
	return i;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int wait_for(int attached)
{
	struct timespec ms = { 0, 1000000 };
	for (double end = now() + 90; now() < end; nanosleep(&ms, NULL))
		if (!TALLY_TRACEPOINT_ACTIVE(tally_test, fire) == !attached)
			return 0;
	return -1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	int wait = argc > 2 && !strcmp(argv[2], "wait");
	if (wait && wait_for(1)) {
		fprintf(stderr, "fire: no tracer attached within 90 s\n");
		return 1;
	}
	for (int i = 0; argc > 3 && access(argv[3], F_OK) && i < 30000; i++)
		usleep(1000);
	TALLY_TRACEPOINT(tally_test, start, n);
	for (unsigned long i = 0; i < n; i++)
		TALLY_TRACEPOINT(tally_test, fire, count_eval(i), i * 3, -(long)i, "fire");
	printf("evaluated %lu\n", evaluated);
	fflush(stdout);
	if (wait) {
		printf("fired\n");
		fflush(stdout);
		if (wait_for(0)) {
			fprintf(stderr, "fire: semaphore still raised 90 s after firing\n");
			return 1;
		}
		printf("detached\n");
	}
	return 0;
}
