/*
 * Commands started held (spawn.h). The child closes the parent's ends of both pipes, since
 * only exec closes its own copies: the write end of "go" left open would keep it waiting
 * past the caller's close, and the read end of "failed" is not its to hold.
 */
#include "base/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The child: waits for the release, execs, and on failure sends errno back. */
static _Noreturn void run_held(const struct spawn_opts *o, int *go, int *failed)
{
	char c;
	close_fd(&go[1]);
	close_fd(&failed[0]);
	if (read(go[0], &c, 1) != 1)
		_exit(127);
	if (o->before_exec)
		o->before_exec(o->arg);
	if (o->path)
		execv(o->path, o->argv);
	else
		execvp(o->argv[0], o->argv);
	int e = errno;
	if (write(failed[1], &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int spawn_start(const struct spawn_opts *o, struct spawn_cmd *out)
{
	int go[2] = { -1, -1 }, failed[2] = { -1, -1 }, e = 0;
	pid_t pid = -1;
	*out = SPAWN_CMD_NONE;
	out->name = o->argv[0];
	if (pipe2(go, O_CLOEXEC) || pipe2(failed, O_CLOEXEC))
		e = err_set(-errno, "pipe: %s", strerror(errno));
	else if ((pid = fork()) < 0)
		e = err_set(-errno, "fork: %s", strerror(errno));
	else if (pid == 0)
		run_held(o, go, failed);
	close_fd(&go[0]);
	close_fd(&failed[1]);
	if (e) {
		close_fd(&go[1]);
		close_fd(&failed[0]);
		return e;
	}
	out->pid = pid;
	out->go = go[1];
	out->failed = failed[0];
	return 0;
}

/* Whether exec's errno came on fd: EOF when exec closed the pipe (a signal may interrupt
 * the wait: the caller's handlers run meanwhile). */
static bool read_errno(int fd, int *out)
{
	ssize_t n;
	do
		n = read(fd, out, sizeof(*out));
	while (n < 0 && errno == EINTR);
	return n == sizeof(*out);
}

int spawn_release(struct spawn_cmd *c)
{
	int e = 0, child_errno;
	if (write(c->go, "g", 1) != 1)
		e = err_set(-errno, "starting %s: %s", c->name, strerror(errno));
	close_fd(&c->go);
	if (!e && read_errno(c->failed, &child_errno)) {
		c->exec_errno = child_errno;
		e = err_set(-child_errno, "%s: %s", c->name, strerror(child_errno));
	}
	close_fd(&c->failed);
	return e;
}

void spawn_close(struct spawn_cmd *c)
{
	close_fd(&c->go);
	close_fd(&c->failed);
}
