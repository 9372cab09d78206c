/*
 * Ptrace mode (ptrace_sampler.h). Which threads are sampled: the kernel's CPU clock samples
 * a thread each period of its CPU time, so each thread here earns credit as its CPU time
 * grows (/proc/PID/task/TID/schedstat, nanoseconds) and is sampled at the first tick that
 * finds it running (state R) with a period's credit: shares follow CPU time as on-CPU
 * sampling's do, and a thread is never sampled where it sleeps. A sample stops that
 * thread alone (PTRACE_INTERRUPT), never the process.
 *
 * The target is never harmed: threads are seized (PTRACE_SEIZE: no signal is sent, and a
 * tracer that dies detaches them, leaving them running), every stop ends in a resume,
 * every signal a thread receives is passed on, a group stop (SIGSTOP, ^Z) is kept with
 * PTRACE_LISTEN, new threads are followed (PTRACE_O_TRACECLONE), and an exec lets the
 * process go.
 */
#include "record/ptrace_sampler.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/vec.h"

#define OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)
/* Reports of other kinds a wait for a thread's stop passes on before giving up on it. */
#define MAX_REPORTS 64
/* The identifier of the interpreter records: kernel event ids count up from 1. */
#define OUT_ID 0x7470790000000001ull
/* A process let go is remembered this long, for the kernel's samples still in the rings. */
#define ENDED_NS 5000000000ull
/* Periods of CPU time a thread's credit holds at most (rec_ptrace_tick). */
#define MAX_CREDIT 8
/* Frames of the frame-pointer chain (--call-graph fp) at most, as the kernel's default. */
#define FP_MAX 127

struct thread {
	uint32_t tid;
	uint64_t native_tid; /* its id in its own pid namespace (NSpid) */
	int schedstat;       /* /proc/PID/task/TID/schedstat, open */
	uint64_t ran, credit; /* CPU time at the last look, and not yet sampled (ns) */
	uint64_t cache;      /* its interpreter reader's word (rec_interp_thread) */
};

struct proc {
	uint32_t pid;
	struct rec_interp_proc ip; /* ip.ops NULL once it is let go */
	VEC(struct thread) threads;
	uint64_t since, until; /* CLOCK_MONOTONIC ns: its samples are ours in between */
};

struct rec_ptrace {
	struct perf_event_attr sample_attr, out_attr;
	uint64_t out_id, period_ns;
	int timer;
	bool armed;
	VEC(struct proc *) procs;
	/* The command tally started (0: none), and its end when a wait took it: any wait
	 * here may (a detach's too). */
	pid_t child, reaped;
	int reaped_status;
	/* The sample being written: its thread and time, the records' emitter. */
	struct proc *p;
	uint32_t tid, cpu;
	uint64_t time;
	rec_ptrace_emit_fn emit;
	void *arg;
	uint8_t rec[65536];
	uint64_t samples, stopped_ns, cpu_ns;
};

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

int rec_ptrace_new(const struct perf_event_attr *sample_attr, uint64_t period_ns,
		    struct rec_ptrace **out)
{
	const uint64_t known = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER;
	if (!(sample_attr->sample_type & PERF_SAMPLE_IDENTIFIER) ||
	    sample_attr->sample_type & ~known)
		return err_set(-EINVAL, "ptrace mode: samples of this kind are not written by "
					"tally");
	struct rec_ptrace *t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(-ENOMEM, "out of memory");
	t->sample_attr = *sample_attr;
	rec_interp_output_attr(&t->out_attr);
	t->out_id = OUT_ID;
	t->period_ns = period_ns ? period_ns : 1000000;
	t->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->timer < 0) {
		int e = errno;
		free(t);
		return err_set(-e, "ptrace mode: timerfd: %s", strerror(e));
	}
	*out = t;
	return 0;
}

/* Starts the ticks, at the first process taken over: a recording without one is not
 * woken every period for nothing. */
static int arm(struct rec_ptrace *t)
{
	struct itimerspec its = {
		.it_interval = { (time_t)(t->period_ns / 1000000000ull),
				 (long)(t->period_ns % 1000000000ull) },
	};
	its.it_value = its.it_interval;
	if (timerfd_settime(t->timer, 0, &its, NULL))
		return err_set(-errno, "ptrace mode: timerfd: %s", strerror(errno));
	t->armed = true;
	return 0;
}

int rec_ptrace_fd(const struct rec_ptrace *t) { return t->timer; }

void rec_ptrace_set_child(struct rec_ptrace *t, pid_t child) { t->child = child; }

static struct proc *live_proc(const struct rec_ptrace *t, uint32_t pid)
{
	for (size_t i = 0; i < t->procs.n; i++)
		if (t->procs.v[i]->pid == pid && t->procs.v[i]->until == UINT64_MAX)
			return t->procs.v[i];
	return NULL;
}

/* The live process and index of thread tid, or NULL. */
static struct proc *proc_of_thread(const struct rec_ptrace *t, uint32_t tid, size_t *at)
{
	for (size_t i = 0; i < t->procs.n; i++) {
		struct proc *p = t->procs.v[i];
		for (size_t k = 0; p->until == UINT64_MAX && k < p->threads.n; k++)
			if (p->threads.v[k].tid == tid) {
				*at = k;
				return p;
			}
	}
	return NULL;
}

/* The thread's id in the innermost pid namespace (the last of /proc's NSpid), which is
 * what CPython 3.11+ keeps; its tid when that cannot be read. */
static uint64_t native_tid_of(uint32_t pid, uint32_t tid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/status", pid, tid);
	FILE *f = fopen(path, "re");
	uint64_t id = tid;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');
			if (last)
				id = strtoull(last + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return id;
}

static void add_thread(struct proc *p, uint32_t tid)
{
	for (size_t k = 0; k < p->threads.n; k++)
		if (p->threads.v[k].tid == tid)
			return;
	struct thread *th = vec_push(&p->threads);
	if (!th)
		return; /* not sampled; still traced, its reports handled as any */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", p->pid, tid);
	*th = (struct thread){ .tid = tid, .native_tid = native_tid_of(p->pid, tid),
			       .schedstat = open(path, O_RDONLY | O_CLOEXEC) };
}

static void drop_thread(struct proc *p, size_t k)
{
	if (p->threads.v[k].schedstat >= 0)
		close(p->threads.v[k].schedstat);
	p->threads.v[k] = p->threads.v[--p->threads.n];
}

/* The process is let go: its samples are the kernel's again from now. */
static void end_proc(struct proc *p)
{
	while (p->threads.n)
		drop_thread(p, p->threads.n - 1);
	vec_free(&p->threads);
	if (p->ip.ops)
		p->ip.ops->free(p->ip.self);
	p->ip.ops = NULL;
	p->until = now_ns();
}

static void note_gone(struct rec_ptrace *t, pid_t tid, int status)
{
	size_t k;
	struct proc *p = proc_of_thread(t, (uint32_t)tid, &k);
	if (p)
		drop_thread(p, k);
	if (tid == t->child && t->child > 0) {
		t->reaped = t->child;
		t->reaped_status = status;
	}
}

/* One report of a traced thread (or the command's end) that is not a stop asked for:
 * handled so that the thread goes on as it would untraced. */
static void handle(struct rec_ptrace *t, pid_t tid, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		note_gone(t, tid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	int event = status >> 16, sig = WSTOPSIG(status);
	size_t k;
	struct proc *p = proc_of_thread(t, (uint32_t)tid, &k);
	unsigned long msg = 0;
	switch (event) {
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, tid, 0, 0); /* a group stop: stays stopped */
		else
			ptrace(PTRACE_CONT, tid, 0, 0); /* a new thread, or an interrupt late */
		return;
	case PTRACE_EVENT_CLONE:
		if (p && !ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg))
			add_thread(p, (uint32_t)msg);
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	case PTRACE_EVENT_EXEC:
		/* Another program, read anew if it is an interpreter (its mappings say). */
		ptrace(PTRACE_DETACH, tid, 0, 0);
		if (p)
			end_proc(p);
		return;
	case 0: /* a signal on its way to the thread: delivered */
		ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
		return;
	default:
		ptrace(PTRACE_CONT, tid, 0, 0);
	}
}

/* Waits for thread tid's interrupt stop, handling what it reports before: 0 when it is
 * stopped there, -1 when it will not be (gone, exec, group stop). Asleep, not polling:
 * polled for 200 us, on 2 busy cores, tally held the CPU the thread needed to reach its
 * stop, which then came at its next kernel entry instead: 4% of the chain's samples
 * (frames_work.py) landed at the exit of its clock_gettime syscall, against 0.3-0.6%. */
static int wait_interrupt(struct rec_ptrace *t, pid_t tid)
{
	for (int i = 0; i < MAX_REPORTS; i++) {
		int status;
		pid_t r = waitpid(tid, &status, __WALL);
		if (r < 0)
			return -1;
		if (WIFSTOPPED(status) && status >> 16 == PTRACE_EVENT_STOP &&
		    WSTOPSIG(status) == SIGTRAP)
			return 0;
		handle(t, tid, status);
		bool group = WIFSTOPPED(status) && status >> 16 == PTRACE_EVENT_STOP;
		if (!WIFSTOPPED(status) || group || status >> 16 == PTRACE_EVENT_EXEC)
			return -1;
	}
	return -1;
}

/* Whether process pid has exited (a zombie, or reaped). */
static bool ended(uint32_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	const char *state = file_proc_stat(path, 3, buf, sizeof(buf));
	return !state || *state == 'Z' || *state == 'X';
}

/* Seizes every thread of pid, listing them again until no new one appeared (a thread
 * started by a thread not yet seized is not followed by TRACECLONE). */
static int seize_all(struct proc *p)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/task", p->pid);
	for (bool more = true; more;) {
		more = false;
		DIR *d = opendir(path);
		if (!d)
			return err_set(-ESRCH, "process %u: gone", p->pid);
		for (struct dirent *e; (e = readdir(d));) {
			uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10);
			size_t k;
			for (k = 0; k < p->threads.n && p->threads.v[k].tid != tid; k++)
				;
			if (!tid || k < p->threads.n)
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, OPTIONS)) {
				if (errno == ESRCH)
					continue; /* ended meanwhile */
				int e2 = errno;
				closedir(d);
				if (ended(p->pid)) /* a zombie refuses with EPERM */
					return err_set(-ESRCH, "process %u: gone", p->pid);
				return err_set(-e2, "process %u: ptrace: %s", p->pid, strerror(e2));
			}
			add_thread(p, tid);
			more = true;
		}
		closedir(d);
	}
	return 0;
}

static void detach_thread(struct rec_ptrace *t, uint32_t tid)
{
	if (!ptrace(PTRACE_INTERRUPT, tid, 0, 0) && !wait_interrupt(t, (pid_t)tid))
		ptrace(PTRACE_DETACH, tid, 0, 0);
}

/* Lets every thread of p go and forgets them. */
static void release(struct rec_ptrace *t, struct proc *p)
{
	while (p->threads.n) {
		uint32_t tid = p->threads.v[p->threads.n - 1].tid;
		drop_thread(p, p->threads.n - 1);
		detach_thread(t, tid);
	}
	end_proc(p);
}

int rec_ptrace_start(struct rec_ptrace *t, uint32_t pid, struct rec_interp_proc ip)
{
	if (live_proc(t, pid))
		rec_ptrace_stop(t, pid);
	int r = t->armed ? 0 : arm(t);
	struct proc *p = r ? NULL : calloc(1, sizeof(*p));
	struct proc **slot = p ? vec_push(&t->procs) : NULL;
	if (!slot) {
		free(p);
		ip.ops->free(ip.self);
		return r ? r : err_set(-ENOMEM, "out of memory");
	}
	*slot = p;
	p->pid = pid;
	p->ip = ip;
	p->since = now_ns();
	p->until = UINT64_MAX;
	r = seize_all(p);
	if (r) {
		release(t, p);
		p->until = p->since; /* never ours */
	}
	return r;
}

void rec_ptrace_stop(struct rec_ptrace *t, uint32_t pid)
{
	struct proc *p = live_proc(t, pid);
	if (p)
		release(t, p);
}

bool rec_ptrace_started(const struct rec_ptrace *t) { return t->armed; }

void rec_ptrace_regen(struct rec_ptrace *t)
{
	for (size_t i = 0; i < t->procs.n; i++)
		if (t->procs.v[i]->ip.ops)
			t->procs.v[i]->ip.ops->regen(t->procs.v[i]->ip.self);
}

void rec_ptrace_free(struct rec_ptrace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->procs.n; i++) {
		if (t->procs.v[i]->until == UINT64_MAX)
			release(t, t->procs.v[i]);
		free(t->procs.v[i]);
	}
	vec_free(&t->procs);
	close(t->timer);
	free(t);
}

/* Forgets processes let go long enough ago that the rings hold none of their samples. */
static void forget_ended(struct rec_ptrace *t, uint64_t now)
{
	size_t k = 0;
	for (size_t i = 0; i < t->procs.n; i++) {
		struct proc *p = t->procs.v[i];
		if (p->until != UINT64_MAX && now - p->until > ENDED_NS)
			free(p);
		else
			t->procs.v[k++] = p;
	}
	t->procs.n = k;
}

bool rec_ptrace_reap(struct rec_ptrace *t, pid_t child, int *status)
{
	int st;
	t->child = child;
	for (pid_t r; (r = waitpid(-1, &st, __WALL | WNOHANG)) > 0;)
		handle(t, r, st);
	if (!t->reaped || t->reaped != child)
		return false;
	*status = t->reaped_status;
	return true;
}

/* CPU time so far (ns) of the thread, from its schedstat's first field. */
static bool cpu_time(const struct thread *th, uint64_t *ns)
{
	char buf[96];
	ssize_t n = th->schedstat < 0 ? -1 : pread(th->schedstat, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = 0;
	*ns = strtoull(buf, NULL, 10);
	return true;
}

/* Whether the thread is running or runnable (state R), and the CPU it last ran on. */
static bool running(uint32_t pid, uint32_t tid, uint32_t *cpu)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	const char *f = file_proc_stat(path, 3, buf, sizeof(buf)); /* state */
	if (!f || *f != 'R')
		return false;
	for (int field = 3; f && field < 39; field++) /* processor */
		f = strchr(f + 1, ' ');
	if (f)
		*cpu = (uint32_t)strtoul(f + 1, NULL, 10);
	return true;
}

static void put(uint8_t **at, const void *v, size_t n)
{
	memcpy(*at, v, n);
	*at += n;
}

static void put64(uint8_t **at, uint64_t v) { put(at, &v, 8); }

/* An interpreter record as a sample of their attribute: identifier, pid/tid, time, cpu,
 * raw (its size, then the payload padded to 8 bytes with the size word). */
static int emit_payload(const void *payload, size_t size, void *arg)
{
	struct rec_ptrace *t = arg;
	size_t raw = ((size + 4 + 7) & ~(size_t)7) - 4;
	size_t total = sizeof(struct perf_event_header) + 32 + 4 + raw;
	uint8_t *r = t->rec, *at = r + sizeof(struct perf_event_header);
	if (total > sizeof(t->rec))
		return 0;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
				       (uint16_t)total };
	memcpy(r, &h, sizeof(h));
	put64(&at, t->out_id);
	uint32_t ids[2] = { t->p->pid, t->tid }, cpu[2] = { t->cpu, 0 }, rsize = (uint32_t)raw;
	put(&at, ids, 8);
	put64(&at, t->time);
	put(&at, cpu, 8);
	put(&at, &rsize, 4);
	put(&at, payload, size);
	memset(at, 0, raw - size);
	return t->emit(r, total, t->arg);
}

/* perf's x86 register numbers (asm/perf_regs.h) in user_regs_struct. */
static uint64_t perf_reg(const struct user_regs_struct *u, int i)
{
	switch (i) {
	case 0: return u->rax;
	case 1: return u->rbx;
	case 2: return u->rcx;
	case 3: return u->rdx;
	case 4: return u->rsi;
	case 5: return u->rdi;
	case 6: return u->rbp;
	case 7: return u->rsp;
	case 8: return u->rip;
	case 9: return u->eflags;
	case 10: return u->cs;
	case 11: return u->ss;
	case 12: return u->ds;
	case 13: return u->es;
	case 14: return u->fs;
	case 15: return u->gs;
	case 16: return u->r8;
	case 17: return u->r9;
	case 18: return u->r10;
	case 19: return u->r11;
	case 20: return u->r12;
	case 21: return u->r13;
	case 22: return u->r14;
	case 23: return u->r15;
	}
	return 0;
}

/* --call-graph fp: the return addresses of the frame-pointer chain, as the kernel's walk. */
static void fp_chain(const struct rec_ptrace *t, const struct user_regs_struct *u,
		     uint8_t **at)
{
	uint8_t *count = *at;
	uint64_t n = 2;
	*at += 8;
	put64(at, PERF_CONTEXT_USER);
	put64(at, u->rip);
	void *pid = (void *)(uintptr_t)t->p->pid;
	for (uint64_t fp = u->rbp, pair[2]; n < FP_MAX + 1 && fp && !(fp & 7); fp = pair[0]) {
		if (rec_mem_read_process(pid, fp, pair, sizeof(pair)) || !pair[1] || pair[0] <= fp)
			break;
		put64(at, pair[1]);
		n++;
	}
	memcpy(count, &n, 8);
}

/* The CPU sample of the stopped thread into t->rec: its size. */
static size_t build_sample(struct rec_ptrace *t, uint64_t sample_id,
			   const struct user_regs_struct *u)
{
	const struct perf_event_attr *a = &t->sample_attr;
	uint8_t *r = t->rec, *at = r + sizeof(struct perf_event_header);
	put64(&at, sample_id);
	if (a->sample_type & PERF_SAMPLE_IP)
		put64(&at, u->rip);
	uint32_t ids[2] = { t->p->pid, t->tid }, cpu[2] = { t->cpu, 0 };
	if (a->sample_type & PERF_SAMPLE_TID)
		put(&at, ids, 8);
	if (a->sample_type & PERF_SAMPLE_TIME)
		put64(&at, t->time);
	if (a->sample_type & PERF_SAMPLE_CPU)
		put(&at, cpu, 8);
	if (a->sample_type & PERF_SAMPLE_PERIOD)
		put64(&at, t->period_ns);
	if (a->sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (a->exclude_callchain_user)
			put64(&at, 0);
		else
			fp_chain(t, u, &at);
	}
	if (a->sample_type & PERF_SAMPLE_REGS_USER) {
		put64(&at, PERF_SAMPLE_REGS_ABI_64);
		for (int i = 0; i < 64; i++)
			if (a->sample_regs_user >> i & 1)
				put64(&at, perf_reg(u, i));
	}
	if (a->sample_type & PERF_SAMPLE_STACK_USER) {
		/* As the kernel: the size asked for, cut so that the record fits its 16-bit
		 * size, then the bytes read (dyn_size) from the stack pointer up. */
		size_t room = sizeof(t->rec) - 24 - (size_t)(at - r);
		size_t size = a->sample_stack_user < room ? a->sample_stack_user : room;
		size &= ~(size_t)7;
		put64(&at, size);
		struct iovec local = { at, size }, remote = { (void *)(uintptr_t)u->rsp, size };
		ssize_t got = size ? process_vm_readv((pid_t)t->p->pid, &local, 1, &remote, 1, 0)
				   : 0;
		if (got < 0)
			got = 0;
		memset(at + got, 0, size - (size_t)got);
		at += size;
		if (size)
			put64(&at, (uint64_t)got);
	}
	size_t total = (size_t)(at - r);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
				       (uint16_t)total };
	memcpy(r, &h, sizeof(h));
	return total;
}

/* Whether the thread stopped on its way out of a system call: it entered by one
 * (orig_rax holds its number; an interrupt leaves -1) through the instruction before its
 * ip, syscall (0f 05). */
static bool at_syscall_exit(const struct proc *p, const struct user_regs_struct *u)
{
	uint8_t insn[2];
	return (int64_t)u->orig_rax >= 0 &&
	       !rec_mem_read_process((void *)(uintptr_t)p->pid, u->rip - 2, insn, 2) &&
	       insn[0] == 0x0f && insn[1] == 0x05;
}

/* Stops thread k of p, writes its interpreter's records and sample, lets it go: whether it did.
 * A stop at the exit of a system call is no sample: the kernel's user-space sampling
 * never lands in one, and an interrupt slow to arrive (a loaded machine) lets the thread
 * reach its next system call, which would then get the samples of the code before it (4%
 * of the chain's samples at its clock_gettime under a load of 45 on 2 cores). The thread
 * is sampled again at a later tick. */
static bool sample(struct rec_ptrace *t, struct proc *p, size_t k, uint64_t sample_id)
{
	uint32_t tid = p->threads.v[k].tid;
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || wait_interrupt(t, (pid_t)tid))
		return false;
	uint64_t stopped = now_ns();
	struct user_regs_struct u;
	/* handle() may have moved the threads while waiting */
	if (live_proc(t, p->pid) != p || k >= p->threads.n || p->threads.v[k].tid != tid ||
	    ptrace(PTRACE_GETREGS, tid, 0, &u) || at_syscall_exit(p, &u)) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return false;
	}
	struct thread *th = &p->threads.v[k];
	t->p = p;
	t->tid = tid;
	t->time = now_ns();
	struct rec_mem mem = { rec_mem_read_process, (void *)(uintptr_t)p->pid };
	struct rec_interp_thread it = { p->pid, tid, th->native_tid, &u, &th->cache };
	/* The sample's own record is built last into t->rec, which the payloads use first. */
	p->ip.ops->walk(p->ip.self, &mem, &it, emit_payload, t);
	size_t size = build_sample(t, sample_id, &u);
	ptrace(PTRACE_CONT, tid, 0, 0);
	t->stopped_ns += now_ns() - stopped;
	t->samples++;
	t->emit(t->rec, size, t->arg);
	t->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	return true;
}

bool rec_ptrace_tick(struct rec_ptrace *t, uint64_t sample_id, pid_t child, int *status,
		      rec_ptrace_emit_fn emit, void *arg)
{
	uint64_t ticks;
	if (read(t->timer, &ticks, sizeof(ticks)) < 0)
		ticks = 0;
	bool ended = rec_ptrace_reap(t, child, status);
	t->emit = emit;
	t->arg = arg;
	forget_ended(t, now_ns());
	for (size_t i = 0; i < t->procs.n; i++) {
		struct proc *p = t->procs.v[i];
		for (size_t k = 0; p->until == UINT64_MAX && k < p->threads.n; k++) {
			struct thread *th = &p->threads.v[k];
			uint64_t ran;
			if (!cpu_time(th, &ran))
				continue;
			/* Credit for MAX_CREDIT periods at most, spent one sample a tick: ticks
			 * late on a busy machine are made up for by the next ones (two periods
			 * lost 12-23% of the samples at a load of 6), and a thread that ran long
			 * ago does not keep being sampled where it runs now. */
			th->credit += th->ran && ran > th->ran ? ran - th->ran : 0;
			if (th->credit > MAX_CREDIT * t->period_ns)
				th->credit = MAX_CREDIT * t->period_ns;
			th->ran = ran;
			if (th->credit < t->period_ns || !running(p->pid, th->tid, &t->cpu))
				continue;
			if (sample(t, p, k, sample_id))
				p->threads.v[k].credit -= t->period_ns;
		}
	}
	return ended || rec_ptrace_reap(t, child, status);
}

bool rec_ptrace_replaces(const struct rec_ptrace *t, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	uint32_t pid;
	uint64_t time;
	/* identifier, ip, pid/tid, time */
	if (h->type != PERF_RECORD_SAMPLE || size < 40)
		return false;
	memcpy(&pid, (const uint8_t *)rec + 24, 4);
	memcpy(&time, (const uint8_t *)rec + 32, 8);
	for (size_t i = 0; i < t->procs.n; i++) {
		const struct proc *p = t->procs.v[i];
		if (p->pid == pid && time >= p->since && time < p->until)
			return true;
	}
	return false;
}

const struct perf_event_attr *rec_ptrace_attr(const struct rec_ptrace *t)
{
	return &t->out_attr;
}

const uint64_t *rec_ptrace_ids(const struct rec_ptrace *t, size_t *n)
{
	*n = 1;
	return &t->out_id;
}

bool rec_ptrace_owns(const struct rec_ptrace *t, const void *rec, size_t size)
{
	uint64_t id;
	return perf_sample_id(rec, size, &id) && id == t->out_id;
}

void rec_ptrace_counters(const struct rec_ptrace *t, uint64_t *samples, uint64_t *stopped_ns,
			  uint64_t *cpu_ns)
{
	*samples = t->samples;
	*stopped_ns = t->stopped_ns;
	*cpu_ns = t->cpu_ns;
}
