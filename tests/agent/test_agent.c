/*
 * The agent's API (include/tally/agent.h): options read by their size, the registry (ids,
 * unregistering, bad descriptions), thread limits, the sampler's stream (what it names,
 * pausing, several agents at once), exact mode's errors, fork (a child that restarts
 * sampling writes its own file, the parent's stream is unharmed), and perf-PID.map lines
 * in perf's documented format ("START SIZE NAME", hex without 0x); mixed mode's loop
 * record (what the replay reads from stack copies) and its registry file's name; outputs
 * nobody named go to $TMPDIR, never into the working directory; the pc a push or a pop
 * leaves published (sample_pprof read back by the pprof reader).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "report/pprof_segments.h"
#include "tally/agent.h"

static char dir[] = "/tmp/tally-agent-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[100];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static char *path_in(const char *name)
{
	static char buf[4][200];
	static int i;
	char *p = buf[i++ & 3];
	snprintf(p, 200, "%s/%s", dir, name);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Busy for ms of CPU time: a thread is sampled only when it runs. */
static void spin_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	int64_t end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + ms * 1000000;
	do /* reading the clock is work enough */
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec < end);
}

static uint32_t reg(struct tally_agent *a, const char *name, uint64_t start, uint64_t end)
{
	struct tally_agent_function f = { .sz = sizeof(f), .name = name, .start = start, .end = end };
	uint32_t id = 0;
	assert_int_equal(tally_agent_register(a, &f, &id), 0);
	assert_int_not_equal(id, 0);
	return id;
}

static void opts_are_read_by_size(void **state)
{
	(void)state;
	struct tally_agent *a = NULL;
	struct tally_agent_opts o = { 0 };
	assert_int_equal(tally_agent_new(&o, &a), -EINVAL); /* sz 0 */
	struct {
		struct tally_agent_opts o;
		uint64_t newer;
	} big = { { .sz = sizeof(big) }, 1 };
	assert_int_equal(tally_agent_new(&big.o, &a), -EINVAL); /* a newer option, set */
	big.newer = 0;
	assert_int_equal(tally_agent_new(&big.o, &a), 0);
	tally_agent_free(a);
	o.sz = sizeof(o);
	o.mode = 8;
	assert_int_equal(tally_agent_new(&o, &a), -EINVAL);
	assert_non_null(strstr(tally_errmsg(), "mode"));
	assert_int_equal(tally_agent_new(NULL, &a), 0);
	tally_agent_free(a);
}

static void registry_checks_and_unregisters(void **state)
{
	(void)state;
	struct tally_agent *a;
	assert_int_equal(tally_agent_new(NULL, &a), 0);
	uint32_t id;
	struct tally_agent_function f = { .sz = sizeof(f), .start = 4, .end = 2 };
	assert_int_equal(tally_agent_register(a, &f, &id), -EINVAL); /* no name */
	f.name = "f";
	assert_int_equal(tally_agent_register(a, &f, &id), -EINVAL); /* end < start */
	struct tally_agent_line lines[] = { { 8, 2 }, { 4, 1 } };
	f.end = 10;
	f.lines = lines;
	f.nlines = 2;
	assert_int_equal(tally_agent_register(a, &f, &id), -EINVAL); /* unsorted lines */
	uint32_t a1 = reg(a, "one", 0, 10), a2 = reg(a, "two", 10, 20);
	assert_int_not_equal(a1, a2);
	assert_int_equal(tally_agent_unregister(a, a1), 0);
	assert_int_equal(tally_agent_unregister(a, a1), -ENOENT);
	assert_int_equal(tally_agent_unregister(a, 12345), -ENOENT);
	tally_agent_free(a);
}

static void thread_limit_is_enospc(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .max_threads = 2 };
	struct tally_agent *a;
	struct tally_agent_thread *t[3];
	assert_int_equal(tally_agent_new(&o, &a), 0);
	assert_int_equal(tally_agent_thread_register(a, &t[0]), 0);
	assert_int_equal(tally_agent_thread_register(a, &t[1]), 0);
	assert_int_equal(tally_agent_thread_register(a, &t[2]), -ENOSPC);
	tally_agent_thread_unregister(a, t[0]);
	assert_int_equal(tally_agent_thread_register(a, &t[2]), 0);
	tally_agent_free(a);
}

/* An agent sampling one thread parked in outer -> inner (and an unregistered function
 * on top when asked): its stream's lines. */
static const char *sample_parked(const char *name, bool gone, bool pause, bool run)
{
	struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in(name), .freq_hz = 1000,
				      .flush_ms = 10 };
	struct tally_agent *a;
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	uint32_t outer = reg(a, "outer", 0, 10), inner = reg(a, "in;ner", 10, 20);
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	TALLY_AGENT_PUSH(t, outer, 0);
	TALLY_AGENT_PUSH(t, inner, 5);
	TALLY_AGENT_PC(t, 12);
	if (gone)
		assert_int_equal(tally_agent_unregister(a, inner), 0);
	assert_int_equal(tally_agent_pause(a, pause), 0);
	assert_int_equal(tally_agent_start(a), 0);
	assert_int_equal(tally_agent_start(a), -EALREADY);
	struct tally_agent_stats s0 = { .sz = sizeof(s0) };
	if (run) {
		spin_ms(60);
	} else {
		/* The sleep alone is checked: the sampler's start-up, on a loaded machine, may
		 * span several ticks while this thread still runs (CI run 10: more than 3). */
		sleep_ms(20);
		assert_int_equal(tally_agent_stats(a, &s0), 0);
		sleep_ms(60);
	}
	struct tally_agent_stats s = { .sz = sizeof(s) };
	assert_int_equal(tally_agent_stop(a), 0);
	assert_int_equal(tally_agent_stats(a, &s), 0);
	tally_agent_free(a);
	const char *text = slurp(path_in(name));
	assert_non_null(text);
	if (pause) {
		assert_int_equal(s.samples + s.off_cpu, 0);
	} else if (!run) {
		/* over the 60 ms asleep: the tick after the stats call, the first tick that
		 * finds its state unchanged (counted as running, sampler.c) and the one that
		 * sees it wake to stop at most; every other tick counts it off CPU */
		assert_true(s.samples - s0.samples <= 3);
		assert_true(s.off_cpu - s0.off_cpu >= 3);
	} else {
		assert_true(s.samples >= 3);
	}
	return text;
}

static void sampler_names_thread_and_frames(void **state)
{
	(void)state;
	const char *text = sample_parked("named.folded", false, false, true);
	char want[64];
	snprintf(want, sizeof(want), "thread %d;outer;in_ner 1\n", (int)gettid());
	assert_non_null(strstr(text, want));
	/* every line the same */
	for (const char *l = text; *l; l = strchr(l, '\n') + 1)
		assert_memory_equal(l, want, strlen(want));
}

static void sampler_marks_unregistered(void **state)
{
	(void)state;
	const char *text = sample_parked("gone.folded", true, false, true);
	assert_non_null(strstr(text, ";outer;[unregistered] 1\n"));
}

static void paused_agent_takes_no_samples(void **state)
{
	(void)state;
	const char *text = sample_parked("paused.folded", false, true, true);
	assert_string_equal(text, "");
}

/* A thread that uses no CPU time between two ticks is not sampled again at the same
 * instant: it counts as off CPU. */
static void sleeping_thread_counts_off_cpu(void **state)
{
	(void)state;
	const char *text = sample_parked("asleep.folded", false, false, false);
	assert_true(strlen(text) < 200);
}

static void *exit_in_vm(void *arg)
{
	struct tally_agent *a = arg;
	struct tally_agent_thread *t;
	if (tally_agent_thread_register(a, &t))
		return NULL;
	TALLY_AGENT_PUSH(t, 1, 0);
	spin_ms(10);
	return t;
}

/* How many entries besides . and .. path holds. */
static int entries(const char *path)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", path);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

/* Started and stopped in both modes from work, with o, in a working directory of its own:
 * returns to the test's directory and clears TMPDIR after. */
static void run_in(const char *work, const char *tmpdir, const struct tally_agent_opts *o)
{
	char back[300];
	assert_non_null(getcwd(back, sizeof(back)));
	assert_int_equal(mkdir(work, 0755), 0);
	assert_int_equal(chdir(work), 0);
	assert_int_equal(setenv("TMPDIR", tmpdir, 1), 0);
	struct tally_agent *a;
	assert_int_equal(tally_agent_new(o, &a), 0);
	assert_int_equal(tally_agent_start(a), 0);
	assert_int_equal(tally_agent_stop(a), 0);
	tally_agent_free(a);
	unsetenv("TMPDIR");
	assert_int_equal(chdir(back), 0);
}

/* Outputs nobody named go to $TMPDIR, not into the working directory; a path given,
 * relative ones too, is where the file goes. */
static void default_outputs_go_to_tmpdir_not_the_working_directory(void **state)
{
	(void)state;
	TALLY_OPTS(tally_agent_opts, o, .mode = TALLY_AGENT_SAMPLE | TALLY_AGENT_EXACT);
	char tmp[220], name[300];
	snprintf(tmp, sizeof(tmp), "%s", path_in("tmpdir"));
	assert_int_equal(mkdir(tmp, 0755), 0);
	run_in(path_in("quiet"), tmp, &o);
	assert_int_equal(entries(path_in("quiet")), 0);
	snprintf(name, sizeof(name), "%s/tally-agent-%d.folded", tmp, (int)getpid());
	assert_int_equal(access(name, F_OK), 0);
	snprintf(name, sizeof(name), "%s/tally-agent-%d.pb.gz", tmp, (int)getpid());
	assert_int_equal(access(name, F_OK), 0);
	assert_int_equal(entries(tmp), 2);

	o.output = "asked.folded";
	o.exact_output = "asked.pb.gz";
	run_in(path_in("asked"), tmp, &o);
	assert_int_equal(entries(path_in("asked")), 2);
	assert_int_equal(access(path_in("asked/asked.folded"), F_OK), 0);
	assert_int_equal(access(path_in("asked/asked.pb.gz"), F_OK), 0);
}

/* A thread that exits without unregistering is not sampled after it ended. */
static void exited_thread_is_not_sampled(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in("exited.folded"),
				      .omit_thread = true, .flush_ms = 10 };
	struct tally_agent *a;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	reg(a, "gone", 0, 1);
	pthread_t th;
	void *t = NULL;
	assert_int_equal(pthread_create(&th, NULL, exit_in_vm, a), 0);
	assert_int_equal(pthread_join(th, &t), 0);
	assert_non_null(t);
	assert_int_equal(tally_agent_start(a), 0);
	sleep_ms(60);
	struct tally_agent_stats s = { .sz = sizeof(s) };
	assert_int_equal(tally_agent_stop(a), 0);
	assert_int_equal(tally_agent_stats(a, &s), 0);
	tally_agent_free(a);
	assert_true(s.samples <= 1);
	assert_true(s.off_cpu >= 3);
}

static struct tally_agent *new_caller_agent(const char *name, uint32_t flush_ms)
{
	struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in(name),
				      .caller_samples = true, .flush_ms = flush_ms };
	struct tally_agent *a;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	return a;
}

/* Samples a thread takes of itself are its stacks at those calls, in their order. */
static void caller_samples_are_the_callers_stacks(void **state)
{
	(void)state;
	struct tally_agent *a = new_caller_agent("caller.folded", 10);
	uint32_t f = reg(a, "f", 0, 10), g = reg(a, "g", 10, 20);
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	assert_int_equal(tally_agent_sample(t), 0); /* not started: nothing taken */
	assert_int_equal(tally_agent_start(a), 0);
	assert_int_equal(tally_agent_sample(t), 0); /* depth 0: not in the VM */
	TALLY_AGENT_PUSH(t, f, 0);
	assert_int_equal(tally_agent_sample(t), 0);
	sleep_ms(30); /* one drain in between */
	TALLY_AGENT_PUSH(t, g, 3);
	assert_int_equal(tally_agent_sample(t), 0);
	TALLY_AGENT_POP(t);
	assert_int_equal(tally_agent_sample(t), 0);
	tally_agent_pause(a, true);
	assert_int_equal(tally_agent_sample(t), 0);
	tally_agent_pause(a, false);
	assert_int_equal(tally_agent_stop(a), 0);
	struct tally_agent_stats s = { .sz = sizeof(s) };
	assert_int_equal(tally_agent_stats(a, &s), 0);
	tally_agent_free(a);
	char want[200];
	int tid = (int)gettid();
	snprintf(want, sizeof(want), "thread %d;f 1\nthread %d;f;g 1\nthread %d;f 1\n", tid, tid, tid);
	assert_string_equal(slurp(path_in("caller.folded")), want);
	assert_int_equal(s.samples, 3);
	assert_int_equal(s.dropped, 0);
}

/* The pcs sample_pprof gives function name's self weight, in the order of its pc entries
 * (ascending pc), as "pc,pc,...". */
static const char *self_pcs(const struct prof *p, const char *name)
{
	static char out[200];
	size_t used = 0;
	out[0] = 0;
	for (uint32_t i = 0; i < prof_nnodes(p); i++) {
		const struct prof_node *n = prof_node_at(p, i);
		if (n->frame == PROF_NONE || strcmp(prof_frame_label(p, n->frame), name))
			continue;
		for (uint32_t w = n->first_pc; w != PROF_NONE; w = prof_pcw_at(p, w)->next)
			if (prof_pcw_weights(p, w)[0] && used < sizeof(out))
				used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%llu",
							 used ? "," : "",
							 (unsigned long long)prof_pcw_at(p, w)->pc);
	}
	return out;
}

/* A sample right after a push or a pop, before the interpreter publishes its next pc,
 * pairs the new innermost frame with a pc of its own: the callee's first pc, the caller's
 * call site. (It kept the pc of the function left: a pc outside the frame's function, which
 * annotate then could not place; the stack VM's annotate test saw 2 of 2,025 samples.) */
static void push_and_pop_publish_a_pc_of_the_frame(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in("pcs.folded"),
				      .caller_samples = true, .omit_thread = true,
				      .sample_pprof = path_in("pcs.pb.gz") };
	struct tally_agent *a;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	uint32_t f = reg(a, "f", 0, 10), g = reg(a, "g", 10, 20);
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	assert_int_equal(tally_agent_start(a), 0);
	TALLY_AGENT_PUSH(t, f, 0);
	TALLY_AGENT_PC(t, 5);
	TALLY_AGENT_PUSH(t, g, 5);
	assert_int_equal(tally_agent_sample(t), 0); /* g at its entry, 10 */
	TALLY_AGENT_PC(t, 12);
	assert_int_equal(tally_agent_sample(t), 0); /* g at 12 */
	TALLY_AGENT_POP(t);
	assert_int_equal(tally_agent_sample(t), 0); /* f at its call site, 5 */
	TALLY_AGENT_PC(t, 6);
	assert_int_equal(tally_agent_sample(t), 0); /* f at 6 */
	assert_int_equal(tally_agent_stop(a), 0);
	tally_agent_free(a);
	FILE *in = fopen(path_in("pcs.pb.gz"), "rb");
	assert_non_null(in);
	static char data[1 << 16];
	size_t n = fread(data, 1, sizeof(data), in);
	fclose(in);
	struct prof *p;
	assert_int_equal(rep_read_pprof("pcs.pb.gz", data, n, &p), 0);
	assert_string_equal(self_pcs(p, "g"), "10,12");
	assert_string_equal(self_pcs(p, "f"), "5,6");
	prof_free(p);
}

static void sample_needs_caller_samples(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in("nocaller.folded") };
	struct tally_agent *a;
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	assert_int_equal(tally_agent_sample(t), -EINVAL);
	tally_agent_free(a);
}

static size_t count_lines(const char *text)
{
	size_t n = 0;
	for (const char *l = text; *l; l = strchr(l, '\n') + 1)
		n++;
	return n;
}

/* A full ring drops the sample and counts it; what was queued is all written at stop. */
static void full_ring_drops_and_counts(void **state)
{
	(void)state;
	struct tally_agent *a = new_caller_agent("full.folded", 60000);
	uint32_t f = reg(a, "f", 0, 10);
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	assert_int_equal(tally_agent_start(a), 0);
	TALLY_AGENT_PUSH(t, f, 0);
	uint64_t queued = 0, refused = 0;
	for (int i = 0; i < 20000; i++) {
		int rc = tally_agent_sample(t);
		assert_true(rc == 0 || rc == -EAGAIN);
		rc ? refused++ : queued++;
	}
	assert_int_equal(tally_agent_stop(a), 0);
	struct tally_agent_stats s = { .sz = sizeof(s) };
	assert_int_equal(tally_agent_stats(a, &s), 0);
	tally_agent_free(a);
	assert_true(refused > 0 && queued > 0);
	assert_int_equal(s.samples, queued);
	assert_int_equal(s.dropped, refused);
	assert_int_equal(count_lines(slurp(path_in("full.folded"))), queued);
}

/* From a signal handler that interrupts pushes and pops: every sample is a stack the
 * thread had (f, or f;g), none half written, and the samples the handler queued are
 * the stream's lines. */
static struct tally_agent_thread *handler_state;
static volatile sig_atomic_t handler_queued;

static void sample_in_handler(int sig)
{
	(void)sig;
	if (!tally_agent_sample(handler_state))
		handler_queued++;
}

static void samples_from_a_signal_handler(void **state)
{
	(void)state;
	struct tally_agent *a = new_caller_agent("signal.folded", 10);
	uint32_t f = reg(a, "f", 0, 10), g = reg(a, "g", 10, 20);
	assert_int_equal(tally_agent_thread_register(a, &handler_state), 0);
	struct sigaction sa = { .sa_handler = sample_in_handler, .sa_flags = SA_RESTART }, old;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGPROF, &sa, &old), 0);
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF };
	ev._sigev_un._tid = gettid();
	timer_t timer;
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &ev, &timer), 0);
	struct itimerspec every = { { 0, 200000 }, { 0, 200000 } }; /* 5 kHz */
	assert_int_equal(tally_agent_start(a), 0);
	TALLY_AGENT_PUSH(handler_state, f, 0);
	assert_int_equal(timer_settime(timer, 0, &every, NULL), 0);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		TALLY_AGENT_PUSH(handler_state, g, 1);
		TALLY_AGENT_POP(handler_state);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 300000000L);
	timer_delete(timer);
	assert_int_equal(tally_agent_stop(a), 0);
	sigaction(SIGPROF, &old, NULL);
	tally_agent_free(a);
	const char *text = slurp(path_in("signal.folded"));
	char f_line[64], fg_line[64];
	snprintf(f_line, sizeof(f_line), "thread %d;f 1\n", (int)gettid());
	snprintf(fg_line, sizeof(fg_line), "thread %d;f;g 1\n", (int)gettid());
	size_t n = 0;
	for (const char *l = text; *l; l = strchr(l, '\n') + 1, n++)
		assert_true(!strncmp(l, f_line, strlen(f_line)) || !strncmp(l, fg_line, strlen(fg_line)));
	assert_int_equal(n, handler_queued);
	assert_true(n > 50);
}

static void deep_stack_ends_truncated(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in("deep.folded"),
				      .max_depth = 2, .omit_thread = true, .flush_ms = 10 };
	struct tally_agent *a;
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	uint32_t f = reg(a, "f", 0, 10);
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	for (int i = 0; i < 5; i++)
		TALLY_AGENT_PUSH(t, f, 1);
	assert_int_equal(tally_agent_start(a), 0);
	spin_ms(30);
	assert_int_equal(tally_agent_stop(a), 0);
	tally_agent_free(a);
	const char *text = slurp(path_in("deep.folded"));
	assert_non_null(text);
	assert_memory_equal(text, "f;f;[truncated] 1\n", 18);
}

static void several_agents_write_their_own(void **state)
{
	(void)state;
	struct tally_agent *a[2];
	struct tally_agent_thread *t[2];
	const char *names[2] = { "vm_a", "vm_b" };
	for (int i = 0; i < 2; i++) {
		struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in(names[i]),
					      .omit_thread = true, .flush_ms = 10 };
		assert_int_equal(tally_agent_new(&o, &a[i]), 0);
		uint32_t id = reg(a[i], names[i], 0, 1);
		assert_int_equal(tally_agent_thread_register(a[i], &t[i]), 0);
		TALLY_AGENT_PUSH(t[i], id, 0);
		assert_int_equal(tally_agent_start(a[i]), 0);
	}
	spin_ms(40);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tally_agent_stop(a[i]), 0);
		tally_agent_free(a[i]);
		const char *text = slurp(path_in(names[i]));
		char want[20];
		snprintf(want, sizeof(want), "%s 1\n", names[i]);
		assert_non_null(text);
		assert_memory_equal(text, want, strlen(want));
		assert_null(strstr(text, names[1 - i]));
	}
}

/* The child restarts sampling into its own file ("%p" is its pid); the parent's stream
 * goes on and holds no line of the child's. */
static void fork_child_restarts_cleanly(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .output = path_in("fork-%p.folded"),
				      .omit_thread = true, .flush_ms = 10 };
	struct tally_agent *a;
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	uint32_t parent = reg(a, "parent", 0, 1), child = reg(a, "child", 1, 2);
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	TALLY_AGENT_PUSH(t, parent, 0);
	assert_int_equal(tally_agent_start(a), 0);
	spin_ms(20);
	pid_t pid = fork();
	if (pid == 0) {
		/* stopped in the child: start again, with this thread's state kept */
		int ok = tally_agent_stop(a) == -EINVAL;
		TALLY_AGENT_POP(t);
		TALLY_AGENT_PUSH(t, child, 0);
		ok = ok && tally_agent_start(a) == 0;
		spin_ms(40);
		ok = ok && tally_agent_stop(a) == 0;
		tally_agent_free(a);
		_exit(ok ? 0 : 1);
	}
	assert_true(pid > 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	spin_ms(20);
	assert_int_equal(tally_agent_stop(a), 0);
	tally_agent_free(a);
	char name[64];
	snprintf(name, sizeof(name), "fork-%d.folded", (int)pid);
	const char *text = slurp(path_in(name));
	assert_non_null(text);
	assert_memory_equal(text, "child 1\n", 8);
	assert_null(strstr(text, "parent"));
	snprintf(name, sizeof(name), "fork-%d.folded", (int)getpid());
	text = slurp(path_in(name));
	assert_non_null(text);
	assert_memory_equal(text, "parent 1\n", 9);
	assert_null(strstr(text, "child"));
}

static void exact_hooks_check_their_state(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .mode = TALLY_AGENT_EXACT,
				      .exact_output = path_in("exact.pb.gz") };
	struct tally_agent *a;
	struct tally_agent_thread *t;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	uint32_t f = reg(a, "f", 0, 4);
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	assert_int_equal(tally_agent_start(a), 0);
	assert_int_equal(tally_agent_exit(t), -EINVAL);		/* nothing entered */
	assert_int_equal(tally_agent_enter(t, 999, 0), -ENOENT); /* never registered */
	assert_int_equal(tally_agent_enter(t, f, 0), 0);
	/* a failed hook leaves no profile that would look exact */
	assert_int_not_equal(tally_agent_stop(a), 0);
	assert_null(slurp(path_in("exact.pb.gz")));
	tally_agent_free(a);

	/* sampling-only agents have no exact hooks */
	assert_int_equal(tally_agent_new(NULL, &a), 0);
	assert_int_equal(tally_agent_thread_register(a, &t), 0);
	assert_int_equal(tally_agent_enter(t, 1, 0), -EINVAL);
	tally_agent_free(a);
}

static void jit_regions_go_to_perf_map(void **state)
{
	(void)state;
	struct tally_agent_opts o = { .sz = sizeof(o), .jit_dir = dir };
	struct tally_agent *a;
	assert_int_equal(tally_agent_new(&o, &a), 0);
	assert_int_equal(tally_agent_register_jit(a, "jit:loop", (void *)0x7f0000001000, 0x40), 0);
	assert_int_equal(tally_agent_register_jit(a, "two\nlines", (void *)0x7f0000002000, 0x8), 0);
	assert_int_equal(tally_agent_register_jit(a, "empty", (void *)0x1000, 0), -EINVAL);
	tally_agent_free(a);
	char name[64];
	snprintf(name, sizeof(name), "perf-%d.map", (int)getpid());
	const char *text = slurp(path_in(name));
	assert_non_null(text);
	assert_string_equal(text, "7f0000001000 40 jit:loop\n7f0000002000 8 two lines\n");
}

/* The record says what it is only while the loop runs, and names the agent's registry. */
static void loop_record_names_its_registry(void **state)
{
	(void)state;
	struct tally_agent *plain = NULL, *a = NULL;
	struct tally_agent_opts o = { .sz = sizeof(o), .mode = TALLY_AGENT_MIXED, .jit_dir = dir };
	assert_int_equal(tally_agent_new(NULL, &plain), 0);
	assert_int_equal(tally_agent_new(&o, &a), 0);
	struct tally_agent_loop loop;
	struct tally_agent_frame frames[4];
	assert_null(tally_agent_loop_begin(plain, &loop, frames, 4));
	struct tally_agent_thread *t = tally_agent_loop_begin(a, &loop, frames, 4);
	assert_ptr_equal(t, &loop.state);
	assert_true(loop.magic == TALLY_AGENT_LOOP_MAGIC);
	assert_true(loop.self == (uint64_t)(uintptr_t)&loop);
	assert_int_equal(loop.version, TALLY_AGENT_LOOP_VERSION);
	assert_int_equal(t->max_depth, 4);
	assert_ptr_equal(t->frames, frames);
	struct tally_agent_function f = { .sz = sizeof(f), .name = "f", .start = 0, .end = 4 };
	uint32_t id;
	assert_int_equal(tally_agent_register(a, &f, &id), 0);
	TALLY_AGENT_PUSH(t, id, 0);
	TALLY_AGENT_PC(t, 3);
	assert_int_equal(t->depth, 1);
	assert_int_equal(frames[0].function, id);
	assert_true(t->pc == 3);
	tally_agent_loop_end(&loop);
	assert_true(loop.magic == 0);
	char name[64];
	snprintf(name, sizeof(name), "tally-vm-%d-%u.dump", (int)getpid(), loop.agent);
	FILE *dump = fopen(path_in(name), "rb");
	uint32_t magic = 0;
	assert_non_null(dump);
	assert_int_equal(fread(&magic, 4, 1, dump), 1);
	assert_true(magic == 0x4A695444u); /* jitdump's, tools/perf/Documentation/jitdump-specification.txt */
	fclose(dump);
	tally_agent_free(a);
	tally_agent_free(plain);
}

/* A forked child's samples name its pid: its registry is written again under that pid,
 * with the functions registered before the fork. */
static void fork_child_writes_its_registry(void **state)
{
	(void)state;
	struct tally_agent *a = NULL;
	struct tally_agent_opts o = { .sz = sizeof(o), .mode = TALLY_AGENT_MIXED, .jit_dir = dir };
	assert_int_equal(tally_agent_new(&o, &a), 0);
	struct tally_agent_function f = { .sz = sizeof(f), .name = "before_fork", .start = 0, .end = 2 };
	uint32_t id;
	assert_int_equal(tally_agent_register(a, &f, &id), 0);
	struct tally_agent_loop loop;
	struct tally_agent_frame frames[1];
	assert_non_null(tally_agent_loop_begin(a, &loop, frames, 1));
	pid_t pid = fork();
	if (pid == 0) {
		char name[64];
		snprintf(name, sizeof(name), "tally-vm-%d-%u.dump", (int)getpid(), loop.agent);
		FILE *d = fopen(path_in(name), "rb");
		static char buf[4096];
		size_t n = d ? fread(buf, 1, sizeof(buf), d) : 0;
		bool named = false;
		for (size_t i = 0; i + 11 < n; i++)
			named |= !memcmp(buf + i, "before_fork", 11);
		_exit(named ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tally_agent_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts_are_read_by_size),
		cmocka_unit_test(registry_checks_and_unregisters),
		cmocka_unit_test(thread_limit_is_enospc),
		cmocka_unit_test(sampler_names_thread_and_frames),
		cmocka_unit_test(sampler_marks_unregistered),
		cmocka_unit_test(paused_agent_takes_no_samples),
		cmocka_unit_test(sleeping_thread_counts_off_cpu),
		cmocka_unit_test(exited_thread_is_not_sampled),
		cmocka_unit_test(deep_stack_ends_truncated),
		cmocka_unit_test(caller_samples_are_the_callers_stacks),
		cmocka_unit_test(push_and_pop_publish_a_pc_of_the_frame),
		cmocka_unit_test(sample_needs_caller_samples),
		cmocka_unit_test(full_ring_drops_and_counts),
		cmocka_unit_test(samples_from_a_signal_handler),
		cmocka_unit_test(several_agents_write_their_own),
		cmocka_unit_test(default_outputs_go_to_tmpdir_not_the_working_directory),
		cmocka_unit_test(fork_child_restarts_cleanly),
		cmocka_unit_test(exact_hooks_check_their_state),
		cmocka_unit_test(jit_regions_go_to_perf_map),
		cmocka_unit_test(loop_record_names_its_registry),
		cmocka_unit_test(fork_child_writes_its_registry),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
