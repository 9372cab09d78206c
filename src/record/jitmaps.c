/*
 * Keeping the perf maps of the recorded processes (jitmaps.h). Processes are noted as
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

#include "base/vec.h"
#include "perf/perf.h"
#include "replay/replay.h"

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
	if (pid == UINT32_MAX || replay_idmap_get(&j->pids, pid) != REPLAY_IDMAP_NONE)
		return;
	if (!j->n)
		clock_gettime(CLOCK_REALTIME, &j->since);
	uint32_t *slot = vec_push_raw((void **)&j->order, &j->n, &j->cap, sizeof(*j->order));
	if (!slot || replay_idmap_put(&j->pids, pid, 0)) {
		if (slot)
			j->n--;
		return; /* out of memory: that process's map is read from /tmp, as perf does */
	}
	*slot = pid;
}

/* Removes the maps an earlier recording to the same output left in dir. */
static void clear_old(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (!strncmp(e->d_name, "perf-", 5) && n > 9 && !strcmp(e->d_name + n - 4, ".map"))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;
	if (in < 0 || (out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		rc = -errno;
	char buf[65536];
	ssize_t got;
	while (!rc && (got = read(in, buf, sizeof(buf))) != 0) {
		if (got < 0 || write(out, buf, (size_t)got) != got)
			rc = errno ? -errno : -EIO;
	}
	if (out >= 0 && close(out) && !rc)
		rc = -errno;
	if (in >= 0)
		close(in);
	return rc;
}

/* Whether /tmp/perf-PID.map at path is the noted process's own. */
static bool is_own(const struct rec_jitmaps *j, uint32_t pid, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return false;
	if (st->st_mtim.tv_sec >= j->since.tv_sec - SINCE_SLACK_S)
		return true;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM; /* still running: nobody reused it */
}

static void keep_one(const struct rec_jitmaps *j, uint32_t pid, const char *dir, bool *made)
{
	char from[64], to[4200], tmp[4210];
	struct stat st;
	snprintf(from, sizeof(from), "/tmp/perf-%u.map", pid);
	if (stat(from, &st) || !is_own(j, pid, &st))
		return;
	if (!*made && mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "tally: %s: cannot keep the perf maps: %s\n", dir, strerror(errno));
		return;
	}
	*made = true;
	snprintf(to, sizeof(to), "%s/perf-%u.map", dir, pid);
	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	int rc = copy_file(from, tmp);
	if (!rc && rename(tmp, to))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		fprintf(stderr, "tally: %s: cannot keep a copy of %s: %s\n", dir, from,
			strerror(-rc));
	}
}

void rec_jitmaps_keep(const struct rec_jitmaps *j, const char *output)
{
	char dir[4096];
	if (replay_jit_dir(output, dir, sizeof(dir)))
		return;
	clear_old(dir);
	bool made = false;
	for (size_t i = 0; i < j->n; i++)
		keep_one(j, j->order[i], dir, &made);
	rmdir(dir); /* when empty: a recording without JIT code leaves nothing beside it */
}

void rec_jitmaps_free(struct rec_jitmaps *j)
{
	replay_idmap_free(&j->pids);
	free(j->order);
	j->order = NULL;
	j->n = j->cap = 0;
}
