/*
 * Outputs replaced only when complete: see atomic_file.h. The temporary lives in the
 * target's own directory because rename() is atomic only within one file system. Files in
 * a directory under /proc are magic links (/dev/stdout and /dev/fd/1 end at
 * /proc/PID/fd/1, whose text may be "pipe:[123]", or name a file the shell opened for
 * appending): they are always written directly, never followed.
 */
#include "base/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"

/* The kernel's own limit on links followed in one lookup (MAXSYMLINKS). */
#define MAX_LINKS 40
#define MAX_TRIES 100

struct afile {
	int fd;
	FILE *stream;
	int write_errno; /* of the stream's first failed write */
	unsigned flags;
	char *path; /* as the caller gave it, for messages */
	char *target; /* the file replaced: path with its symlinks followed */
	char *tmp; /* NULL when written directly */
};

static char *dup_join(const char *dir, size_t dirlen, const char *name)
{
	size_t n = strlen(name);
	char *s = malloc(dirlen + 1 + n + 1);
	if (s) {
		memcpy(s, dir, dirlen);
		s[dirlen] = '/';
		memcpy(s + dirlen + 1, name, n + 1);
	}
	return s;
}

/* The target of link cur: its text, relative to cur's directory unless absolute. */
static char *follow(const char *cur)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(cur, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	const char *slash = strrchr(cur, '/');
	if (buf[0] == '/' || !slash)
		return strdup(buf);
	return dup_join(cur, (size_t)(slash - cur), buf);
}

/* Whether cur lies in a directory under /proc, its directory's symlinks followed. */
static bool in_proc(const char *cur)
{
	const char *slash = strrchr(cur, '/');
	if (!slash)
		return false;
	char *dir = strndup(cur, slash == cur ? 1 : (size_t)(slash - cur));
	char *real = dir ? realpath(dir, NULL) : NULL;
	bool r = real && (!strcmp(real, "/proc") || !strncmp(real, "/proc/", 6));
	free(real);
	free(dir);
	return r;
}

/* Follows path's symlinks to the file to replace: 0 with *target (malloc'd) and *direct
 * set, *st the target's status (st_mode 0 when it does not exist yet). */
static int resolve(const char *path, char **target, bool *direct, struct stat *st)
{
	char *cur = strdup(path);
	for (int i = 0; cur && i <= MAX_LINKS; i++) {
		*direct = in_proc(cur);
		if (*direct || lstat(cur, st)) {
			int e = errno;
			if (*direct || e == ENOENT) {
				st->st_mode = 0;
				*target = cur;
				return 0;
			}
			free(cur);
			return -e;
		}
		if (!S_ISLNK(st->st_mode)) {
			*direct = !S_ISREG(st->st_mode);
			*target = cur;
			return 0;
		}
		char *next = follow(cur);
		free(cur);
		cur = next;
	}
	if (!cur)
		return -errno;
	free(cur);
	return -ELOOP;
}

/* The directory of target (its first *dirlen bytes: none for the root) and its last
 * name, to be joined by dup_join. */
static const char *split(const char *target, size_t *dirlen, const char **base)
{
	const char *slash = strrchr(target, '/');
	*dirlen = slash ? (size_t)(slash - target) : 1;
	*base = slash ? slash + 1 : target;
	return slash ? target : ".";
}

/* A new hidden name beside target, created exclusively: 0 with a->tmp and a->fd. */
static int make_temp(struct afile *a)
{
	size_t dirlen;
	const char *base, *dir = split(a->target, &dirlen, &base);
	char name[NAME_MAX + 1];
	for (int i = 0; i < MAX_TRIES; i++) {
		int n = snprintf(name, sizeof(name), ".%s.tally-%d-%d", base, (int)getpid(), i);
		if (n < 0 || n >= (int)sizeof(name)) /* a long name: a shorter temporary */
			snprintf(name, sizeof(name), ".tally-%d-%d", (int)getpid(), i);
		free(a->tmp);
		a->tmp = dup_join(dir, dirlen, name);
		if (!a->tmp)
			return -ENOMEM;
		a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (a->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	free(a->tmp);
	a->tmp = NULL;
	return -e;
}

/* Whether name is a temporary of base (".BASE.tally-PID-N") whose process is gone: its
 * writer was killed before the commit. */
static bool left_by_dead_writer(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (name[0] != '.' || strncmp(name + 1, base, n) || strncmp(name + 1 + n, ".tally-", 7))
		return false;
	char *end;
	long pid = strtol(name + 8 + n, &end, 10);
	if (pid <= 0 || pid > INT32_MAX || *end != '-' || !end[1])
		return false;
	strtol(end + 1, &end, 10);
	return !*end && kill((pid_t)pid, 0) && errno == ESRCH;
}

static bool later(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

int afile_leftover(const char *path, char **out)
{
	char *target = NULL;
	bool direct;
	struct stat st;
	int r = resolve(path, &target, &direct, &st);
	if (r)
		return r;
	/* what a leftover must be later than: the file at the path, if there is one */
	struct timespec newest = st.st_mode ? st.st_mtim : (struct timespec){ 0, 0 };
	size_t dirlen;
	const char *base, *dir = split(target, &dirlen, &base);
	char *dirpath = dirlen ? strndup(dir, dirlen) : strdup("/");
	DIR *d = dirpath && !direct ? opendir(dirpath) : NULL;
	*out = NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *p = left_by_dead_writer(e->d_name, base) ? dup_join(dir, dirlen, e->d_name)
							       : NULL;
		if (p && !stat(p, &st) && S_ISREG(st.st_mode) && later(&st.st_mtim, &newest)) {
			free(*out);
			*out = p;
			newest = st.st_mtim;
		} else {
			free(p);
		}
	}
	if (d)
		closedir(d);
	free(dirpath);
	free(target);
	return *out ? 0 : -ENOENT;
}

static void free_afile(struct afile *a)
{
	free(a->path);
	free(a->target);
	free(a->tmp);
	free(a);
}

/* Opens the path itself when direct, else a temporary beside its target. */
static int open_in(struct afile *a, bool direct, const struct stat *st)
{
	if (direct) {
		a->fd = open(a->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		return a->fd < 0 ? -errno : 0;
	}
	int r = make_temp(a);
	/* The replacement keeps the permissions a user gave the old file. */
	if (!r && st->st_mode && fchmod(a->fd, st->st_mode & 07777))
		r = -errno;
	return r;
}

int afile_open(const char *path, unsigned flags, struct afile **out)
{
	struct afile *a = calloc(1, sizeof(*a));
	if (!a || !(a->path = strdup(path))) {
		free(a);
		return err_set(-ENOMEM, "out of memory");
	}
	a->fd = -1;
	a->flags = flags;
	struct stat st;
	bool direct;
	int r = resolve(path, &a->target, &direct, &st);
	if (!r)
		r = open_in(a, direct, &st);
	if (r) {
		if (a->tmp)
			unlink(a->tmp);
		err_set(r, "%s: %s", path, strerror(-r));
		free_afile(a);
		return r;
	}
	*out = a;
	return 0;
}

int afile_fd(const struct afile *a) { return a->fd; }

const char *afile_target(const struct afile *a) { return a->target; }

bool afile_is_direct(const struct afile *a) { return !a->tmp; }

FILE *afile_stream(struct afile *a)
{
	if (!a->stream && !(a->stream = file_stream_keeping_errno(a->fd, &a->write_errno)))
		err_set(-ENOMEM, "%s: out of memory", a->path);
	return a->stream;
}

/* Closes the stream or the descriptor: 0, or the first error of writing it out. */
static int close_out(struct afile *a)
{
	int e = 0;
	if (a->stream && (fflush(a->stream) || ferror(a->stream)))
		e = a->write_errno ? a->write_errno : EIO;
	if (!e && a->tmp && (a->flags & AFILE_SYNC) && fsync(a->fd))
		e = errno;
	if (a->stream)
		fclose(a->stream);
	if (close(a->fd))
		e = e ? e : errno;
	a->stream = NULL;
	a->fd = -1;
	return e;
}

int afile_commit(struct afile *a)
{
	errno = 0;
	int e = close_out(a);
	if (!e && a->tmp && rename(a->tmp, a->target))
		e = errno;
	if (e && a->tmp)
		unlink(a->tmp);
	int r = e ? err_set(-e, "%s: write error: %s", a->path, strerror(e)) : 0;
	free_afile(a);
	return r;
}

void afile_abort(struct afile *a)
{
	if (!a)
		return;
	if (a->stream)
		fclose(a->stream);
	if (a->fd >= 0)
		close(a->fd);
	if (a->tmp)
		unlink(a->tmp);
	free_afile(a);
}
