/*
 * What sampling costs at HZ, side by side in one process, THREADS threads publishing a pc
 * as an interpreter does (one frame pushed, the pc stored in a busy loop), ROUNDS rounds of
 * SECONDS per variant, alternated:
 *
 *   sampler  the agent's sampler thread's CPU time (tally_agent_stats, the kernel's
 *            sum_exec_runtime) per second of wall time and per wakeup, against
 *   floor    a bare thread that only sleeps to the same jittered absolute deadlines (what
 *            any sampler that wakes at HZ pays on this machine before it reads anything);
 *
 * and the cost the program sees: the process's CPU time per iteration of the publishing
 * loops against none (no sampling), and the CPU time past none's for as many iterations
 * as a share of a core over the round's wall time and per sample taken (the machine's
 * noise is a few % per iteration: a high HZ, 10000, shows the cost per sample clearly):
 *
 *   thread   the agent's sampler thread;
 *   sigwall  a signal source: per publishing thread a POSIX timer (CLOCK_MONOTONIC,
 *            SIGEV_THREAD_ID to that thread, one-shot absolute jittered deadlines re-armed
 *            by the handler) whose handler copies the thread's own published pc and frames
 *            into a ring of its own, drained by a thread that wakes every 50 ms: the least
 *            a sampler that wakes no thread per sample does;
 *   sigcpu   the same on each thread's CPU-time clock (the kernel checks those timers at
 *            its scheduler tick: at most CONFIG_HZ samples a second).
 *
 *   agent_sampler HZ SECONDS ROUNDS [THREADS]   (THREADS: 1 by default)
 */
#define _GNU_SOURCE /* gettid, SIGEV_THREAD_ID */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <tally/agent.h>

#define MAX_THREADS 64
#define RING 256 /* samples a signal ring holds: 50 ms at 5 kHz */
#define RING_FRAMES 4

static uint64_t now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static struct tally_agent *agent;
static int stop_vm, started;
static uint64_t hz, seconds;

/* A publishing thread, and what the signal source keeps for it. */
static struct vm {
	pthread_t thread;
	pid_t tid;
	clockid_t cpu_clock;
	struct tally_agent_thread *state;
	uint64_t iterations; /* atomic */
	/* the signal source's */
	timer_t timer;
	clockid_t clock;
	uint64_t start, k, rnd;
	struct ring_sample {
		uint64_t time, pc;
		uint32_t depth;
		struct tally_agent_frame frames[RING_FRAMES];
	} ring[RING];
	uint64_t head, tail; /* atomic */
	uint64_t dropped;
} vms[MAX_THREADS];
static int nthreads;

static void *interpreter(void *arg)
{
	struct vm *v = arg;
	uint32_t id = 1;
	v->tid = gettid();
	pthread_getcpuclockid(pthread_self(), &v->cpu_clock);
	int rc = tally_agent_thread_register(agent, &v->state);
	__atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
	if (rc)
		return NULL;
	TALLY_AGENT_PUSH(v->state, id, 0);
	for (uint64_t pc = 0; !__atomic_load_n(&stop_vm, __ATOMIC_RELAXED); pc = (pc + 1) & 63) {
		TALLY_AGENT_PC(v->state, pc);
		if (!pc)
			__atomic_store_n(&v->iterations, v->iterations + 1, __ATOMIC_RELAXED);
	}
	TALLY_AGENT_POP(v->state);
	tally_agent_thread_unregister(agent, v->state);
	return NULL;
}

/* The floor: sleeps to start + k periods, jittered as the sampler's deadlines are. */
static void *bare_sleeper(void *arg)
{
	uint64_t period = 1000000000u / hz, start = now(CLOCK_MONOTONIC), rnd = start | 1;
	for (uint64_t k = 1; k <= hz * seconds; k++) {
		uint64_t d = start + k * period - period / 4 + next_random(&rnd) % (period / 2 + 1);
		struct timespec t = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	*(uint64_t *)arg = now(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* The signal source's next deadline for v: start + k periods, jittered, on v->clock. */
static void arm(struct vm *v)
{
	uint64_t period = 1000000000u / hz, t = now(v->clock);
	do
		v->k++;
	while (v->start + v->k * period + period / 4 <= t);
	uint64_t d = v->start + v->k * period - period / 4 + next_random(&v->rnd) % (period / 2 + 1);
	struct itimerspec at = { { 0, 0 }, { (time_t)(d / 1000000000u), (long)(d % 1000000000u) } };
	timer_settime(v->timer, TIMER_ABSTIME, &at, NULL);
}

static int signal_on; /* atomic */

/* On the publishing thread itself: its own state, read between two equal even seqs. */
static void on_timer(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	int saved = errno;
	struct vm *v = si->si_value.sival_ptr;
	if (si->si_code != SI_TIMER || !__atomic_load_n(&signal_on, __ATOMIC_ACQUIRE)) {
		errno = saved;
		return;
	}
	struct tally_agent_thread *t = v->state;
	uint64_t head = v->head;
	uint32_t seq = __atomic_load_n(&t->seq, __ATOMIC_RELAXED);
	if ((seq & 1) || head - __atomic_load_n(&v->tail, __ATOMIC_ACQUIRE) == RING) {
		v->dropped++;
	} else {
		struct ring_sample *s = &v->ring[head % RING];
		s->time = now(CLOCK_MONOTONIC);
		s->pc = t->pc;
		s->depth = t->depth;
		for (uint32_t i = 0; i < s->depth && i < RING_FRAMES; i++)
			s->frames[i] = t->frames[i];
		__atomic_store_n(&v->head, head + 1, __ATOMIC_RELEASE);
	}
	arm(v);
	errno = saved;
}

static uint64_t drained;

static void drain(void)
{
	for (int i = 0; i < nthreads; i++) {
		struct vm *v = &vms[i];
		uint64_t head = __atomic_load_n(&v->head, __ATOMIC_ACQUIRE);
		drained += head - v->tail;
		__atomic_store_n(&v->tail, head, __ATOMIC_RELEASE);
	}
}

static void *drainer(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&signal_on, __ATOMIC_ACQUIRE)) {
		struct timespec t = { 0, 50 * 1000000 };
		nanosleep(&t, NULL);
		drain();
	}
	drain();
	return NULL;
}

static int signal_start(bool cpu_clock, pthread_t *drain_thread)
{
	struct sigaction sa = { .sa_sigaction = on_timer, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL))
		return -1;
	__atomic_store_n(&signal_on, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nthreads; i++) {
		struct vm *v = &vms[i];
		struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF,
				       .sigev_value.sival_ptr = v };
		ev._sigev_un._tid = v->tid;
		v->clock = cpu_clock ? v->cpu_clock : CLOCK_MONOTONIC;
		if (timer_create(v->clock, &ev, &v->timer))
			return -1;
		v->start = now(v->clock), v->k = 0, v->rnd = v->start | 1;
		arm(v);
	}
	return pthread_create(drain_thread, NULL, drainer, NULL);
}

static void signal_stop(pthread_t drain_thread)
{
	for (int i = 0; i < nthreads; i++)
		timer_delete(vms[i].timer);
	__atomic_store_n(&signal_on, 0, __ATOMIC_RELEASE);
	pthread_join(drain_thread, NULL);
}

static uint64_t iterations(void)
{
	uint64_t n = 0;
	for (int i = 0; i < nthreads; i++)
		n += __atomic_load_n(&vms[i].iterations, __ATOMIC_RELAXED);
	return n;
}

static void report(const char *what, uint64_t cpu_ns, uint64_t wall_ns, uint64_t wakeups)
{
	printf("  %-8s %6.3f%% of a core  %6.1f us per wakeup  %6" PRIu64 " wakeups\n", what,
	       100.0 * (double)cpu_ns / (double)wall_ns, wakeups ? (double)cpu_ns / 1e3 / (double)wakeups : 0,
	       wakeups);
}

/* The sampler's CPU time against the floor's. */
static int sampler_round(void)
{
	struct tally_agent_stats s0 = { .sz = sizeof(s0) }, s1 = { .sz = sizeof(s1) };
	tally_agent_stats(agent, &s0);
	uint64_t t0 = now(CLOCK_MONOTONIC);
	if (tally_agent_start(agent))
		return -1;
	struct timespec w = { (time_t)seconds, 0 };
	nanosleep(&w, NULL);
	if (tally_agent_stop(agent))
		return -1;
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
	return 0;
}

enum variant { NONE, THREAD, SIGWALL, SIGCPU, NVARIANTS };
static const char *const variant_names[] = { "none", "thread", "sigwall", "sigcpu" };

/* What one variant's round measured. */
struct outcome {
	uint64_t cpu_ns, iterations, wall_ns, samples;
};

/* One variant for SECONDS: the process's CPU time, the iterations and the samples taken. */
static int program_round(enum variant v, struct outcome *out)
{
	struct tally_agent_stats s0 = { .sz = sizeof(s0) }, s1 = { .sz = sizeof(s1) };
	pthread_t drain_thread;
	tally_agent_stats(agent, &s0);
	uint64_t d0 = drained, n0 = iterations(), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t t0 = now(CLOCK_MONOTONIC);
	if ((v == THREAD && tally_agent_start(agent)) ||
	    ((v == SIGWALL || v == SIGCPU) && signal_start(v == SIGCPU, &drain_thread)))
		return -1;
	struct timespec w = { (time_t)seconds, 0 };
	nanosleep(&w, NULL);
	if (v == THREAD && tally_agent_stop(agent))
		return -1;
	if (v == SIGWALL || v == SIGCPU)
		signal_stop(drain_thread);
	out->cpu_ns = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	out->iterations = iterations() - n0;
	out->wall_ns = now(CLOCK_MONOTONIC) - t0;
	tally_agent_stats(agent, &s1);
	out->samples = v == THREAD ? s1.samples - s0.samples : drained - d0;
	return out->iterations ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
		return 2;
	hz = strtoull(argv[1], NULL, 10), seconds = strtoull(argv[2], NULL, 10);
	uint64_t rounds = strtoull(argv[3], NULL, 10);
	nthreads = argc == 5 ? atoi(argv[4]) : 1;
	if (!hz || hz > 100000 || !seconds || !rounds || nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	TALLY_OPTS(tally_agent_opts, o, .freq_hz = (uint32_t)hz, .output = "/dev/null",
		   .omit_thread = true);
	struct tally_agent_function f = { .sz = sizeof(f), .name = "loop", .start = 0, .end = 64 };
	uint32_t id;
	if (tally_agent_new(&o, &agent) || tally_agent_register(agent, &f, &id) || id != 1) {
		fprintf(stderr, "agent_sampler: %s\n", tally_errmsg());
		return 1;
	}
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&vms[i].thread, NULL, interpreter, &vms[i]))
			return 1;
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < nthreads)
		sched_yield();
	for (uint64_t r = 0; r < rounds; r++) {
		printf("round %" PRIu64 ":\n", r + 1);
		if (sampler_round())
			return 1;
		struct outcome out[NVARIANTS];
		for (int v = 0; v < NVARIANTS; v++)
			if (program_round((enum variant)v, &out[v]))
				return 1;
		double none = (double)out[NONE].cpu_ns / (double)out[NONE].iterations;
		for (int v = 0; v < NVARIANTS; v++) {
			/* the CPU time past none's for as many iterations, over the wall time */
			double per = (double)out[v].cpu_ns / (double)out[v].iterations;
			double extra = (double)out[v].cpu_ns - none * (double)out[v].iterations;
			printf("  %-8s %7.3f ns per iteration  x%.4f  %6.3f%% of a core  %6.1f us per sample"
			       "  %6.0f samples/s\n",
			       variant_names[v], per, per / none, 100.0 * extra / (double)out[v].wall_ns,
			       out[v].samples ? extra / 1e3 / (double)out[v].samples : 0,
			       (double)out[v].samples * 1e9 / (double)out[v].wall_ns);
		}
		fflush(stdout);
	}
	__atomic_store_n(&stop_vm, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nthreads; i++)
		pthread_join(vms[i].thread, NULL);
	tally_agent_free(agent);
	return 0;
}
