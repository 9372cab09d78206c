/*
 * A recording session: events on every CPU for the target (a command started with counting
 * disabled until its exec, following its children through inherit; or the threads of
 * running processes, whose existing mappings come from /proc), ring buffers drained into a
 * perf.data file until the command exits or SIGINT/SIGTERM arrives (which stops the
 * recording, not the command: tally then waits for it). The command's exit status is
 * returned for tally to exit with. Mapped files are noted as their mmap records
 * arrive (modules.c), processes for their perf maps, kept at the end (jitmaps.c).
 */
#include "record/record.h"

#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/spawn.h"
#include "base/vec.h"
#include "record/jitmaps.h"
#include "record/modules.h"
#include "record/offcpu.h"
#include "record/priority.h"
#include "record/python.h"
#include "record/sideband.h"
#include "record/system.h"

/* 8 MiB per CPU: 250 ms of 32 KiB samples at 1 kHz, so that tally may wait that long for a
 * CPU on a loaded machine without losing samples (2 MiB lost some at load 10 on 2 cores).
 * Without CAP_IPC_LOCK the kernel caps locked ring memory (perf_event_mlock_kb): smaller
 * rings are tried down to MIN_RING_PAGES. */
#define RING_PAGES 2048
#define MIN_RING_PAGES 16
/* --off-cpu: 32 MiB per CPU, as a switch-heavy program fills rings several times faster
 * than sampling does (bench/offcpu.sh: about 200 MB/s with 32 KiB stacks, which 8 MiB
 * rings lost 567 samples of in one of three runs), but no more than 256 MiB over all CPUs
 * (-a on a large machine). */
#define OFF_CPU_RING_PAGES 8192
#define OFF_CPU_ALL_RINGS_PAGES 65536
#define MAX_CPUS 256

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

struct session {
	const struct rec_opts *o;
	struct perf_event_attr attr;
	struct perf_writer *w;
	struct perf_ring rings[MAX_CPUS];
	int ring_fd[MAX_CPUS];
	VEC(int) fds;
	VEC(uint64_t) ids; /* the event id of each of fds */
	struct perf_event_attr off_attr; /* --off-cpu: the sched_switch event */
	VEC(uint64_t) off_ids;
	VEC(int) cpu_fds; /* the sampling events' (not the switch events'): BPF attaches there */
	int ncpus;
	size_t ring_pages; /* per CPU, chosen before the events (their wake-up mark is a quarter) */
	int cpu[MAX_CPUS]; /* the online CPUs: rings are indexed like this array */
	struct rec_result *res;
	struct rec_modules modules;
	struct rec_jitmaps jitmaps;
	struct rec_pyprocs py; /* bpf NULL: no Python frames */
	struct rec_pypair pair[MAX_CPUS]; /* per ring, with py.bpf */
	int ring; /* the ring being drained */
};

static int add_fd(struct session *s, int fd, bool off_cpu)
{
	if (!vec_reserve(&s->fds, 1) || !vec_reserve(&s->ids, 1) || !vec_reserve(&s->off_ids, 1) ||
	    !vec_reserve(&s->cpu_fds, 1))
		return err_set(-ENOMEM, "out of memory");
	if (!off_cpu)
		*vec_push(&s->cpu_fds) = fd;
	uint64_t *id = off_cpu ? vec_push(&s->off_ids) : vec_push(&s->ids);
	if (ioctl(fd, PERF_EVENT_IOC_ID, id) < 0)
		*id = 0;
	*vec_push(&s->fds) = fd;
	return 0;
}

/* A write that failed (a full disk) stops the recording, not the target: the events are
 * disabled, what the rings still hold is dropped and the file keeps what was written. */
static void stop_recording(struct session *s)
{
	for (size_t i = 0; i < s->fds.n; i++)
		ioctl(s->fds.v[i], PERF_EVENT_IOC_DISABLE, 0);
	err_clear();
}

static int write_record(const void *rec, size_t size, void *arg)
{
	struct session *s = arg;
	if (perf_writer_error(s->w))
		return 0;
	if (s->py.bpf && rec_python_owns(s->py.bpf, rec, size))
		rec_python_account(s->res, rec, size);
	else
		rec_account(s->res, &s->modules, rec, size);
	if (!s->o->no_python)
		rec_pyprocs_note(&s->py, rec, size);
	rec_jitmaps_note(&s->jitmaps, rec, size);
	if (perf_writer_add(s->w, rec, size))
		stop_recording(s);
	return 0;
}

/* Records tally makes itself carry the trailer of the sample type, whose identifier then
 * comes last: 0, which perf and tally read as the first attribute's. */
static int on_synth(const void *rec, size_t size, void *arg)
{
	struct session *s = arg;
	if (!(s->attr.sample_type & PERF_SAMPLE_IDENTIFIER))
		return write_record(rec, size, arg);
	uint8_t buf[8192 + 8 + 64];
	struct perf_event_header h;
	if (size > sizeof(buf) - 8)
		return 0;
	memcpy(&h, rec, sizeof(h));
	h.size = (uint16_t)(size + 8);
	memcpy(buf, rec, size);
	memcpy(buf, &h, sizeof(h));
	memset(buf + size, 0, 8);
	return write_record(buf, size + 8, arg);
}

static int on_ring_record(const void *rec, size_t size, void *arg)
{
	struct session *s = arg;
	if (s->py.bpf)
		return rec_pypair_add(&s->pair[s->ring], rec_python_owns(s->py.bpf, rec, size), rec,
				      size, write_record, s);
	return write_record(rec, size, s);
}

static int drain_all(struct session *s)
{
	for (int c = 0; c < s->ncpus; c++) {
		s->ring = c;
		int r = perf_ring_drain(&s->rings[c], on_ring_record, s);
		if (r)
			return r;
	}
	return 0;
}

/* The default event: cycles where the hardware counts them, else cpu-clock. Never precise:
 * on AMD, precision means IBS, whose sampled ip and user stack come from different moments
 * (the kernel copies the stack at the NMI, the ip from the IBS record), which breaks DWARF
 * unwinding (seed 003). */
static int parse_event(const struct rec_opts *o, struct perf_event_attr *a)
{
	static const struct { const char *name; uint32_t type; uint64_t config; } events[] = {
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	};
	if (!o->event) {
		/* --off-cpu: CPU time in nanoseconds too, so that on + off is wall-clock time */
		bool hw = !o->off_cpu &&
			  perf_event_available(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		a->type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
		a->config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
		return 0;
	}
	char name[64];
	snprintf(name, sizeof(name), "%s", o->event);
	char *mods = strchr(name, ':');
	unsigned precise = 0;
	if (mods) {
		*mods++ = 0;
		for (char *m = mods; *m; m++) {
			if (*m == 'p')
				precise++;
			else if (*m == 'P')
				precise = 3;
			else if (*m == 'u')
				a->exclude_kernel = 1;
			else if (*m == 'k')
				a->exclude_user = 1;
			else
				return err_set(-EINVAL, "event %s: unknown modifier '%c'", o->event, *m);
		}
	}
	size_t i;
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(events[i].name, name))
			break;
	if (i == sizeof(events) / sizeof(events[0]))
		return err_set(-EINVAL, "event %s: unknown (known: cycles, instructions, "
					"cache-misses, branch-misses, cpu-clock, task-clock)",
			       o->event);
	a->type = events[i].type;
	a->config = events[i].config;
	a->precise_ip = precise > 3 ? 3 : precise;
	if (precise && !o->fp && perf_pmu_exists("ibs_op"))
		return err_set(-EINVAL, "event %s: precise events on this CPU use AMD IBS, whose "
					"ip and stack copy come from different moments, so DWARF call "
					"graphs would be wrong: drop the 'p' modifier, or use "
					"--call-graph fp",
			       o->event);
	return 0;
}

/* Ring pages per CPU: RING_PAGES (more for off_cpu), or what perf_event_mlock_kb leaves
 * each CPU when tally may not lock more (no root). A power of two, as the kernel
 * requires. */
static size_t ring_pages(int ncpus, bool off_cpu)
{
	if (geteuid() == 0 && off_cpu) {
		size_t pages = OFF_CPU_RING_PAGES;
		while (pages > RING_PAGES && pages * (size_t)ncpus > OFF_CPU_ALL_RINGS_PAGES)
			pages /= 2;
		return pages;
	}
	if (geteuid() == 0)
		return RING_PAGES;
	long kb = 516;
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "r");
	if (f) {
		if (fscanf(f, "%ld", &kb) != 1)
			kb = 516;
		fclose(f);
	}
	long per_cpu = kb / (ncpus > 0 ? ncpus : 1) / 4 - 1; /* pages, less the metadata page */
	size_t pages = MIN_RING_PAGES;
	while (pages * 2 <= RING_PAGES && (long)(pages * 2) <= per_cpu)
		pages *= 2;
	return pages;
}

static int setup_attr(struct session *s)
{
	const struct rec_opts *o = s->o;
	struct perf_event_attr *a = &s->attr;
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	int r = parse_event(o, a);
	if (r)
		return r;
	if (o->period) {
		a->sample_period = o->period;
	} else {
		a->freq = 1;
		a->sample_freq = o->freq ? o->freq : 1000;
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (!o->fp) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = PERF_X86_REGS_USER_MASK;
		a->sample_stack_user = o->stack_size ? o->stack_size : 32768;
		/* The kernel's walk of user frame pointers is left out, as perf record does in
		 * DWARF mode: perf script uses it instead of unwinding the stack copy when it is
		 * there, and tally's own frame-pointer fallback walks the copy. */
		a->exclude_callchain_user = 1;
	}
	a->disabled = 1;
	a->inherit = !o->all_cpus; /* CPU-wide events see every task without it */
	a->mmap = 1;
	a->mmap2 = 1;
	/* Data mappings too: perf's unwinder finds .eh_frame_hdr through the read-only
	 * segment's mapping, and reports nothing past the ip without it. */
	a->mmap_data = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->exclude_hv = 1;
	/* Sample times on CLOCK_MONOTONIC, the clock of jitdump timestamps (perf record -k 1
	 * does the same), so that a JIT frame is named by the code its address held then. */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_guest = 1;
	s->ring_pages = ring_pages(s->ncpus, o->off_cpu);
	a->wakeup_watermark = (uint32_t)(s->ring_pages * 4096 / 4);
	a->watermark = 1;
	if (geteuid() != 0 && perf_paranoid_level() > 1)
		a->exclude_kernel = 1;
	return 0;
}

/* /sys/devices/system/cpu/online ("0-3,6"): events cannot be opened on offline CPUs. */
static int online_cpus(int *cpu, int max)
{
	char buf[1024] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	int n = 0;
	for (char *p = buf; *p && *p != '\n' && n < max;) {
		char *e;
		long lo = strtol(p, &e, 10), hi = lo;
		if (e == p)
			break;
		if (*e == '-')
			hi = strtol(e + 1, &e, 10);
		for (long c = lo; c <= hi && n < max; c++)
			cpu[n++] = (int)c;
		p = *e == ',' ? e + 1 : e;
	}
	if (n == 0) { /* no sysfs: every configured CPU */
		long conf = sysconf(_SC_NPROCESSORS_CONF);
		for (long c = 0; c < conf && n < max; c++)
			cpu[n++] = (int)c;
	}
	return n ? n : (cpu[0] = 0, 1);
}

/* --off-cpu: the sched_switch event of task tid on the c-th CPU, into that CPU's ring. */
static int open_off_cpu(struct session *s, int tid, int c)
{
	int fd, r = perf_open(&s->off_attr, tid, s->cpu[c], -1, PERF_FLAG_FD_CLOEXEC, &fd);
	/* Out of descriptors is about the limit, not the event: the same message whichever
	 * of a task's events met it first. */
	if (r == -EMFILE)
		return r;
	if (r)
		return err_prefix(r, "--off-cpu: event sched:sched_switch");
	if ((r = add_fd(s, fd, true))) {
		close(fd);
		return r;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_fd[c]) < 0)
		return err_set(-errno, "perf_event_open: redirecting output: %s", strerror(errno));
	return 0;
}

/* Events for one task on every CPU; the first task's events own the rings, the others'
 * output is redirected into them. */
static int open_task(struct session *s, int tid)
{
	for (int c = 0; c < s->ncpus; c++) {
		int fd, r = perf_open(&s->attr, tid, s->cpu[c], -1, PERF_FLAG_FD_CLOEXEC, &fd);
		if (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV || r == -EINVAL)
			return err_prefix(r, "event %s", s->o->event ? s->o->event
					  : s->attr.type == PERF_TYPE_HARDWARE ? "cycles" : "cpu-clock");
		if (r)
			return r;
		if ((r = add_fd(s, fd, false))) {
			close(fd);
			return r;
		}
		if (s->ring_fd[c] < 0) {
			size_t pages = s->ring_pages;
			while ((r = perf_ring_map(&s->rings[c], fd, pages)) == -EPERM &&
			       pages > MIN_RING_PAGES)
				pages /= 2;
			if (r)
				return r;
			err_clear();
			s->ring_pages = pages;
			s->ring_fd[c] = fd;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_fd[c]) < 0) {
			return err_set(-errno, "perf_event_open: redirecting output: %s",
				       strerror(errno));
		}
		if (s->o->off_cpu && (r = open_off_cpu(s, tid, c)))
			return r;
	}
	return 0;
}

/* -a: events on every CPU for every task, and what the machine runs already. */
static int open_system(struct session *s)
{
	int r = rec_system_open_error(open_task(s, -1));
	return r ? r : rec_synth_system(on_synth, s);
}

static int attach_task(int pid, int tid, void *arg)
{
	struct session *s = arg;
	int r = rec_synth_comm(pid, tid, on_synth, s);
	if (!r)
		r = open_task(s, tid);
	if (r == -ESRCH) { /* the thread ended meanwhile */
		err_clear();
		r = 0;
	}
	return r;
}

static int attach_pid(struct session *s, int pid)
{
	int r = rec_each_task(pid, attach_task, s);
	return r ? r : rec_synth_maps(pid, on_synth, s);
}

/* The command runs with the default actions of the signals tally catches. */
static void default_signals(void *arg)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

/* Starts CMD held before exec (base/spawn.h): it waits until the events exist. */
static int spawn(char **argv, struct spawn_cmd *cmd)
{
	struct spawn_opts so = { .argv = argv, .before_exec = default_signals };
	return spawn_start(&so, cmd);
}

static bool targets_alive(const struct rec_opts *o)
{
	for (size_t i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

/* --duration: whether the recording has run that long. */
static bool past_duration(const struct session *s, const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return s->o->duration > 0 && (double)(now.tv_sec - start->tv_sec) +
					     (double)(now.tv_nsec - start->tv_nsec) / 1e9 >=
					     s->o->duration;
}

/* Drains until the targets end or a signal stops tally (*child_runs then: a command is
 * left to run to its own end, and waited for once the file is finished). */
static int loop(struct session *s, pid_t child, int *status, bool *child_runs)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct pollfd pfd[MAX_CPUS];
	for (int c = 0; c < s->ncpus; c++)
		pfd[c] = (struct pollfd){ .fd = s->ring_fd[c], .events = POLLIN };
	int fast = 1000; /* a bound on the 1 ms polls, should the command's mapping not come */
	for (;;) {
		/* With Python frames, a new interpreter's mmap record is read within 10 ms:
		 * its samples have Python frames from then on. The command's own, within 1 ms:
		 * by 10 ms python3.11 has begun its script, and the script's first lines and
		 * imports had no Python frames (tests/python/frames.test.sh's chain: 6 of 265
		 * samples under load, 2.26% short). tally runs SCHED_FIFO here (priority.h),
		 * so the 1 ms holds on a busy machine too. */
		bool soon = s->py.bpf && s->py.awaited && fast-- > 0;
		poll(pfd, (nfds_t)s->ncpus, soon ? 1 : s->py.bpf ? 10 : 50);
		int r = drain_all(s);
		if (r)
			return r;
		if (child > 0) {
			if (waitpid(child, status, WNOHANG) == child)
				return drain_all(s);
			if (stop_signal) {
				*child_runs = true;
				return 0;
			}
		} else if (stop_signal || (!s->o->all_cpus && !targets_alive(s->o)) ||
			   perf_writer_error(s->w) || past_duration(s, &start)) {
			return drain_all(s);
		}
	}
}

/* The program on every sampling event (inherited by the threads and children they
 * follow), and its output events into the CPUs' rings. A failure here leaves the
 * recording native-only, with a warning. */
static void start_python(struct session *s)
{
	int r = 0;
	for (size_t i = 0; !r && i < s->cpu_fds.n; i++)
		r = rec_python_attach(s->py.bpf, s->cpu_fds.v[i]);
	if (!r)
		r = rec_python_outputs(s->py.bpf, s->cpu, s->ring_fd, s->ncpus);
	if (r) {
		fprintf(stderr, "tally record: warning: %s; recording native frames only\n",
			err_msg());
		err_clear();
		rec_pyprocs_disable(&s->py);
	}
}

/* The Python part of the file and the summary: the bpf-output events' attribute, when
 * they had a process to read, and the program's counters. */
static int finish_python(struct session *s)
{
	for (int c = 0; s->py.bpf && c < s->ncpus; c++) {
		int r = rec_pypair_flush(&s->pair[c], write_record, s);
		if (r)
			return r;
	}
	if (!s->py.bpf || !s->py.seen)
		return 0;
	struct py_counters k;
	rec_python_counters(s->py.bpf, &k);
	s->res->py_procs = s->py.seen;
	s->res->py_lost = k.output_lost;
	s->res->py_runs = k.runs;
	s->res->py_run_ns = k.run_ns;
	size_t nids;
	const uint64_t *ids = rec_python_ids(s->py.bpf, &nids);
	return perf_writer_add_attr(s->w, rec_python_attr(s->py.bpf), ids, nids);
}

static void cleanup(struct session *s)
{
	for (int c = 0; c < s->ncpus; c++)
		perf_ring_unmap(&s->rings[c]);
	for (size_t i = 0; i < s->fds.n; i++)
		close(s->fds.v[i]);
	vec_free(&s->fds);
	vec_free(&s->ids);
	vec_free(&s->off_ids);
	vec_free(&s->cpu_fds);
	rec_modules_free(&s->modules);
	rec_jitmaps_free(&s->jitmaps);
	rec_pyprocs_free(&s->py);
	for (int c = 0; c < s->ncpus; c++)
		rec_pypair_free(&s->pair[c]);
}

/* The command tally started (held.pid -1: none), held before its exec until the events
 * exist. */
struct command {
	struct spawn_cmd held;
	int status;   /* as waitpid gives it */
	bool runs_on; /* a signal stopped the recording: the command is left to its own end */
};

/* After the signal handlers: loading the program takes a while (its verification), and a
 * SIGINT meanwhile ends the recording, not tally. */
static void setup_python(struct session *s)
{
	if (s->o->no_python)
		return;
	rec_pyprocs_init(&s->py);
	if (s->py.bpf)
		s->attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (s->py.bpf && s->o->argv)
		rec_pyprocs_preload(&s->py, s->o->argv[0]);
}

/* The command, if there is one. Without -a its events start counting at its exec. */
static int launch_command(struct session *s, struct command *cmd)
{
	if (!s->o->argv)
		return 0;
	s->attr.enable_on_exec = !s->o->all_cpus;
	return spawn(s->o->argv, &cmd->held);
}

/* The file, its header holding the event attributes: --off-cpu's are final first. */
static int open_output(struct session *s)
{
	int r = s->o->off_cpu ? rec_offcpu_setup(&s->attr, &s->off_attr) : 0;
	if (r)
		return r;
	r = perf_writer_open(s->o->output, &s->attr, &s->w);
	if (r)
		return r;
	return s->o->off_cpu ? rec_offcpu_write_format(s->w) : 0;
}

/* The events of every target: the command (whose children inherit them), the machine
 * (-a), the threads of each -p process. */
static int open_events(struct session *s, pid_t child)
{
	const struct rec_opts *o = s->o;
	int r = 0;
	if (o->all_cpus)
		r = open_system(s);
	else if (o->argv)
		r = open_task(s, child);
	for (size_t i = 0; !r && i < o->npids; i++)
		r = attach_pid(s, o->pids[i]);
	return r;
}

/* Counting starts: a command without -a waits for its exec (enable_on_exec), every other
 * target now; then the command is let go. */
static int start_events(struct session *s, struct command *cmd)
{
	if (s->py.bpf)
		start_python(s);
	if (!s->o->argv || s->o->all_cpus)
		for (size_t i = 0; i < s->fds.n; i++)
			ioctl(s->fds.v[i], PERF_EVENT_IOC_ENABLE, 0);
	return cmd->held.pid > 0 ? spawn_release(&cmd->held) : 0;
}

/* Starts the events and drains the rings until the recording ends (loop), at a raised
 * priority from before the command's release: at the default one, on a busy machine, tally
 * woke from the release (its exec) 17 ms after python3.11 had begun to run, and read the
 * interpreter's mapping later still (Python frames are read from then on). */
static int record(struct session *s, struct command *cmd)
{
	struct rec_priority prio;
	rec_priority_raise(&prio);
	int r = start_events(s, cmd);
	if (!r)
		r = loop(s, cmd->held.pid, &cmd->status, &cmd->runs_on);
	rec_priority_restore(&prio);
	return r;
}

/* The end of the file after a recording that went well (r 0): what the rings and the
 * Python program left, the modules, the off-CPU attribute; the file is abandoned when
 * that or the recording (r) failed. The debug files and JIT maps are kept when it is
 * complete. */
static int finish_output(struct session *s, int r)
{
	if (!r && (s->res->write_error = perf_writer_error(s->w)))
		s->res->samples = perf_writer_samples(s->w);
	if (!r)
		r = finish_python(s);
	if (!r) {
		rec_modules_write(&s->modules, s->w);
		if (s->o->off_cpu)
			r = perf_writer_add_attr(s->w, &s->off_attr, s->off_ids.v, s->off_ids.n);
	}
	if (r) {
		perf_writer_abort(s->w);
		return r;
	}
	r = perf_writer_close(s->w, s->ids.v, s->ids.n);
	if (r)
		return r;
	rec_modules_cache_debug(&s->modules);
	rec_jitmaps_keep(&s->jitmaps, s->o->output);
	return 0;
}

/* A command whose recording failed (or never began) is not left to run. */
static void kill_command(struct command *cmd)
{
	if (cmd->held.pid <= 0)
		return;
	kill(cmd->held.pid, SIGKILL);
	waitpid(cmd->held.pid, &cmd->status, 0);
}

/* Once the events are closed, a command a signal stopped the recording of has run on
 * unobserved to its own end; its exit status is tally's. */
static void wait_command(struct command *cmd, struct rec_result *res)
{
	if (cmd->held.pid <= 0)
		return;
	if (cmd->runs_on)
		waitpid(cmd->held.pid, &cmd->status, 0);
	res->exit_status = WIFEXITED(cmd->status) ? WEXITSTATUS(cmd->status)
			   : WIFSIGNALED(cmd->status) ? 128 + WTERMSIG(cmd->status) : 1;
}

int rec_run(const struct rec_opts *o, struct rec_result *res)
{
	struct session s = { .o = o, .res = res };
	struct command cmd = { .held = SPAWN_CMD_NONE };
	memset(res, 0, sizeof(*res));
	s.ncpus = online_cpus(s.cpu, MAX_CPUS);
	for (int c = 0; c < MAX_CPUS; c++)
		s.ring_fd[c] = -1;
	int r = setup_attr(&s);
	if (r)
		return r;
	file_raise_fd_limit();
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	setup_python(&s);
	r = launch_command(&s, &cmd);
	if (r)
		goto out;
	r = open_output(&s);
	if (r)
		goto out;
	r = open_events(&s, cmd.held.pid);
	if (r)
		goto out;
	r = record(&s, &cmd);
out:
	spawn_close(&cmd.held);
	res->exec_errno = cmd.held.exec_errno;
	if (r)
		kill_command(&cmd);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (s.w)
		r = finish_output(&s, r);
	cleanup(&s); /* the events closed: the command runs on unobserved */
	wait_command(&cmd, res);
	return r;
}
