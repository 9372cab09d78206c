/*
 * The probe session, counting hits or recording a sample at each (see session.h). A command
 * is forked and held on a pipe while its events are opened with enable_on_exec, so counting
 * starts exactly at exec and no hit is missed. perf counts tasks, not processes, and cannot
 * inherit uprobe events (attach.h): every thread and child process is followed with ptrace
 * (follow.c) and gets its own events before it runs; for a running process, every thread it
 * has. Without kernel ref_ctr support the semaphores are raised through /proc/PID/mem: for
 * a command, at its exec stop (the executable is mapped, its libraries not yet). Events
 * whose readers must keep pace with the target (recording, --args reading memory) signal
 * the task, which stops under ptrace until tally has read what the events wrote (see
 * open_recording).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/spawn.h"
#include "base/vec.h"
#include "probes/attach.h"
#include "probes/sample.h"
#include "probes/session.h"

#define STOP_SIGNAL SIGURG

struct site {
	struct usdt_object *obj;
	struct usdt_probe *probe;
	bool by_hand;   /* semaphore raised through /proc/PID/mem */
	bool raised;
	size_t row;
};

struct session {
	const struct usdt_count_opts *o;
	struct usdt_objects objs;
	VEC(struct site) sites;
	VEC(int) fds;         /* parallel to fd_site and fd_tid; -1 once closed */
	VEC(size_t) fd_site;
	VEC(pid_t) fd_tid;
	VEC(struct pacer { int fd; pid_t tid; }) pacers; /* recording: see open_recording */
	VEC(int) ended;       /* events of ended tasks, counted, to close (CLOSE_BATCH) */
	struct uprobe_pmu pmu;
	struct usdt_sampler sampler;
	struct usdt_follow follow;
	sigset_t saved_mask;   /* the caller's signal mask, for the command to start with */
	pid_t pid;
	bool any_by_hand;      /* some semaphore is raised by hand */
	bool exec_seen;
	bool stopped;          /* by SIGINT/SIGTERM or the recorder: a command runs on */
	struct usdt_count_result *res;
};

static void note(const struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct session *s, const char *fmt, ...)
{
	if (s->o->log) {
		va_list ap;
		va_start(ap, fmt);
		fputs("tally: ", s->o->log);
		vfprintf(s->o->log, fmt, ap);
		fputc('\n', s->o->log);
		va_end(ap);
	}
}

static int row_index(struct usdt_count_result *res, const struct usdt_probe *p, size_t *out)
{
	char name[512];
	snprintf(name, sizeof(name), "%s:%s", p->provider, p->name);
	for (size_t i = 0; i < res->n; i++)
		if (!strcmp(res->v[i].probe, name)) {
			*out = i;
			return 0;
		}
	struct usdt_count_row *r = vec_push(res);
	if (!r || !(r->probe = strdup(name)))
		return err_set(-ENOMEM, "out of memory");
	r->nargs = p->nargs < 12 ? p->nargs : 12;
	*out = res->n - 1;
	return 0;
}

/* Picks the sites matching the patterns; every pattern must match something. */
static int select_sites(struct session *s)
{
	const struct usdt_count_opts *o = s->o;
	size_t total = 0;
	for (size_t i = 0; i < s->objs.n; i++)
		total += s->objs.v[i].probes.n;
	if (!total && o->cmd)
		return err_set(-ENOENT, "%s: no USDT probes (no stapsdt notes) in the executable "
					"or the libraries it needs", s->objs.n ? s->objs.v[0].path : o->cmd[0]);
	if (!total)
		return err_set(-ENOENT, "process %d: no USDT probes (no stapsdt notes) in any object "
					"it maps", (int)o->pid);
	for (size_t k = 0; k < o->npatterns; k++) {
		bool any = false;
		for (size_t i = 0; i < s->objs.n && !any; i++)
			for (size_t j = 0; j < s->objs.v[i].probes.n && !any; j++)
				any = usdt_match(&s->objs.v[i].probes.v[j], o->patterns[k]);
		if (!any)
			return err_set(-ENOENT, "no probe matches '%s' (tally probes list shows them)",
				       o->patterns[k]);
	}
	for (size_t i = 0; i < s->objs.n; i++) {
		struct usdt_object *obj = &s->objs.v[i];
		for (size_t j = 0; j < obj->probes.n; j++) {
			struct usdt_probe *p = &obj->probes.v[j];
			bool want = !o->npatterns;
			for (size_t k = 0; k < o->npatterns && !want; k++)
				want = usdt_match(p, o->patterns[k]);
			if (!want)
				continue;
			struct site *st = vec_push(&s->sites);
			if (!st)
				return err_set(-ENOMEM, "out of memory");
			st->obj = obj, st->probe = p;
			st->by_hand = p->semaphore && (s->pmu.ref_ctr_shift < 0 || !p->sem_offset);
			s->any_by_hand |= st->by_hand;
			int e = row_index(s->res, p, &st->row);
			if (e)
				return e;
		}
	}
	return 0;
}

/* Makes the event's wake-ups a signal to the task it watches (see below). */
static int signal_task(int fd, pid_t tid)
{
	struct f_owner_ex owner = { F_OWNER_TID, tid };
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, STOP_SIGNAL) ||
	    fcntl(fd, F_SETFL, O_ASYNC))
		return err_set(-errno, "perf event of thread %d: fcntl: %s", (int)tid,
			       strerror(errno));
	return 0;
}

/* A recording event (usdt_recorder): the side-band records come from the task's first.
 *
 * Backpressure: a uprobe fires as often as the target runs into it, which can be far
 * faster than tally can drain (CPython's function__return: 4000 hits in 40 ms, each with
 * a stack copy), and a full ring drops samples. So a second event per site and task, the
 * pacer, counts the same hits with a sample period of half the ring's capacity shared
 * among the sites, and has the kernel signal the task itself at each overflow (O_ASYNC,
 * owner the task, STOP_SIGNAL): the task takes the signal on its way back from the probe,
 * which under ptrace stops it until tally has drained its ring and cancelled the signal
 * (own_signal). The target never sees the signal, and no sample is lost however busy the
 * machine is. (The recording event cannot signal itself: with O_ASYNC the kernel signals
 * every sample, not every wake-up, and a stop per hit costs ten times the hit.) SIGURG,
 * whose default action is to ignore it, in case one is in flight when tally detaches. */
static int open_recording(struct session *s, const struct site *st, uint64_t ref, pid_t tid,
			  bool on_exec, bool first, int *fd)
{
	const struct usdt_recorder *r = s->o->recorder;
	struct perf_event_attr attr = *r->attr;
	attr.disabled = on_exec;
	attr.enable_on_exec = on_exec;
	if (!first)
		attr.mmap = attr.mmap2 = attr.mmap_data = attr.comm = attr.comm_exec = attr.task = 0;
	int e = uprobe_open_attr(&s->pmu, &attr, st->obj->open_path, st->probe->pc_offset, ref,
				 tid, fd);
	if (!e)
		e = r->event(r->ctx, *fd, tid, first);
	if (e)
		return e;
	uint64_t period = r->capacity(r->ctx, tid) / 2 / (s->sites.n ? s->sites.n : 1);
	struct perf_event_attr pacer = { .sample_period = period ? period : 1,
					 .disabled = on_exec, .enable_on_exec = on_exec };
	struct pacer *slot = vec_push(&s->pacers);
	if (!slot)
		return err_set(-ENOMEM, "out of memory");
	*slot = (struct pacer){ -1, tid };
	e = uprobe_open_attr(&s->pmu, &pacer, st->obj->open_path, st->probe->pc_offset, ref, tid,
			     &slot->fd);
	return e ? e : signal_task(slot->fd, tid);
}

/* A wake-up signal of tally's events, stopped on its way to the task: the rings are
 * drained (and --args decoded while the task cannot change its memory), then the task
 * goes on without it. */
static bool own_signal(pid_t tid, const siginfo_t *si, void *ctx)
{
	struct session *s = ctx;
	const struct usdt_recorder *r = s->o->recorder;
	if (si->si_signo != STOP_SIGNAL || (si->si_code != POLL_IN && si->si_code != POLL_HUP))
		return false;
	bool ours = false;
	for (size_t i = 0; i < s->fds.n && !ours; i++)
		ours = s->fds.v[i] == si->si_fd;
	for (size_t i = 0; i < s->pacers.n && !ours; i++)
		ours = s->pacers.v[i].fd == si->si_fd;
	if (!ours)
		return false;
	if (s->o->args)
		usdt_sampler_drain(&s->sampler);
	int e = r ? r->drain(r->ctx) : 0;
	if (e && !s->follow.error)
		s->follow.error = e;
	return true;
}

/* No more wake-up signals: the target may be detached with some on their way. */
static void quiet_events(struct session *s)
{
	for (size_t i = 0; i < s->fds.n; i++)
		if (s->fds.v[i] >= 0)
			fcntl(s->fds.v[i], F_SETFL, 0);
	for (size_t i = 0; i < s->pacers.n; i++)
		if (s->pacers.v[i].fd >= 0)
			fcntl(s->pacers.v[i].fd, F_SETFL, 0);
}

/* One event per site for task tid; with --args a sampling one, recording a recording one. */
static int open_site_events(struct session *s, pid_t tid, bool on_exec)
{
	for (size_t i = 0; i < s->sites.n; i++) {
		struct site *st = &s->sites.v[i];
		uint64_t ref = st->by_hand ? 0 : st->probe->sem_offset;
		int fd = -1, e;
		if (s->o->recorder) {
			e = open_recording(s, st, ref, tid, on_exec, i == 0, &fd);
		} else {
			e = uprobe_open(&s->pmu, st->obj->open_path, st->probe->pc_offset, ref, tid,
					on_exec, s->o->args ? usdt_sampler_config(&s->sampler) : NULL,
					&fd);
			if (!e && s->o->args)
				e = usdt_sampler_add(&s->sampler, fd, tid, i);
			/* --args reading memory: a stop at every hit (wakeup_events 1). */
			if (!e && s->o->args && usdt_sampler_needs_stop(&s->sampler, st->probe))
				e = signal_task(fd, tid);
		}
		int *slot = vec_push(&s->fds);
		size_t *which = slot ? vec_push(&s->fd_site) : NULL;
		pid_t *whose = which ? vec_push(&s->fd_tid) : NULL;
		if (!whose) {
			s->fds.n -= !!slot;
			s->fd_site.n -= !!which;
			if (fd >= 0)
				close(fd);
			return err_set(-ENOMEM, "out of memory");
		}
		*slot = fd, *which = i, *whose = tid;
		if (e)
			return e;
	}
	return 0;
}

/* Raises (delta 1) or lowers (-1) the semaphores that the kernel does not manage. */
static void semaphores_by_hand(struct session *s, int delta)
{
	for (size_t i = 0; i < s->sites.n; i++) {
		struct site *st = &s->sites.v[i];
		if (!st->by_hand || st->raised == (delta > 0))
			continue;
		if (delta > 0 && usdt_object_load_maps(st->obj, s->pid))
			continue;
		if (!usdt_semaphore_add(s->pid, st->obj, st->probe->sem_offset, delta))
			st->raised = delta > 0;
		else if (delta > 0)
			note(s, "%s", err_msg());
	}
}

/* A task the target started (or the target itself): its events, enabled at exec for the
 * command not yet exec'd. A task that is already gone has nothing to count. */
static int on_task(pid_t tid, void *ctx)
{
	struct session *s = ctx;
	int e = open_site_events(s, tid, s->o->cmd && tid == s->pid && !s->exec_seen);
	return e == -ESRCH ? 0 : e;
}

/* Events of ended tasks are closed in batches of this many: each close waits for the
 * kernel to unregister the uprobe (75-95 ms on Linux 6.18, strace -T), which also holds up
 * opening the events of the target's next thread: closed one task at a time, 21 threads
 * started one after another under tally record took 6.5 s instead of 0.09 s. */
#define CLOSE_BATCH 512

static void close_ended(struct session *s)
{
	for (size_t i = 0; i < s->ended.n; i++)
		close(s->ended.v[i]);
	s->ended.n = 0;
}

static void end_event(struct session *s, int fd)
{
	int *slot = vec_push(&s->ended);
	if (!slot)
		close(fd);
	else
		*slot = fd;
	if (s->ended.n >= CLOSE_BATCH)
		close_ended(s);
}

/* Every event closed, and a recorder's rings let go (a mapped ring keeps its event): the
 * kernel removes the uprobes and lowers the semaphores now, not when a command that runs
 * on ends. The --args sampler keeps its own until the session is freed. */
static void close_events(struct session *s)
{
	const struct usdt_recorder *r = s->o->recorder;
	for (size_t i = 0; i < s->fds.n; i++) {
		if (s->fds.v[i] < 0)
			continue;
		if (r)
			r->task_done(r->ctx, s->fd_tid.v[i]);
		close(s->fds.v[i]);
		s->fds.v[i] = -1;
	}
	for (size_t i = 0; i < s->pacers.n; i++)
		if (s->pacers.v[i].fd >= 0) {
			close(s->pacers.v[i].fd);
			s->pacers.v[i].fd = -1;
		}
	close_ended(s);
}

/* The recorder's drain: a negative return ends the session with that error, a positive
 * one (it can write no more) stops it as SIGINT does. */
static void drain_recorder(struct session *s)
{
	const struct usdt_recorder *r = s->o->recorder;
	if (!r || s->follow.error)
		return;
	int e = r->drain(r->ctx);
	if (e < 0)
		s->follow.error = e;
	else if (e > 0)
		s->stopped = true;
}

/* A task is ending: with --args, its hits are decoded while its memory is still there
 * (the strings its register arguments point at are read when a hit is decoded, and a
 * program's last hits before it exits would otherwise show as bare pointers). */
static void on_exiting_task(pid_t tid, void *ctx)
{
	struct session *s = ctx;
	(void)tid;
	usdt_sampler_drain(&s->sampler);
}

/* A task ended: its hits are counted, its events closed (a program that starts threads
 * all day would otherwise run tally out of descriptors and ring memory). With --args the
 * sampler keeps its descriptors: its rings are found by thread id. */
static void on_exit_task(pid_t tid, void *ctx)
{
	struct session *s = ctx;
	const struct usdt_recorder *r = s->o->recorder;
	if (s->o->args)
		return;
	if (r) /* its last samples, and its EXIT record */
		drain_recorder(s);
	for (size_t i = 0; i < s->fds.n; i++) {
		uint64_t c;
		if (s->fd_tid.v[i] != tid || s->fds.v[i] < 0)
			continue;
		if (!uprobe_count(s->fds.v[i], &c))
			s->res->v[s->sites.v[s->fd_site.v[i]].row].count += c;
		end_event(s, s->fds.v[i]);
		s->fds.v[i] = -1;
	}
	for (size_t i = 0; i < s->pacers.n; i++)
		if (s->pacers.v[i].tid == tid && s->pacers.v[i].fd >= 0) {
			end_event(s, s->pacers.v[i].fd);
			s->pacers.v[i].fd = -1;
		}
	if (r)
		r->task_done(r->ctx, tid);
}

/* The semaphores the kernel cannot raise (no ref_ctr_offset support), once the target's
 * objects are mapped. */
static void raise_by_hand(struct session *s)
{
	if (!s->any_by_hand)
		return;
	note(s, "%s", "this kernel cannot raise USDT semaphores for uprobes "
		      "(no ref_ctr_offset): raising them through /proc/PID/mem instead");
	semaphores_by_hand(s, 1);
}

static void on_exec(pid_t tid, void *ctx)
{
	struct session *s = ctx;
	if (tid != s->pid || s->exec_seen)
		return;
	s->exec_seen = true;
	raise_by_hand(s);
}

/* Every thread of a running process, until a pass over /proc/PID/task finds no new one
 * (threads that seized threads create are followed already). */
static int attach_threads(struct session *s)
{
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/task", (int)s->pid);
	for (bool more = true; more;) {
		more = false;
		DIR *d = opendir(name);
		if (!d)
			return err_set(-ESRCH, "process %d: %s", (int)s->pid, strerror(errno));
		int e = 0;
		for (struct dirent *de; !e && (de = readdir(d));) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0)
				continue;
			size_t before = s->follow.ntasks;
			e = usdt_follow_seize(&s->follow, tid);
			if (e == -ESRCH) /* the thread ended meanwhile */
				e = 0;
			more |= s->follow.ntasks != before;
		}
		closedir(d);
		if (e)
			return e;
	}
	return 0;
}

static int resolve_command(const char *name, char *out, size_t len)
{
	if (strchr(name, '/'))
		return realpath(name, out) ? 0 : err_set(-errno, "%s: %s", name, strerror(errno));
	const char *path = getenv("PATH");
	char list[4096];
	snprintf(list, sizeof(list), "%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *save, *dir = strtok_r(list, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char cand[4096];
		snprintf(cand, sizeof(cand), "%s/%s", dir, name);
		if (!access(cand, X_OK) && realpath(cand, out))
			return 0;
	}
	(void)len;
	return err_set(-ENOENT, "%s: command not found", name);
}

/* Not tally's mask, which blocks SIGINT, SIGTERM and SIGCHLD for its signalfd. */
static void restore_mask(void *saved_mask)
{
	sigprocmask(SIG_SETMASK, saved_mask, NULL);
}

/* Forks the command, held until released (base/spawn.h). */
static int start_command(struct session *s, struct spawn_cmd *cmd)
{
	struct spawn_opts so = { .path = s->objs.v[0].open_path, .argv = s->o->cmd,
				 .before_exec = restore_mask, .arg = &s->saved_mask };
	int e = spawn_start(&so, cmd);
	if (!e)
		s->pid = cmd->pid;
	return e;
}

/* Waits for the target to end, a signal, or the duration, following its new tasks
 * meanwhile. Returns true if it ended. */
static bool wait_target(struct session *s, int sigfd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	struct pollfd pf[2] = { { sigfd, POLLIN, 0 }, { pidfd, POLLIN, 0 } };
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool ended = false;
	while (!ended && !s->follow.error) {
		int timeout = -1;
		if (s->o->duration > 0) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			double left = s->o->duration - (double)(now.tv_sec - t0.tv_sec) -
				      (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
			if (left <= 0)
				break;
			timeout = (int)(left * 1000) + 1;
		}
		/* Drain often: the rings must not fill, --args strings must still be there. */
		if (s->o->args || s->o->recorder)
			timeout = timeout < 0 || timeout > 5 ? 5 : timeout;
		int n = poll(pf, pidfd >= 0 ? 2 : 1, timeout);
		if (n < 0 && errno != EINTR)
			break;
		bool stop = false;
		if (n > 0 && (pf[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				stop |= si.ssi_signo != SIGCHLD;
		}
		usdt_follow_poll(&s->follow);
		if (s->o->args)
			usdt_sampler_drain(&s->sampler);
		drain_recorder(s);
		ended = s->follow.main_ended || (n > 0 && (pf[1].revents & POLLIN));
		s->stopped |= stop;
		if (s->stopped)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	return ended;
}

static int collect(struct session *s)
{
	for (size_t i = 0; i < s->fds.n; i++) {
		uint64_t c;
		if (s->fds.v[i] < 0)
			continue;
		int e = uprobe_count(s->fds.v[i], &c);
		if (e)
			return e;
		s->res->v[s->sites.v[s->fd_site.v[i]].row].count += c;
	}
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	return strcmp(((const struct usdt_count_row *)a)->probe,
		      ((const struct usdt_count_row *)b)->probe);
}

static int load_objects(struct session *s)
{
	const struct usdt_count_opts *o = s->o;
	if (o->pid) {
		s->pid = o->pid;
		return usdt_objects_of_pid(&s->objs, o->pid, false);
	}
	char exe[4096];
	int e = resolve_command(o->cmd[0], exe, sizeof(exe));
	if (!e)
		e = usdt_objects_add_file(&s->objs, exe, exe);
	if (!e)
		e = usdt_objects_add_needed(&s->objs, exe);
	return e;
}

/* The objects, their probe sites, the sampler and the follower: all a session needs
 * before it touches the target. */
static int start(struct session *s)
{
	const struct usdt_count_opts *o = s->o;
	int e = load_objects(s);
	if (!e)
		e = uprobe_pmu_probe(&s->pmu);
	if (!e)
		e = select_sites(s);
	if (e)
		return e;
	file_raise_fd_limit();
	if (o->args && (e = usdt_sampler_init(&s->sampler, &s->objs, s->sites.n, s->res->n)))
		return e;
	for (size_t i = 0; o->args && i < s->sites.n; i++)
		usdt_sampler_set_site(&s->sampler, i, s->sites.v[i].obj, s->sites.v[i].probe,
				      s->sites.v[i].row);
	s->follow = (struct usdt_follow){ .on_task = on_task, .on_exec = on_exec,
					  .on_exit = on_exit_task,
					  .on_exiting = o->args ? on_exiting_task : NULL,
					  .on_signal = own_signal, .ctx = s };
	return 0;
}

/* The command, followed from before its exec; killed and reaped when that fails. */
static int attach_command(struct session *s)
{
	struct spawn_cmd cmd;
	int e = start_command(s, &cmd);
	if (e)
		return e;
	s->follow.main = s->pid;
	e = usdt_follow_seize(&s->follow, s->pid);
	/* The release returns once exec has closed the pipe, before its ptrace stop. */
	if (!e)
		e = spawn_release(&cmd);
	spawn_close(&cmd);
	if (e) {
		kill(s->pid, SIGKILL);
		usdt_follow_detach(&s->follow);
		waitpid(s->pid, &s->res->cmd_status, 0);
	}
	return e;
}

/* Every thread of the running process, its semaphores raised by hand where needed. */
static int attach_process(struct session *s)
{
	const struct usdt_count_opts *o = s->o;
	s->follow.main = s->pid;
	int e = attach_threads(s);
	if (e) {
		usdt_follow_detach(&s->follow);
		return e;
	}
	raise_by_hand(s);
	if (o->log)
		fprintf(o->log, "tally: %s %zu probe site%s in process %d%s\n",
			o->recorder ? "recording" : "counting", s->sites.n,
			s->sites.n == 1 ? "" : "s", (int)s->pid,
			o->duration > 0 ? "" : " until it exits or Ctrl-C");
	return 0;
}

/* After the wait (ended: the target ended): the last events read and counted, the
 * semaphores lowered, the target let go and reaped. A command still running when
 * --duration ran out is sent SIGTERM; one that tally was told to stop for (SIGINT,
 * SIGTERM, a full disk) runs on to its own end, which tally waits for. */
static int teardown(struct session *s, bool ended)
{
	const struct usdt_count_opts *o = s->o;
	quiet_events(s);
	if (o->args)
		usdt_sampler_drain(&s->sampler);
	drain_recorder(s);
	int e = s->follow.error;
	int ce = collect(s);
	e = e ? e : ce;
	if (!o->cmd && !ended)
		semaphores_by_hand(s, -1);
	close_events(s);
	/* Detached first, so that SIGTERM reaches a task no longer traced. */
	usdt_follow_detach(&s->follow);
	if (o->cmd && !ended && !s->follow.main_ended && !s->stopped)
		kill(s->pid, SIGTERM);
	if (o->cmd && !s->follow.main_ended)
		waitpid(s->pid, &s->res->cmd_status, 0);
	else if (o->cmd)
		s->res->cmd_status = s->follow.main_status;
	if (o->args)
		usdt_sampler_finish(&s->sampler, s->res);
	return e;
}

static int run(struct session *s, int sigfd)
{
	int e = start(s);
	if (!e)
		e = s->o->cmd ? attach_command(s) : attach_process(s);
	if (e)
		return e;
	return teardown(s, wait_target(s, sigfd));
}

int usdt_count(const struct usdt_count_opts *o, struct usdt_count_result *res)
{
	struct session s;
	memset(&s, 0, sizeof(s));
	memset(res, 0, sizeof(*res));
	s.o = o;
	s.res = res;
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &s.saved_mask);
	int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	int e = sigfd < 0 ? err_set(-errno, "signalfd: %s", strerror(errno)) : run(&s, sigfd);
	for (size_t i = 0; i < s.fds.n; i++)
		if (s.fds.v[i] >= 0)
			close(s.fds.v[i]);
	for (size_t i = 0; i < s.pacers.n; i++)
		if (s.pacers.v[i].fd >= 0)
			close(s.pacers.v[i].fd);
	close_ended(&s);
	if (o->args)
		usdt_sampler_free(&s.sampler);
	if (sigfd >= 0)
		close(sigfd);
	sigprocmask(SIG_SETMASK, &s.saved_mask, NULL);
	vec_free(&s.fds);
	vec_free(&s.pacers);
	vec_free(&s.ended);
	vec_free(&s.fd_site);
	vec_free(&s.fd_tid);
	vec_free(&s.sites);
	usdt_follow_free(&s.follow);
	usdt_objects_free(&s.objs);
	if (!e)
		qsort(res->v, res->n, sizeof(*res->v), cmp_rows);
	return e;
}

void usdt_count_result_free(struct usdt_count_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->v[i].probe);
	vec_free(res);
}
