/*
 * Storing debug cache copies in the background, as `git gc --auto` detaches: inflating the
 * rest of libc6-dbg's sections and writing 10 MB was a third of a first report's CPU time,
 * none of it needed for the report itself. The files wait for the process's exit (forked
 * earlier, every page the process writes after the fork is copied: 1,200 pages, 6 ms, for
 * what a report frees and prints after closing its modules); then it forks, and the child
 * stores the copies from the memory it inherited, in a session of its own, at the lowest
 * priority, with nothing of the parent's open (a reader of the parent's pipe sees its end
 * when the parent exits), and ends with _exit (no atexit handler, no flush of inherited
 * stdio buffers). fork() copies only the calling thread: a process with more than one
 * stores in itself. Only a process that asked for it (the tally command) forks: a program
 * that uses libtally stores its copies itself, when it closes the module.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/err.h"
#include "base/vec.h"
#include "elf/elf.h"

struct pending {
	struct elf_file *f; /* owned */
	char *dir;
};

/* Process-wide: the copies this process took on (their paths: one store per copy), and
 * the files waiting for its exit. */
static VEC(char *) claimed;
static VEC(struct pending) pending;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool detached, at_exit_set, exited;

void elf_debug_cache_detach_stores(void)
{
	pthread_mutex_lock(&lock);
	detached = true;
	pthread_mutex_unlock(&lock);
}

/* Whether path was not claimed before; it is from now on. Under lock. */
static bool claim(const char *path)
{
	for (size_t i = 0; i < claimed.n; i++)
		if (!strcmp(claimed.v[i], path))
			return false;
	char **slot = vec_push(&claimed);
	if (slot && !(*slot = strdup(path)))
		claimed.n--;
	return true;
}

/* Whether this process has one thread: field 20 of /proc/self/stat (proc(5)), counted
 * after the command name's closing parenthesis, since the name may hold spaces. Unknown
 * (no /proc) counts as more. */
static bool single_threaded(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	return p && strtol(p + 1, NULL, 10) == 1;
}

/* Whether TALLY_CACHE_STORE asks for the copy to be stored before the command ends. */
static bool store_waits(void)
{
	const char *s = getenv("TALLY_CACHE_STORE");
	return s && !strcmp(s, "wait");
}

/* Nothing of the parent's stays open, and the store never competes with anyone for the
 * CPU or the disk. Each step is best effort. */
static void detach(void)
{
	int null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3; fd++) {
		if (null >= 0)
			dup2(null, fd);
		else
			close(fd);
	}
	if (close_range(3, ~0u, 0)) { /* before Linux 5.9 */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	}
	setpriority(PRIO_PROCESS, 0, 19);
	struct sched_param idle = { 0 };
	sched_setscheduler(0, SCHED_IDLE, &idle);
	/* ioprio_set(IOPRIO_WHO_PROCESS, this process, IOPRIO_CLASS_IDLE): linux/ioprio.h */
	syscall(SYS_ioprio_set, 1, 0, 3 << 13);
}

static void store_all(void)
{
	for (size_t i = 0; i < pending.n; i++)
		elf_debug_cache_store(pending.v[i].f, pending.v[i].dir);
}

/* 0 when a detached child took the stores over, else a negative code (nothing was
 * started: the caller stores). The child is not waited for: its parent exits at once, and
 * init (or the nearest subreaper) reaps it. A second fork, so that the store is no child
 * of ours even for that instant, copied the whole address space once more, and that copy
 * was then torn down: 2-3 ms of a first report. */
static int store_detached(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		setsid();
		detach();
		store_all();
		_exit(0);
	}
	return 0;
}

static void store_pending(void)
{
	pthread_mutex_lock(&lock);
	exited = true;
	if (pending.n && single_threaded() && !store_detached()) {
		/* The files stay as they are until the exit takes them: closing them after the
		 * fork wrote to pages the store shares, each then copied, and unmapped what the
		 * exit unmaps anyway (1.3 ms of a 40 ms report). pending still holds them, so
		 * leak checkers see them held. */
		pthread_mutex_unlock(&lock);
		return;
	}
	if (pending.n)
		store_all();
	for (size_t i = 0; i < pending.n; i++) {
		elf_close(pending.v[i].f);
		free(pending.v[i].dir);
	}
	vec_free(&pending);
	for (size_t i = 0; i < claimed.n; i++)
		free(claimed.v[i]);
	vec_free(&claimed);
	pthread_mutex_unlock(&lock);
	err_clear();
}

/* Whether f waits for the exit, now owned by the list. Under lock. */
static bool defer(struct elf_file *f, const char *dir)
{
	if (!detached || exited || (!at_exit_set && atexit(store_pending)))
		return false;
	at_exit_set = true;
	struct pending *p = vec_push(&pending);
	if (!p)
		return false;
	if (!(p->dir = strdup(dir))) {
		pending.n--;
		return false;
	}
	p->f = f;
	return true;
}

void elf_debug_cache_close(struct elf_file *f, const char *dir)
{
	char path[PATH_MAX];
	bool stores = f->type != ET_REL && elf_has_compressed_sections(f) &&
		      !elf_build_id_path(f, dir, path, sizeof(path));
	pthread_mutex_lock(&lock);
	stores = stores && claim(path);
	bool deferred = stores && !store_waits() && defer(f, dir);
	pthread_mutex_unlock(&lock);
	if (stores && !deferred)
		elf_debug_cache_store(f, dir);
	if (!deferred)
		elf_close(f);
	err_clear();
}
