/*
 * Storing debug cache copies in the background, as `git gc --auto` detaches: inflating the
 * rest of libc6-dbg's sections and writing 10 MB was a third of a first report's CPU time,
 * none of it needed for the report itself. The files wait for the process's exit (a process
 * started earlier would have had to be forked, and every page the report wrote after that
 * copied: 1,200 pages, 6 ms); then a child that shares the process's memory takes them
 * over once the process is gone, and stores the copies in a session of its own, at the
 * lowest priority, with nothing of the parent's open (a reader of the parent's pipe sees
 * its end when the parent exits), and ends with _exit (no atexit handler, no flush of the
 * stdio buffers it finds). A process with more than one thread stores in itself: its other
 * threads, killed by the exit, could leave a lock of the memory held. Only a process that
 * asked for it (the tally command) starts the child: a program that uses libtally stores
 * its copies itself, when it closes the module.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
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
	const char *threads = file_proc_stat("/proc/self/stat", 20, buf, sizeof(buf));
	return threads && strtol(threads, NULL, 10) == 1;
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

/* The store runs in a process that shares this one's memory (clone with CLONE_VM, as
 * posix_spawn's vfork does): fork() copied the page tables, and the report's exit then tore
 * its memory down, 1-2 ms of a 30 ms first report; with the memory shared, neither
 * happens before the report ends. The child touches nothing until the parent is gone: it
 * waits on a pipe whose other end closes only at the parent's exit, after the parent let
 * its memory go (do_exit's exit_mm comes before exit_files). Until then the parent still
 * runs its exit (atexit handlers, the flush of stdout) in that memory, unlocked where the C
 * library believes it has one thread; from then on the child is that one thread, and no
 * one else runs in the memory. Signals stay blocked while it waits, so that the read ends
 * only at the end of the file, and errno, which the parent's thread still uses, is not
 * written. */
#define STORE_STACK (8 << 20)
#define STORE_GUARD 4096

struct store_child {
	int gone, held; /* the pipe's ends: the read end sees its end at the parent's exit */
	sigset_t mask; /* the signal mask to restore when the parent is gone */
};

static struct store_child child;

static int store_in_child(void *arg)
{
	(void)arg;
	char c;
	close(child.held);
	while (read(child.gone, &c, 1) > 0)
		;
	close(child.gone);
	pthread_sigmask(SIG_SETMASK, &child.mask, NULL);
	setsid();
	detach();
	store_all();
	_exit(0);
}

/* 0 when a detached child took the stores over, else a negative code (nothing was
 * started: the caller stores). The child is not waited for: its parent exits at once, and
 * init (or the nearest subreaper) reaps it. */
static int store_detached(void)
{
	/* What the exit has left to do is then bookkeeping: written out before, the output
	 * cannot hold the parent in its exit (a slow reader of its pipe) while the child
	 * waits, nor be where a signal ends it half-way through. */
	fflush(NULL);
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	void *stack = mmap(NULL, STORE_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	/* its lowest page a guard, as a thread's stack has */
	if (stack != MAP_FAILED && mprotect(stack, STORE_GUARD, PROT_NONE)) {
		munmap(stack, STORE_STACK);
		stack = MAP_FAILED;
	}
	if (stack == MAP_FAILED) {
		int e = -errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	sigset_t all;
	sigfillset(&all);
	child.gone = p[0];
	child.held = p[1];
	pthread_sigmask(SIG_SETMASK, &all, &child.mask);
	pid_t pid = clone(store_in_child, (char *)stack + STORE_STACK, CLONE_VM | SIGCHLD, NULL);
	int e = pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &child.mask, NULL);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		munmap(stack, STORE_STACK);
	}
	/* p[1] stays open until the exit closes it: that is the child's signal. */
	return e;
}

static void store_pending(void)
{
	pthread_mutex_lock(&lock);
	exited = true;
	if (pending.n && single_threaded() && !store_detached()) {
		/* The files stay as they are: the child stores them from this memory. pending
		 * still holds them, so leak checkers see them held. */
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
