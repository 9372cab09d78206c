/*
 * Keeping the perf maps and agent VM registries (tally-vm-PID-N.dump, the agent's mixed
 * mode) of the recorded processes (jitmaps.h). Processes are noted as
 * their records arrive (children through their FORK and COMM records, running targets
 * through the synthesized ones); the maps are copied at the end, once the command has
 * exited, since runtimes write theirs as they compile, and OpenJDK's -XX:+DumpPerfMapAtExit
 * only at exit. Each copy is written beside and renamed into place, so a reader never sees
 * half a map.
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
#include "base/vec.h"
#include "perf/keep.h"
#include "perf/perf.h"

/* Records are drained every 50 ms or so, after the process may have written its map, and
 * file times lag the clock by a tick: a map this much older than the first record is still
 * the recording's. */
#define SINCE_SLACK_S 2

void rec_jitmaps_note(struct rec_jitmaps *j, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	if ((h->type != PERF_RECORD_COMM && h->type != PERF_RECORD_FORK &&
	     h->type != PERF_RECORD_EXIT && h->type != PERF_RECORD_MMAP &&
	     h->type != PERF_RECORD_MMAP2) ||
	    size < sizeof(*h) + 4)
		return;
	uint32_t pid;
	memcpy(&pid, (const uint8_t *)rec + sizeof(*h), 4);
	if (pid == UINT32_MAX || idmap_get(&j->pids, pid) != IDMAP_NONE)
		return;
	if (!j->n)
		clock_gettime(CLOCK_REALTIME, &j->since);
	uint32_t *slot = vec_push_raw((void **)&j->order, &j->n, &j->cap, sizeof(*j->order));
	if (!slot || idmap_put(&j->pids, pid, 0)) {
		if (slot)
			j->n--;
		return; /* out of memory: that process's map is read from /tmp, as perf does */
	}
	*slot = pid;
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
		unsigned pid, agent;
		int end = 0;
		if (sscanf(e->d_name, "tally-vm-%u-%u.dump%n", &pid, &agent, &end) != 2 ||
		    e->d_name[end] ||
		    idmap_get(&j->pids, pid) == IDMAP_NONE)
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
	j->order = NULL;
	j->n = j->cap = 0;
}
