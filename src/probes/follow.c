/*
 * Following a target's threads and child processes with ptrace, so that each new task has
 * its uprobe events before it runs (perf cannot inherit uprobe-PMU events: attach.h).
 * PTRACE_SEIZE leaves the target running; the clone/fork/exec events stop the task
 * concerned until it is resumed here. Signals the target receives meanwhile are passed on
 * unchanged, and group stops (SIGSTOP, Ctrl-Z) stay stops (PTRACE_LISTEN).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "base/err.h"
#include "base/vec.h"
#include "probes/attach.h"

#define FOLLOW_OPTIONS \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC)

static bool known(const struct usdt_follow *f, pid_t tid)
{
	for (size_t i = 0; i < f->ntasks; i++)
		if (f->tasks[i] == tid)
			return true;
	return false;
}

/* An ended task: its id may come back for a new one, which must be adopted. */
static void forget(struct usdt_follow *f, pid_t tid)
{
	for (size_t i = 0; i < f->ntasks; i++)
		if (f->tasks[i] == tid) {
			f->tasks[i] = f->tasks[--f->ntasks];
			return;
		}
}

/* Opens tid's events once; the first failure is kept for the session to report. */
static void adopt(struct usdt_follow *f, pid_t tid)
{
	if (known(f, tid))
		return;
	/* VEC's growth, on the fields attach.h declares for the follower */
	pid_t *t = vec_push_raw((void **)&f->tasks, &f->ntasks, &f->cap, sizeof(*t));
	if (!t) {
		f->error = f->error ? f->error : err_set(-ENOMEM, "out of memory");
		return;
	}
	*t = tid;
	int e = f->on_task(tid, f->ctx);
	if (e && !f->error)
		f->error = e;
}

int usdt_follow_seize(struct usdt_follow *f, pid_t tid)
{
	if (known(f, tid))
		return 0;
	/* Tasks that clone, fork or vfork pass these options on to their children. */
	long options = FOLLOW_OPTIONS | (f->on_exiting ? PTRACE_O_TRACEEXIT : 0);
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)options))
		return err_set(errno == ESRCH ? -ESRCH : -errno, "ptrace(PTRACE_SEIZE, %d): %s%s",
			       (int)tid, strerror(errno),
			       errno == EPERM ? " (another tracer, or kernel.yama.ptrace_scope)" : "");
	adopt(f, tid);
	return f->error;
}

static bool group_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static bool own_signal(struct usdt_follow *f, pid_t tid)
{
	siginfo_t si;
	return f->on_signal && !ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) &&
	       f->on_signal(tid, &si, f->ctx);
}

static void handle_stop(struct usdt_follow *f, pid_t tid, int status)
{
	int event = status >> 16, sig = WSTOPSIG(status);
	unsigned long msg = 0;
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		/* The new task is stopped too (it reports PTRACE_EVENT_STOP, maybe first). */
		if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) && msg)
			adopt(f, (pid_t)msg);
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	case PTRACE_EVENT_EXEC:
		if (f->on_exec)
			f->on_exec(tid, f->ctx);
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	case PTRACE_EVENT_EXIT:
		if (f->on_exiting)
			f->on_exiting(tid, f->ctx);
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	case PTRACE_EVENT_STOP:
		if (group_stop_signal(sig)) {
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			return;
		}
		adopt(f, tid); /* a new task's first stop */
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	default:
		/* A signal on its way to the task: deliver it, unless it is tally's own. */
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)(own_signal(f, tid) ? 0 : sig));
	}
}

void usdt_follow_poll(struct usdt_follow *f)
{
	int status;
	pid_t tid;
	while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
		if (WIFSTOPPED(status)) {
			handle_stop(f, tid, status);
		} else if (tid == f->main) {
			f->main_ended = true;
			f->main_status = status;
		} else {
			forget(f, tid);
			if (f->on_exit)
				f->on_exit(tid, f->ctx);
		}
	}
}

void usdt_follow_detach(struct usdt_follow *f)
{
	size_t left = 0;
	for (size_t i = 0; i < f->ntasks; i++)
		if (!ptrace(PTRACE_INTERRUPT, f->tasks[i], NULL, NULL))
			left++;
	struct timespec t0, now, nap = { 0, 1000000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (left) {
		int status;
		pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (tid > 0 && WIFSTOPPED(status)) {
			int event = status >> 16, sig = WSTOPSIG(status);
			/* A pending signal goes with the detach; an event stop carries none. */
			long pass = !event && !own_signal(f, tid) ? sig : 0;
			if (!ptrace(PTRACE_DETACH, tid, NULL, (void *)pass))
				left--;
		} else if (tid > 0) {
			if (tid == f->main)
				f->main_ended = true, f->main_status = status;
			left--;
		} else {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec >= 1 || (tid < 0 && errno == ECHILD))
				break; /* what remains is detached when tally exits */
			nanosleep(&nap, NULL);
		}
	}
	f->ntasks = 0;
}

void usdt_follow_free(struct usdt_follow *f)
{
	free(f->tasks);
	f->tasks = NULL;
	f->ntasks = f->cap = 0;
}
