/*
 * Whole-file reads and descriptors: see file.h.
 */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/vec.h"

int file_read(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(-EINVAL, "%s: not a regular file", path);
	}
	size_t size = (size_t)st.st_size;
	uint8_t *buf = malloc(size ? size : 1);
	size_t got = 0;
	while (buf && got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf || got != size) {
		free(buf);
		return err_set(-EIO, "%s: cannot read the file", path);
	}
	*out = buf;
	*len = size;
	return 0;
}

char *file_read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	VEC(char) buf = { 0 };
	*len = 0;
	if (!f)
		return NULL;
	for (;;) { /* 4 MiB at a time: /proc/kallsyms is a few MiB */
		if (!vec_reserve(&buf, (size_t)(1 << 22) + 1)) {
			vec_free(&buf);
			break;
		}
		size_t room = buf.cap - buf.n - 1, got = fread(buf.v + buf.n, 1, room, f);
		buf.n += got;
		if (got < room) {
			buf.v[buf.n] = 0;
			*len = buf.n;
			break;
		}
	}
	fclose(f);
	return buf.v;
}

const char *file_proc_stat(const char *path, int n, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 || size < 2 ? -1 : read(fd, buf, size - 1);
	if (fd >= 0)
		close(fd);
	if (got <= 0)
		return NULL;
	buf[got] = 0;
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && field < n; field++)
		p = strchr(p + 1, ' ');
	return p ? p + 1 : NULL;
}

int file_mkdirs(char *path, unsigned mode)
{
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			int r = mkdir(path, mode);
			*p = '/';
			if (r && errno != EEXIST)
				return -errno;
		}
	return mkdir(path, mode) && errno != EEXIST ? -errno : 0;
}

void file_raise_fd_limit(void)
{
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

unsigned long long file_fd_limit(void)
{
	struct rlimit rl;
	return getrlimit(RLIMIT_NOFILE, &rl) ? 0 : (unsigned long long)rl.rlim_cur;
}

/* A pipe without readers polls as POLLERR on its writing end, a stream socket whose peer
 * closed as POLLHUP; a terminal that hung up polls as POLLHUP too, hence the type check. */
bool file_reader_gone(int fd)
{
	struct stat st;
	if (fstat(fd, &st) || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

struct kept_errno {
	int fd;
	int *err;
};

static ssize_t write_keeping_errno(void *cookie, const char *buf, size_t n)
{
	struct kept_errno *k = cookie;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(k->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) { /* fopencookie: a short count is the error, never a negative one */
			if (!*k->err)
				*k->err = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int close_keeping_fd(void *cookie)
{
	free(cookie);
	return 0;
}

FILE *file_stream_keeping_errno(int fd, int *err)
{
	struct kept_errno *k = malloc(sizeof(*k));
	if (!k)
		return NULL;
	*k = (struct kept_errno){ .fd = fd, .err = err };
	*err = 0;
	cookie_io_functions_t io = { .write = write_keeping_errno, .close = close_keeping_fd };
	FILE *f = fopencookie(k, "w", io);
	if (!f)
		free(k);
	return f;
}

void file_die_of_sigpipe(void)
{
	sigset_t pipe;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &pipe, NULL);
	raise(SIGPIPE);
	_exit(128 + SIGPIPE); /* not reached: the signal is delivered before raise returns */
}
