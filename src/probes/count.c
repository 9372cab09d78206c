/*
 * The counting session (see count.h). A command is forked and held on a pipe while its
 * events are opened with enable_on_exec, so counting starts exactly at exec and no hit is
 * missed. For a running process, one event per existing thread (perf counts a task, not a
 * process; threads created later are inherited). Without kernel ref_ctr support the
 * semaphores are raised through /proc/PID/mem: for a command, at the exec stop of ptrace
 * (the executable is mapped, its libraries not yet).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/vec.h"
#include "probes/attach.h"
#include "probes/count.h"
#include "probes/sample.h"

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
	VEC(int) fds;         /* parallel to fd_site */
	VEC(size_t) fd_site;
	struct uprobe_pmu pmu;
	struct usdt_sampler sampler;
	pid_t pid;
	bool need_ptrace;
	struct usdt_count_result *res;
};

static void note(const struct session *s, const char *fmt, const char *arg)
{
	if (s->o->log) {
		fputs("tally: ", s->o->log);
		fprintf(s->o->log, fmt, arg);
		fputc('\n', s->o->log);
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
	if (!total)
		return err_set(-ENOENT, "%s: no USDT probes (no stapsdt notes)%s",
			       s->objs.n ? s->objs.v[0].path : "target",
			       o->cmd ? " in the executable or the libraries it needs" :
					" in any object the process maps");
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
			s->need_ptrace |= st->by_hand;
			int e = row_index(s->res, p, &st->row);
			if (e)
				return e;
		}
	}
	return 0;
}

static int open_one(struct session *s, size_t i, pid_t tid, int cpu, bool on_exec)
{
	struct site *st = &s->sites.v[i];
	uint64_t ref = st->by_hand ? 0 : st->probe->sem_offset;
	int fd = -1, e = uprobe_open(&s->pmu, st->obj->open_path, st->probe->pc_offset, ref, tid,
				     cpu, on_exec, s->o->args ? usdt_sampler_config(&s->sampler) : NULL,
				     &fd);
	if (!e && s->o->args)
		e = usdt_sampler_add(&s->sampler, fd, cpu, i);
	int *slot = vec_push(&s->fds);
	size_t *which = vec_push(&s->fd_site);
	if (!slot || !which) {
		if (slot)
			s->fds.n--;
		if (fd >= 0)
			close(fd);
		return err_set(-ENOMEM, "out of memory");
	}
	*slot = fd, *which = i;
	return e;
}

/* One counting event per site for tid, or with --args one sampling event per site and cpu. */
static int open_site_events(struct session *s, pid_t tid, bool on_exec)
{
	long ncpus = s->o->args ? sysconf(_SC_NPROCESSORS_CONF) : 1;
	for (size_t i = 0; i < s->sites.n; i++) {
		for (long cpu = 0; cpu < ncpus; cpu++) {
			int e = open_one(s, i, tid, s->o->args ? (int)cpu : -1, on_exec);
			if (e == -ENODEV)
				continue;
			if (e)
				return e;
		}
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

static int attach_threads(struct session *s)
{
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/task", (int)s->pid);
	DIR *d = opendir(name);
	if (!d)
		return err_set(-ESRCH, "process %d: %s", (int)s->pid, strerror(errno));
	int e = 0;
	for (struct dirent *de; !e && (de = readdir(d));) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid > 0) {
			e = open_site_events(s, tid, false);
			if (e == -ESRCH) /* the thread ended meanwhile */
				e = 0;
		}
	}
	closedir(d);
	return e;
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

/* Forks the command, stopped until released; its exec failures come back on errpipe. */
static int start_command(struct session *s, int *go, int *errpipe)
{
	int gp[2], ep[2];
	if (pipe2(gp, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		return err_set(-errno, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		return err_set(-errno, "fork: %s", strerror(errno));
	if (!pid) {
		char c;
		close(gp[1]);
		close(ep[0]);
		if (read(gp[0], &c, 1) != 1)
			_exit(127);
		if (s->need_ptrace)
			ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(s->objs.v[0].open_path, s->o->cmd);
		int e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(gp[0]);
	close(ep[1]);
	s->pid = pid;
	*go = gp[1];
	*errpipe = ep[0];
	return 0;
}

static int wait_exec(struct session *s, int go, int errpipe)
{
	int e = 0, st;
	if (write(go, "x", 1) != 1)
		e = err_set(-errno, "releasing the command: %s", strerror(errno));
	close(go);
	int child_errno;
	if (!e && read(errpipe, &child_errno, sizeof(child_errno)) == sizeof(child_errno))
		e = err_set(-child_errno, "%s: %s", s->o->cmd[0], strerror(child_errno));
	close(errpipe);
	if (s->need_ptrace) {
		if (!e && (waitpid(s->pid, &st, 0) != s->pid || !WIFSTOPPED(st)))
			return err_set(-ECHILD, "%s: did not stop at exec", s->o->cmd[0]);
		if (!e) {
			note(s, "%s", "this kernel cannot raise USDT semaphores for uprobes "
				      "(no ref_ctr_offset): raising them through /proc/PID/mem instead");
			semaphores_by_hand(s, 1);
		}
		ptrace(PTRACE_DETACH, s->pid, NULL, NULL);
	}
	return e;
}

/* Waits for the target to end, a signal, or the duration. Returns true if it ended. */
static bool wait_target(struct session *s, int sigfd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	struct pollfd pf[2] = { { sigfd, POLLIN, 0 }, { pidfd, POLLIN, 0 } };
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
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
		if (s->o->args) /* drain often: the rings must not fill, strings must still be there */
			timeout = timeout < 0 || timeout > 5 ? 5 : timeout;
		int n = poll(pf, pidfd >= 0 ? 2 : 1, timeout);
		if (s->o->args)
			usdt_sampler_drain(&s->sampler);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && (pf[0].revents & POLLIN))
			break;
		if (n > 0 && (pf[1].revents & POLLIN)) {
			close(pidfd);
			return true;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return false;
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

static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
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

static int run(struct session *s, int sigfd)
{
	const struct usdt_count_opts *o = s->o;
	int e = load_objects(s);
	if (!e)
		e = uprobe_pmu_probe(&s->pmu);
	if (!e)
		e = select_sites(s);
	if (e)
		return e;
	raise_fd_limit();
	if (o->args && (e = usdt_sampler_init(&s->sampler, &s->objs, s->sites.n, s->res->n)))
		return e;
	for (size_t i = 0; o->args && i < s->sites.n; i++)
		usdt_sampler_set_site(&s->sampler, i, s->sites.v[i].obj, s->sites.v[i].probe,
				      s->sites.v[i].row);
	bool ended = false;
	if (o->cmd) {
		int go = -1, errpipe = -1;
		if ((e = start_command(s, &go, &errpipe)))
			return e;
		e = open_site_events(s, s->pid, true);
		if (e) {
			kill(s->pid, SIGKILL);
			close(go);
			close(errpipe);
			waitpid(s->pid, NULL, 0);
			return e;
		}
		if ((e = wait_exec(s, go, errpipe))) {
			waitpid(s->pid, &s->res->cmd_status, 0);
			return e;
		}
	} else {
		if ((e = attach_threads(s)))
			return e;
		if (s->need_ptrace) {
			note(s, "%s", "this kernel cannot raise USDT semaphores for uprobes "
				      "(no ref_ctr_offset): raising them through /proc/PID/mem instead");
			semaphores_by_hand(s, 1);
		}
	}
	ended = wait_target(s, sigfd);
	if (o->cmd && !ended)
		kill(s->pid, SIGTERM);
	if (o->args)
		usdt_sampler_drain(&s->sampler);
	if (o->cmd)
		waitpid(s->pid, &s->res->cmd_status, 0);
	e = collect(s);
	if (!o->cmd && !ended)
		semaphores_by_hand(s, -1);
	if (o->args)
		usdt_sampler_finish(&s->sampler, s->res);
	return e;
}

int usdt_count(const struct usdt_count_opts *o, struct usdt_count_result *res)
{
	struct session s;
	memset(&s, 0, sizeof(s));
	memset(res, 0, sizeof(*res));
	s.o = o;
	s.res = res;
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	int sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	int e = sigfd < 0 ? err_set(-errno, "signalfd: %s", strerror(errno)) : run(&s, sigfd);
	for (size_t i = 0; i < s.fds.n; i++)
		if (s.fds.v[i] >= 0)
			close(s.fds.v[i]);
	if (o->args)
		usdt_sampler_free(&s.sampler);
	if (sigfd >= 0)
		close(sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	vec_free(&s.fds);
	vec_free(&s.fd_site);
	vec_free(&s.sites);
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
