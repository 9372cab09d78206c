/*
 * A recording session: events on every CPU for the target (a command started with counting
 * disabled until its exec, following its children through inherit; or the threads of
 * running processes, whose existing mappings come from /proc), ring buffers drained into a
 * perf.data file until the command exits or SIGINT/SIGTERM arrives (which stops the
 * recording, not the command: tally then waits for it). The command's exit status is
 * returned for tally to exit with. Mapped files are noted as their mmap records
 * arrive (modules.c), processes for their perf maps, kept at the end (jitmaps.c).
 *
 * With --rotate the records go to a series of files, each complete alone: at each turn the
 * rings are drained into the old file, the Python program starts a new generation (its
 * code records written again), the next file begins with the COMM and MMAP2 records of
 * every live process synthesized from /proc (as at the start of -p and -a), and the old
 * one is finished as a single recording is (build-ids, JIT map copies). What tally holds
 * is bounded however long it runs (docs/native-sampling.md, "Long recordings").
 */
#include "record/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/idmap.h"
#include "base/spawn.h"
#include "base/vec.h"
#include "perf/keep.h"
#include "record/jitmaps.h"
#include "record/live.h"
#include "record/modules.h"
#include "record/offcpu.h"
#include "record/priority.h"
#include "record/interp_procs.h"
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
	struct rec_ptrace *trace; /* ptrace mode's sampler (NULL: none could be made) */
	struct rec_interp_procs interps; /* processes of other interpreters, read by trace */
	struct rec_pyprocs py; /* bpf NULL: no Python frames */
	struct rec_pypair pair[MAX_CPUS]; /* per ring, with py.bpf */
	struct rec_pynames names; /* Python's names of their threads */
	int ring; /* the ring being drained */
	struct rec_live *live; /* stacks unwound while recording, else NULL (live.h) */
	size_t live_modules;   /* of modules, those whose build-ids live has */
	struct timespec pruned; /* when jitmaps was last pruned */
	/* The file being written, and with --rotate: the milliseconds of its name (names
	 * strictly increase), the samples of the files finished before it, the processes
	 * alive (-p, CMD: their records begin the next file) and, with --keep, the files
	 * finished (oldest first). Turns by time come every rotate_secs from when counting
	 * began (a fixed grid: a late turn does not delay the next), turns of them so far. */
	char path[4096];
	struct timespec counting;
	uint64_t name_ms, samples_done, turns;
	struct idmap alive;
	VEC(char *) kept;
};

static bool rotating(const struct rec_opts *o) { return o->rotate_secs > 0 || o->rotate_bytes; }

/* -p and CMD with --rotate: the processes alive (FORK and EXIT of a process, the COMM and
 * MMAP2 records of one tally learns of otherwise: a -p target, CMD's exec). */
static void note_alive(struct session *s, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	uint32_t id[4]; /* pid, then ppid, tid, ptid for FORK and EXIT */
	if (s->o->all_cpus || !rotating(s->o) || size < sizeof(*h) + sizeof(id))
		return;
	memcpy(id, (const uint8_t *)rec + sizeof(*h), sizeof(id));
	if (id[0] == UINT32_MAX)
		return;
	if (h->type == PERF_RECORD_EXIT && id[0] == id[2])
		idmap_del(&s->alive, id[0]);
	else if ((h->type == PERF_RECORD_FORK && id[0] == id[2]) ||
		 ((h->type == PERF_RECORD_COMM || h->type == PERF_RECORD_MMAP2) &&
		  idmap_get(&s->alive, id[0]) == IDMAP_NONE))
		idmap_put(&s->alive, id[0], 0);
}

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

static int store_record(const void *rec, size_t size, void *arg)
{
	struct session *s = arg;
	if (!perf_writer_error(s->w) && perf_writer_add(s->w, rec, size))
		stop_recording(s);
	return 0;
}

/* Unwinding while recording: the record joins live's queue (the mappings' build-ids first, so that
 * the unwinder opens what the process mapped); it is stored once in time order. */
static int to_live(struct session *s, const void *rec, size_t size, bool interp)
{
	int r = rec_live_modules(s->live, &s->modules, &s->live_modules);
	return r ? r : rec_live_add(s->live, rec, size, interp ? REC_LIVE_OPAQUE : 0,
				    interp ? rec_python_time(rec, size) : 0);
}

static int on_synth(const void *rec, size_t size, void *arg);

/* With Python frames, a CPU sample (identifier, ip, pid/tid, time: the layout the
 * program's pairing relies on too) of a Python thread may call for its name first. */
static int name_thread(struct session *s, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	uint64_t id, time, runtime;
	uint32_t pt[2];
	const struct cpy_layout *l;
	if (h->type != PERF_RECORD_SAMPLE || size < 40)
		return 0;
	memcpy(&id, (const uint8_t *)rec + 8, 8);
	for (size_t i = 0; i < s->off_ids.n; i++)
		if (s->off_ids.v[i] == id)
			return 0;
	memcpy(pt, (const uint8_t *)rec + 24, 8);
	memcpy(&time, (const uint8_t *)rec + 32, 8);
	if (!(l = rec_pyprocs_layout(&s->py, pt[0], &runtime)))
		return 0;
	return rec_pynames_sample(&s->names, l, runtime, pt[0], pt[1], time, on_synth, s);
}

static int write_record(const void *rec, size_t size, void *arg)
{
	struct session *s = arg;
	if (perf_writer_error(s->w))
		return 0;
	/* an interpreter's record: the BPF program's, or ptrace mode's */
	bool interp = (s->py.bpf && rec_python_owns(s->py.bpf, rec, size)) ||
		      (s->trace && rec_ptrace_owns(s->trace, rec, size));
	if (interp)
		rec_python_account(s->res, rec, size);
	else
		rec_account(s->res, &s->modules, rec, size);
	if (!s->o->no_python) {
		rec_pyprocs_note(&s->py, rec, size);
		int r = rec_pynames_note(&s->names, rec, size, on_synth, s);
		if (!r && (s->py.bpf || s->py.trace) && !interp)
			r = name_thread(s, rec, size);
		if (r)
			return r;
	}
	rec_interp_procs_note(&s->interps, rec, size);
	rec_jitmaps_note(&s->jitmaps, rec, size);
	note_alive(s, rec, size);
	return s->live ? to_live(s, rec, size, interp) : store_record(rec, size, s);
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

/* Whether a sample of the rings is an off-CPU one (--off-cpu's sched_switch event). */
static bool off_cpu_sample(const struct session *s, const void *rec, size_t size)
{
	uint64_t id;
	if (!s->o->off_cpu || !perf_sample_id(rec, size, &id))
		return false;
	for (size_t i = 0; i < s->off_ids.n; i++)
		if (s->off_ids.v[i] == id)
			return true;
	return false;
}

static int on_ring_record(const void *rec, size_t size, void *arg)
{
	struct session *s = arg;
	/* ptrace mode samples its processes itself: the kernel's samples of them are left out */
	if (s->trace && !off_cpu_sample(s, rec, size) && rec_ptrace_replaces(s->trace, rec, size))
		return 0;
	if (s->py.bpf)
		return rec_pypair_add(&s->pair[s->ring], rec_python_owns(s->py.bpf, rec, size), rec,
				      size, write_record, s);
	return write_record(rec, size, s);
}

static int name_last(struct session *s);

/* One round over the rings; with live unwinding, what it completed goes on in time
 * order (live.h: everything timed before the round began is in). */
static int drain_all(struct session *s)
{
	uint64_t start = s->live ? rec_live_clock(&s->attr) : 0;
	for (int c = 0; c < s->ncpus; c++) {
		s->ring = c;
		int r = perf_ring_drain(&s->rings[c], on_ring_record, s);
		if (r)
			return r;
	}
	int r = name_last(s);
	if (r || !s->live)
		return r;
	r = rec_live_round(s->live, start);
	/* A round's unwound samples are a few KiB: written now, a killed tally keeps all
	 * but the last round, as it keeps all but the last 30 ms of raw samples. */
	if (!r && perf_writer_flush(s->w))
		stop_recording(s);
	return r;
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

/* A -p PID refused: when it is another user's process, say so rather than what the
 * kernel's paranoia allows (an ordinary user may record their own processes only). */
static int refused_pid(int pid, int r)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if ((r != -EACCES && r != -EPERM) || geteuid() == 0 || stat(path, &st) ||
	    st.st_uid == getuid())
		return r;
	err_clear();
	return err_set(r, "process %d: another user's (uid %u): without privileges tally records "
			  "only your own processes (run as root, or give tally CAP_PERFMON, and "
			  "CAP_BPF for its Python frames)", pid, (unsigned)st.st_uid);
}

static int attach_pid(struct session *s, int pid)
{
	int r = rec_each_task(pid, attach_task, s);
	return r ? refused_pid(pid, r) : rec_synth_maps(pid, on_synth, s);
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

static double seconds_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* --duration: whether the recording has run that long. */
static bool past_duration(const struct session *s, const struct timespec *start)
{
	return s->o->duration > 0 && seconds_since(start) >= s->o->duration;
}

/* Processes gone are forgotten once a second (one look at /tmp for all of them). */
static void prune(struct session *s)
{
	if (s->jitmaps.ngone && seconds_since(&s->pruned) >= 1) {
		rec_jitmaps_prune(&s->jitmaps);
		clock_gettime(CLOCK_MONOTONIC, &s->pruned);
	}
}

static int rotate(struct session *s);

/* --rotate: whether the file has grown that large, or the next turn's time has come (the
 * turns it passes are counted). */
static bool rotation_due(struct session *s)
{
	const struct rec_opts *o = s->o;
	if (perf_writer_error(s->w))
		return false;
	if (o->rotate_bytes)
		return perf_writer_bytes(s->w) >= o->rotate_bytes;
	double slot = o->rotate_secs > 0 ? seconds_since(&s->counting) / o->rotate_secs : 0;
	if (slot < (double)(s->turns + 1))
		return false;
	s->turns = (uint64_t)slot;
	return true;
}

/* Drains until the targets end or a signal stops tally (*child_runs then: a command is
 * left to run to its own end, and waited for once the file is finished). */
static int loop(struct session *s, pid_t child, int *status, bool *child_runs)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	s->counting = start;
	struct pollfd pfd[MAX_CPUS + 1];
	nfds_t nfds = (nfds_t)s->ncpus;
	for (int c = 0; c < s->ncpus; c++)
		pfd[c] = (struct pollfd){ .fd = s->ring_fd[c], .events = POLLIN };
	if (s->trace) /* ptrace mode's ticks */
		pfd[nfds++] = (struct pollfd){ .fd = rec_ptrace_fd(s->trace), .events = POLLIN };
	int fast = 1000; /* a bound on the 1 ms polls, should the command's mapping not come */
	for (;;) {
		/* With Python frames, a new interpreter's mmap record is read within 10 ms:
		 * its samples have Python frames from then on. The command's own, within 1 ms:
		 * by 10 ms python3.11 has begun its script, and the script's first lines and
		 * imports had no Python frames (tests/python/frames.test.sh's chain: 6 of 265
		 * samples under load, 2.26% short). tally runs SCHED_FIFO here (priority.h),
		 * so the 1 ms holds on a busy machine too. */
		bool on = rec_pyprocs_on(&s->py) || s->trace;
		bool soon = on && s->py.awaited && fast-- > 0;
		poll(pfd, nfds, soon ? 1 : on ? 10 : 50);
		int r = drain_all(s);
		if (r)
			return r;
		prune(s);
		bool ended = s->trace && rec_ptrace_started(s->trace)
				     ? rec_ptrace_tick(s->trace, s->ids.v[0], child, status,
						       write_record, s)
				     : child > 0 && waitpid(child, status, WNOHANG) == child;
		if (child > 0) {
			if (ended)
				return drain_all(s);
			if (stop_signal) {
				*child_runs = true;
				return 0;
			}
		} else if (stop_signal || (!s->o->all_cpus && !targets_alive(s->o)) ||
			   perf_writer_error(s->w) || past_duration(s, &start)) {
			return drain_all(s);
		}
		if (rotation_due(s) && (r = rotate(s)))
			return r;
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

/* The interpreters' part of file w and the summary: the attributes of their records,
 * the BPF program's when it had a process to read and ptrace mode's when it took one
 * over, and their counters. */
static int finish_interps(struct session *s, struct perf_writer *w)
{
	struct rec_result *res = s->res;
	size_t nids;
	const uint64_t *ids;
	int r = 0;
	if (s->py.bpf && s->py.seen) {
		struct py_counters k;
		rec_python_counters(s->py.bpf, &k);
		res->py_lost = k.output_lost;
		res->py_runs = k.runs;
		res->py_run_ns = k.run_ns;
		const struct perf_event_attr *a = rec_python_attr(s->py.bpf);
		ids = rec_python_ids(s->py.bpf, &nids);
		r = perf_writer_add_attr(w, a, ids, nids);
	}
	res->py_procs = rec_pyprocs_on(&s->py) ? s->py.seen : 0;
	res->interp_procs = s->interps.seen;
	if (r || !s->trace || !rec_ptrace_started(s->trace))
		return r;
	rec_ptrace_counters(s->trace, &res->ptrace_samples, &res->ptrace_stopped_ns,
			    &res->ptrace_cpu_ns);
	res->py_ptrace = s->py.trace && s->py.seen;
	ids = rec_ptrace_ids(s->trace, &nids);
	return perf_writer_add_attr(w, rec_ptrace_attr(s->trace), ids, nids);
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
	rec_live_free(s->live);
	rec_jitmaps_free(&s->jitmaps);
	rec_pyprocs_free(&s->py);
	rec_interp_procs_free(&s->interps);
	rec_ptrace_free(s->trace);
	rec_pynames_free(&s->names);
	for (int c = 0; c < s->ncpus; c++)
		rec_pypair_free(&s->pair[c]);
	idmap_free(&s->alive);
	for (size_t i = 0; i < s->kept.n; i++)
		free(s->kept.v[i]);
	vec_free(&s->kept);
}

/* The command tally started (held.pid -1: none), held before its exec until the events
 * exist. */
struct command {
	struct spawn_cmd held;
	int status;   /* as waitpid gives it */
	bool runs_on; /* a signal stopped the recording: the command is left to its own end */
};

/* The CPU time between two samples of a thread (ptrace mode takes its samples by it): the
 * period of a clock event, else what the frequency gives (the default 1 kHz when the
 * period counts something else, cycles say). */
static uint64_t sampling_period_ns(const struct perf_event_attr *a)
{
	bool clock = a->type == PERF_TYPE_SOFTWARE && (a->config == PERF_COUNT_SW_CPU_CLOCK ||
						       a->config == PERF_COUNT_SW_TASK_CLOCK);
	if (a->freq)
		return 1000000000ull / (a->sample_freq ? a->sample_freq : 1000);
	return clock ? a->sample_period : 1000000;
}

/* After the signal handlers: loading the program takes a while (its verification), and a
 * SIGINT meanwhile ends the recording, not tally. */
static void setup_interps(struct session *s)
{
	/* the interpreters' records are told from the CPU samples by it */
	s->attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (rec_ptrace_new(&s->attr, sampling_period_ns(&s->attr), &s->trace)) {
		s->trace = NULL;
		err_clear();
	}
	rec_interp_procs_init(&s->interps, s->trace, s->o);
	if (s->o->no_python)
		return;
	rec_pyprocs_init(&s->py, s->trace);
	if (s->o->argv)
		rec_pyprocs_preload(&s->py, s->o->argv[0]);
}

/* The command, if there is one. Without -a its events start counting at its exec. */
static int launch_command(struct session *s, struct command *cmd)
{
	if (!s->o->argv)
		return 0;
	s->attr.enable_on_exec = !s->o->all_cpus;
	int r = spawn(s->o->argv, &cmd->held);
	if (!r && s->trace)
		rec_ptrace_set_child(s->trace, cmd->held.pid);
	return r;
}

/* The name of the next file: the output, or with --rotate the output and the UTC time
 * the file begins, to the millisecond (perf_series_name). */
static int name_file(struct session *s)
{
	if (!rotating(s->o)) {
		if (snprintf(s->path, sizeof(s->path), "%s", s->o->output) >= (int)sizeof(s->path))
			return err_set(-ENAMETOOLONG, "%s: name too long", s->o->output);
		return 0;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	if (ms <= s->name_ms) /* two files in a millisecond (--rotate SIZE), or a clock set back */
		ms = s->name_ms + 1;
	s->name_ms = ms;
	return perf_series_name(s->o->output, ms, s->path, sizeof(s->path));
}

/* One file of the recording, its header holding the event attributes (the sampling
 * event's as its samples are stored, perf_sample_attr_unwound with stacks unwound while
 * recording). */
static int open_file(struct session *s)
{
	struct perf_event_attr file_attr = s->attr;
	if (s->live)
		perf_sample_attr_unwound(&s->attr, &file_attr);
	int r = name_file(s);
	if (!r)
		r = perf_writer_open(s->path, &file_attr, &s->w);
	if (r)
		return r;
	return s->o->off_cpu ? rec_offcpu_write_format(s->w) : 0;
}

/* The first file: --off-cpu's attributes are final first. */
static int open_output(struct session *s)
{
	int r = s->o->off_cpu ? rec_offcpu_setup(&s->attr, &s->off_attr) : 0;
	if (!r && s->o->unwound)
		r = rec_live_new(s->o->output, &s->attr, store_record, s, &s->live);
	return r ? r : open_file(s);
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

/* --off-cpu's attribute as the file has it: its samples unwound while recording too. */
static void file_off_attr(const struct session *s, struct perf_event_attr *out)
{
	if (s->live)
		perf_sample_attr_unwound(&s->off_attr, out);
	else
		*out = s->off_attr;
}

/* The file's provisional header: every event whose records the rings may hold, with its
 * ids, so that a file tally never finishes (killed) can still be read. */
static int begin_output(struct session *s)
{
	struct perf_writer_event more[3];
	size_t n = 0;
	struct perf_event_attr off;
	file_off_attr(s, &off);
	if (s->o->off_cpu)
		more[n++] = (struct perf_writer_event){ &off, s->off_ids.v, s->off_ids.n };
	if (s->py.bpf) {
		more[n].ids = rec_python_ids(s->py.bpf, &more[n].nids);
		more[n++].attr = rec_python_attr(s->py.bpf);
	}
	if (s->trace) {
		more[n].ids = rec_ptrace_ids(s->trace, &more[n].nids);
		more[n++].attr = rec_ptrace_attr(s->trace);
	}
	return perf_writer_begin(s->w, s->ids.v, s->ids.n, more, n);
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
		r = begin_output(s);
	if (!r)
		r = loop(s, cmd->held.pid, &cmd->status, &cmd->runs_on);
	rec_priority_restore(&prio);
	return r;
}

/* What live unwinding still holds, and its figures for the summary. */
static int finish_live(struct session *s)
{
	int r = rec_live_finish(s->live);
	rec_live_result(s->live, s->res);
	if (!r && (s->res->write_error = perf_writer_error(s->w)))
		s->res->samples = s->samples_done + perf_writer_samples(s->w);
	return r;
}

/* Deletes a recording --keep no longer keeps, with its JIT directory (jitmaps.h). */
static void remove_recording(const char *path)
{
	char dir[4200], file[4500];
	if (unlink(path) && errno != ENOENT)
		fprintf(stderr, "tally record: %s: cannot delete (--keep): %s\n", path,
			strerror(errno));
	if (perf_jit_dir(path, dir, sizeof(dir))) {
		err_clear();
		return;
	}
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    snprintf(file, sizeof(file), "%s/%s", dir, e->d_name) < (int)sizeof(file))
			unlink(file);
	if (d) {
		closedir(d);
		rmdir(dir);
	}
}

/* --keep N: the file just finished is listed, and the oldest beyond N deleted. */
static int keep_newest(struct session *s, const char *path)
{
	if (!s->o->keep)
		return 0;
	char **slot = vec_push(&s->kept);
	if (!slot || !(*slot = strdup(path))) {
		if (slot)
			s->kept.n--;
		return err_set(-ENOMEM, "out of memory");
	}
	while (s->kept.n > s->o->keep) {
		remove_recording(s->kept.v[0]);
		free(s->kept.v[0]);
		memmove(s->kept.v, s->kept.v + 1, --s->kept.n * sizeof(*s->kept.v));
	}
	return 0;
}

/* Finishes file w (at path, whose modules and processes m and j noted) once its records
 * are in: the Python and off-CPU attributes, the build-ids; abandoned when that fails. The
 * debug files and JIT maps are kept when it is complete. */
static int end_file(struct session *s, struct perf_writer *w, struct rec_modules *m,
		    struct rec_jitmaps *j, const char *path)
{
	int r = finish_interps(s, w);
	if (!r) {
		rec_modules_write(m, w, !s->res->files); /* the first file's end */
		struct perf_event_attr off;
		file_off_attr(s, &off);
		if (s->o->off_cpu)
			r = perf_writer_add_attr(w, &off, s->off_ids.v, s->off_ids.n);
	}
	if (r) {
		perf_writer_abort(w);
		return r;
	}
	r = perf_writer_close(w, s->ids.v, s->ids.n);
	if (r)
		return r;
	rec_modules_cache_debug(m);
	rec_jitmaps_keep(j, path);
	s->res->files++;
	snprintf(s->res->last, sizeof(s->res->last), "%s", path);
	s->res->modules_dropped += m->dropped;
	s->res->jit_dropped += j->dropped;
	return keep_newest(s, path);
}

/* The COMM and MMAP2 records of every process alive, beginning a file after the first. */
static int synth_task(int pid, int tid, void *arg)
{
	return rec_synth_comm(pid, tid, on_synth, arg);
}

static int synth_live(struct session *s)
{
	if (s->o->all_cpus)
		return rec_synth_system(on_synth, s);
	VEC(uint32_t) pids = { 0 };
	for (size_t i = 0; i < s->alive.cap; i++) /* a copy: the records change live */
		if (s->alive.vals[i] != IDMAP_NONE && vec_reserve(&pids, 1))
			pids.v[pids.n++] = s->alive.keys[i];
	for (size_t i = 0; i < pids.n; i++) { /* a process gone meanwhile is passed over */
		int r = rec_each_task((int)pids.v[i], synth_task, s);
		if (!r)
			rec_synth_maps((int)pids.v[i], on_synth, s);
		else if (r == -ESRCH) /* its EXIT record lost with a full ring */
			idmap_del(&s->alive, pids.v[i]);
		err_clear();
	}
	vec_free(&pids);
	return 0;
}

/* --rotate: the records so far end the file, the next begins with what a reader needs of
 * the processes alive (after the Python program's new generation, so that the code
 * objects of the next file's stacks are written into it), and the old one is finished. */
/* Names the threads whose first samples came in the last round, before a file ends: the
 * rings were just drained, and the samples timed before are in. */
static int name_last(struct session *s)
{
	return s->py.bpf || s->py.trace ? rec_pynames_round(&s->names, on_synth, s) : 0;
}

static int rotate(struct session *s)
{
	int r = drain_all(s);
	if (!r && s->live)
		r = rec_live_finish(s->live);
	if (!r)
		r = name_last(s);
	if (r)
		return r;
	rec_pyprocs_regen(&s->py);
	if (s->trace)
		rec_ptrace_regen(s->trace);
	rec_pynames_regen(&s->names);
	struct perf_writer *w = s->w;
	struct rec_modules m = s->modules;
	struct rec_jitmaps j = s->jitmaps;
	char path[sizeof(s->path)];
	memcpy(path, s->path, sizeof(path));
	memset(&s->modules, 0, sizeof(s->modules));
	memset(&s->jitmaps, 0, sizeof(s->jitmaps));
	s->samples_done += perf_writer_samples(w);
	s->w = NULL;
	s->live_modules = 0;
	r = open_file(s);
	if (!r)
		r = begin_output(s);
	if (!r)
		r = synth_live(s);
	int e = end_file(s, w, &m, &j, path);
	rec_modules_free(&m);
	rec_jitmaps_free(&j);
	return r ? r : e;
}

/* The end of the last file after a recording that went well (r 0): what the rings and
 * the Python program left, then as every file ends (end_file); the file is abandoned when
 * the recording (r) failed. */
static int finish_output(struct session *s, int r)
{
	if (!r && (s->res->write_error = perf_writer_error(s->w)))
		s->res->samples = s->samples_done + perf_writer_samples(s->w);
	for (int c = 0; !r && s->py.bpf && c < s->ncpus; c++)
		r = rec_pypair_flush(&s->pair[c], write_record, s);
	if (!r)
		r = name_last(s);
	if (!r && s->live)
		r = finish_live(s);
	if (r) {
		perf_writer_abort(s->w);
		return r;
	}
	return end_file(s, s->w, &s->modules, &s->jitmaps, s->path);
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
	setup_interps(&s);
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
