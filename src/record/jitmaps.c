/*
 * Keeping the perf maps and agent VM registries (tally-vm-PID-N.dump, the agent's mixed
 * mode) of the recorded processes (jitmaps.h). Processes are noted as
 * their records arrive (children through their FORK and COMM records, running targets
 * through the synthesized ones); the maps are copied at the end, once the command has
 * exited, since runtimes write theirs as they compile, and OpenJDK's -XX:+DumpPerfMapAtExit
 * only at exit. Each copy is written beside and renamed into place, so a reader never sees
 * half a map. A process that ends without a map in /tmp is forgotten (rec_jitmaps_prune),
 * so that what is held is bounded by the live processes and the JIT ones.
 */
#include "record/jitmaps.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "perf/keep.h"
#include "perf/perf.h"

/* Records are drained every 50 ms or so, after the process may have written its map, and
 * file times lag the clock by a tick: a map this much older than the first record is still
 * the recording's. */
#define SINCE_SLACK_S 2

/* The index of a process in order, with this bit while it is gone (its EXIT came, and no
 * FORK of the same pid since). */
#define GONE 0x80000000u

static void note_gone(struct rec_jitmaps *j, const uint8_t *body)
{
	uint32_t id[4]; /* pid, ppid, tid, ptid */
	memcpy(id, body, sizeof(id));
	uint32_t i = idmap_get(&j->pids, id[0]);
	if (id[0] != id[2] || i == IDMAP_NONE || i & GONE)
		return; /* a thread, a process not held, or one marked already */
	uint32_t *slot = vec_push_raw((void **)&j->gone, &j->ngone, &j->capgone, sizeof(*slot));
	if (slot) {
		*slot = id[0];
		idmap_put(&j->pids, id[0], i | GONE); /* replaces the value */
	}
}

void rec_jitmaps_note(struct rec_jitmaps *j, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	if ((h->type != PERF_RECORD_COMM && h->type != PERF_RECORD_FORK &&
	     h->type != PERF_RECORD_EXIT && h->type != PERF_RECORD_MMAP &&
	     h->type != PERF_RECORD_MMAP2) ||
	    size < sizeof(*h) + 16)
		return;
	const uint8_t *body = (const uint8_t *)rec + sizeof(*h);
	if (h->type == PERF_RECORD_EXIT) {
		note_gone(j, body);
		return;
	}
	uint32_t pid;
	memcpy(&pid, body, 4);
	uint32_t i = pid == UINT32_MAX ? 0 : idmap_get(&j->pids, pid);
	if (i != IDMAP_NONE) {
		if (i & GONE && h->type == PERF_RECORD_FORK) /* the pid taken again */
			idmap_put(&j->pids, pid, i & ~GONE);
		return;
	}
	if (j->n >= REC_JITMAPS_MAX) {
		j->dropped++;
		return;
	}
	if (!j->n)
		clock_gettime(CLOCK_REALTIME, &j->since);
	uint32_t *slot = vec_push_raw((void **)&j->order, &j->n, &j->cap, sizeof(*j->order));
	if (!slot || idmap_put(&j->pids, pid, (uint32_t)(j->n - 1))) {
		if (slot)
			j->n--;
		return; /* out of memory: that process's map is read from /tmp, as perf does */
	}
	*slot = pid;
}

/* The pid in the name of a VM registry (tally-vm-PID-N.dump) or of a perf map
 * (perf-PID.map), as a process writes them to /tmp; false for any other name. */
static bool registry_pid(const char *name, unsigned *pid)
{
	unsigned agent;
	int end = 0;
	return sscanf(name, "tally-vm-%u-%u.dump%n", pid, &agent, &end) == 2 && !name[end];
}

static bool map_pid(const char *name, unsigned *pid)
{
	int end = 0;
	return sscanf(name, "perf-%u.map%n", pid, &end) == 1 && !name[end];
}

static void forget(struct rec_jitmaps *j, uint32_t pid)
{
	uint32_t i = idmap_get(&j->pids, pid);
	if (i == IDMAP_NONE || !(i & GONE))
		return; /* forgotten already, or the pid taken again */
	i &= ~GONE;
	idmap_del(&j->pids, pid);
	uint32_t last = j->order[--j->n];
	if (i < j->n) {
		j->order[i] = last;
		uint32_t was = idmap_get(&j->pids, last);
		idmap_put(&j->pids, last, i | (was & GONE)); /* replaces the value */
	}
}

void rec_jitmaps_prune(struct rec_jitmaps *j)
{
	if (!j->ngone)
		return;
	/* Marked 1 while a gone process may have left something in /tmp. */
	struct idmap keep = { 0 };
	for (size_t i = 0; i < j->ngone; i++)
		if (idmap_put(&keep, j->gone[i], 0)) {
			idmap_free(&keep);
			return; /* out of memory: pruned another time */
		}
	DIR *d = opendir("/tmp");
	if (!d) {
		idmap_free(&keep);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned pid;
		if (!map_pid(e->d_name, &pid) && !registry_pid(e->d_name, &pid))
			continue;
		if (idmap_get(&keep, pid) != IDMAP_NONE)
			idmap_put(&keep, pid, 1);
	}
	closedir(d);
	for (size_t i = 0; i < j->ngone; i++) {
		uint32_t pid = j->gone[i], at = idmap_get(&j->pids, pid);
		if (at == IDMAP_NONE || !(at & GONE))
			continue; /* listed twice, or the pid taken again */
		if (idmap_get(&keep, pid) == 0)
			forget(j, pid);
		else /* it left a file: held from now on, as it is never gone again */
			idmap_put(&j->pids, pid, at & ~GONE);
	}
	idmap_free(&keep);
	j->ngone = 0;
}

/* Whether name is a file rec_jitmaps_keep copies: perf-PID.map or tally-vm-PID-N.dump. */
static bool is_kept_name(const char *name)
{
	size_t n = strlen(name);
	return (!strncmp(name, "perf-", 5) && n > 9 && !strcmp(name + n - 4, ".map")) ||
	       perf_vm_registry_name(name);
}

/* Removes the copies an earlier recording to the same output left in dir. A registry
 * written there during this recording (the agent's jit_dir may be DATA.jit itself) is
 * this recording's. */
static void clear_old(const struct rec_jitmaps *j, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	struct stat st;
	while ((e = readdir(d))) {
		if (!is_kept_name(e->d_name))
			continue;
		if (perf_vm_registry_name(e->d_name) && !fstatat(dirfd(d), e->d_name, &st, 0) &&
		    st.st_mtim.tv_sec >= j->since.tv_sec - SINCE_SLACK_S)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* A copy of from at to, which appears whole or not at all (atomic_file). */
static int copy_file(const char *from, const char *to)
{
	struct afile *a = NULL;
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int rc = afile_open(to, 0, &a);
	char buf[65536];
	ssize_t got;
	while (!rc && (got = read(in, buf, sizeof(buf))) != 0) {
		if (got < 0 || write(afile_fd(a), buf, (size_t)got) != got)
			rc = errno ? -errno : -EIO;
	}
	close(in);
	if (rc) {
		afile_abort(a);
		return rc;
	}
	return afile_commit(a);
}

/* Whether a file of pid's in /tmp (its perf map, a registry) is the noted process's own. */
static bool is_own(const struct rec_jitmaps *j, uint32_t pid, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return false;
	if (st->st_mtim.tv_sec >= j->since.tv_sec - SINCE_SLACK_S)
		return true;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM; /* still running: nobody reused it */
}

/* Copies /tmp/NAME, pid's, into dir (made on the first copy). */
static void keep_file(const struct rec_jitmaps *j, uint32_t pid, const char *name,
		      const char *dir, bool *made)
{
	char from[320], to[4400];
	struct stat st;
	snprintf(from, sizeof(from), "/tmp/%s", name);
	if (stat(from, &st) || !is_own(j, pid, &st))
		return;
	if (!*made && mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "tally: %s: cannot keep the perf maps: %s\n", dir, strerror(errno));
		return;
	}
	*made = true;
	snprintf(to, sizeof(to), "%s/%s", dir, name);
	int rc = copy_file(from, to);
	if (rc) {
		fprintf(stderr, "tally: %s: cannot keep a copy of %s: %s\n", dir, from,
			strerror(-rc));
	}
}

/* The noted process's VM registries in /tmp: tally-vm-PID-N.dump for any N. */
static void keep_registries(const struct rec_jitmaps *j, const char *dir, bool *made)
{
	DIR *d = opendir("/tmp");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned pid;
		if (!registry_pid(e->d_name, &pid) || idmap_get(&j->pids, pid) == IDMAP_NONE)
			continue;
		keep_file(j, pid, e->d_name, dir, made);
	}
	closedir(d);
}

void rec_jitmaps_keep(const struct rec_jitmaps *j, const char *output)
{
	char dir[4096];
	if (perf_jit_dir(output, dir, sizeof(dir)))
		return;
	clear_old(j, dir);
	bool made = false;
	for (size_t i = 0; i < j->n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "perf-%u.map", j->order[i]);
		keep_file(j, j->order[i], name, dir, &made);
	}
	if (j->n)
		keep_registries(j, dir, &made);
	rmdir(dir); /* when empty: a recording without JIT code leaves nothing beside it */
}

void rec_jitmaps_free(struct rec_jitmaps *j)
{
	idmap_free(&j->pids);
	free(j->order);
	free(j->gone);
	memset(j, 0, sizeof(*j));
}
