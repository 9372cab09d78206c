/*
 * The floor under the agent's sampler: a thread that only sleeps to absolute deadlines at
 * HZ for SECONDS and reports its own CPU time, what any in-process sampler at that rate
 * pays on this machine before it reads anything. Usage: agent_wakeups HZ SECONDS
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	uint64_t hz = strtoull(argv[1], NULL, 10), secs = strtoull(argv[2], NULL, 10);
	if (!hz || !secs)
		return 2;
	struct timespec t, cpu;
	clock_gettime(CLOCK_MONOTONIC, &t);
	uint64_t start = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
	for (uint64_t k = 1; k <= hz * secs; k++) {
		uint64_t d = start + k * (1000000000u / hz);
		t = (struct timespec){ (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	printf("%" PRIu64 "\n", (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec);
	return 0;
}
