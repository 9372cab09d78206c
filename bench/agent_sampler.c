/*
 * What the agent's sampler thread costs, against its floor, side by side in one process:
 * THREADS threads publish a pc as an interpreter does (one frame pushed, the pc stored in a
 * busy loop) while, in turn for ROUNDS rounds of SECONDS each, (a) the agent samples it at HZ and
 * (b) a bare thread only sleeps to the same jittered absolute deadlines (what any sampler
 * that wakes at HZ pays on this machine before it reads anything). Each line gives the CPU
 * time of the sleeping side's thread (the agent's from tally_agent_stats, the bare
 * thread's from its CPU clock, both the kernel's sum_exec_runtime) per second of wall time
 * and per wakeup.
 *
 *   agent_sampler HZ SECONDS ROUNDS [THREADS]   (THREADS: 1 by default)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>

#include <tally/agent.h>

static uint64_t now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static struct tally_agent *agent;
static int stop_vm, started;
static uint64_t hz, seconds;

static void *interpreter(void *arg)
{
	uint32_t id = *(uint32_t *)arg;
	struct tally_agent_thread *vm;
	int rc = tally_agent_thread_register(agent, &vm);
	__atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
	if (rc)
		return NULL;
	TALLY_AGENT_PUSH(vm, id, 0);
	for (uint64_t pc = 0; !__atomic_load_n(&stop_vm, __ATOMIC_RELAXED); pc = (pc + 1) & 63)
		TALLY_AGENT_PC(vm, pc);
	TALLY_AGENT_POP(vm);
	tally_agent_thread_unregister(agent, vm);
	return NULL;
}

/* The floor: sleeps to start + k periods, jittered as the sampler's deadlines are. */
static void *bare_sleeper(void *arg)
{
	uint64_t period = 1000000000u / hz, start = now(CLOCK_MONOTONIC), rnd = start | 1;
	for (uint64_t k = 1; k <= hz * seconds; k++) {
		rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
		uint64_t d = start + k * period - period / 4 + rnd % (period / 2 + 1);
		struct timespec t = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	*(uint64_t *)arg = now(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static void report(const char *what, uint64_t cpu_ns, uint64_t wall_ns, uint64_t wakeups)
{
	printf("  %-8s %6.3f%% of a core  %6.1f us per wakeup  %6" PRIu64 " wakeups\n", what,
	       100.0 * (double)cpu_ns / (double)wall_ns, wakeups ? (double)cpu_ns / 1e3 / (double)wakeups : 0,
	       wakeups);
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
		return 2;
	hz = strtoull(argv[1], NULL, 10), seconds = strtoull(argv[2], NULL, 10);
	uint64_t rounds = strtoull(argv[3], NULL, 10);
	int nthreads = argc == 5 ? atoi(argv[4]) : 1;
	if (!hz || hz > 100000 || !seconds || !rounds || nthreads < 1 || nthreads > 64)
		return 2;
	struct tally_agent_opts o = { .sz = sizeof(o), .freq_hz = (uint32_t)hz,
				      .output = "/dev/null", .omit_thread = true };
	struct tally_agent_function f = { .sz = sizeof(f), .name = "loop", .start = 0, .end = 64 };
	uint32_t id;
	pthread_t vm_threads[64];
	if (tally_agent_new(&o, &agent) || tally_agent_register(agent, &f, &id)) {
		fprintf(stderr, "agent_sampler: %s\n", tally_errmsg());
		return 1;
	}
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&vm_threads[i], NULL, interpreter, &id))
			return 1;
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < nthreads)
		sched_yield();
	for (uint64_t r = 0; r < rounds; r++) {
		printf("round %" PRIu64 ":\n", r + 1);
		struct tally_agent_stats s0 = { .sz = sizeof(s0) }, s1 = { .sz = sizeof(s1) };
		tally_agent_stats(agent, &s0);
		uint64_t t0 = now(CLOCK_MONOTONIC);
		if (tally_agent_start(agent))
			return 1;
		struct timespec w = { (time_t)seconds, 0 };
		nanosleep(&w, NULL);
		if (tally_agent_stop(agent))
			return 1;
		uint64_t wall = now(CLOCK_MONOTONIC) - t0;
		tally_agent_stats(agent, &s1);
		/* the sampler wakes once per deadline, but for those it skips being late */
		uint64_t missed = s1.missed - s0.missed, due = wall * hz / 1000000000u;
		uint64_t ticks = due > missed ? due - missed : 0;
		report("sampler", s1.sampler_cpu_ns - s0.sampler_cpu_ns, wall, ticks);

		pthread_t bare;
		uint64_t bare_cpu = 0;
		t0 = now(CLOCK_MONOTONIC);
		pthread_create(&bare, NULL, bare_sleeper, &bare_cpu);
		pthread_join(bare, NULL);
		report("floor", bare_cpu, now(CLOCK_MONOTONIC) - t0, hz * seconds);
		fflush(stdout);
	}
	__atomic_store_n(&stop_vm, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nthreads; i++)
		pthread_join(vm_threads[i], NULL);
	tally_agent_free(agent);
	return 0;
}
