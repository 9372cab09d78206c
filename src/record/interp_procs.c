/*
 * The processes of other interpreters (interp_procs.h). A kind is recognised by the file a
 * process maps executable (its interpreter binary or library), as CPython's are
 * (python.h), and read only in ptrace mode: as root too, since tally's BPF program reads
 * CPython alone.
 */
#include "record/interp_procs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "record/lua_interp.h"
#include "record/modules.h"
#include "record/ruby_interp.h"

/* The kinds, tried in turn on each executable mapping. */
static const struct rec_interp_type *const types[] = {
	&rec_ruby_interp,
	&rec_lua_interp,
	NULL,
};

struct rec_interp_procs_proc {
	uint32_t pid;
	const struct rec_interp_type *type;
	char *path; /* the file it was found by, for a fork's child */
	uint64_t start, pgoff;
};

void rec_interp_procs_init(struct rec_interp_procs *ip, struct rec_ptrace *trace,
			   const struct rec_opts *o)
{
	memset(ip, 0, sizeof(*ip));
	ip->trace = trace;
	ip->o = o;
}

/* Whether the options leave kind type in (--no-ruby, --no-lua). */
static bool wanted(const struct rec_interp_procs *ip, const struct rec_interp_type *type)
{
	if (!ip->o)
		return true;
	return !(type == &rec_ruby_interp && ip->o->no_ruby) &&
	       !(type == &rec_lua_interp && ip->o->no_lua);
}

static struct rec_interp_procs_proc *find(const struct rec_interp_procs *ip, uint32_t pid)
{
	for (size_t i = 0; i < ip->nprocs; i++)
		if (ip->procs[i].pid == pid)
			return &ip->procs[i];
	return NULL;
}

/* Warns once per file, about the first process found with it. */
static void warn(struct rec_interp_procs *ip, uint32_t pid, const char *path, const char *what)
{
	for (size_t i = 0; i < ip->nwarned; i++)
		if (!strcmp(ip->warned[i], path))
			return;
	char *copy = strdup(path);
	char **slot = copy ? vec_push_raw((void **)&ip->warned, &ip->nwarned, &ip->capwarned,
					  sizeof(*slot))
			   : NULL;
	if (slot)
		*slot = copy;
	else
		free(copy);
	fprintf(stderr, "tally record: warning: process %u (%s): %s; recording its native frames "
			"only\n", pid, path, what);
}

static void stop(struct rec_interp_procs *ip, uint32_t pid)
{
	struct rec_interp_procs_proc *p = find(ip, pid);
	if (!p)
		return;
	rec_ptrace_stop(ip->trace, pid);
	free(p->path);
	*p = ip->procs[--ip->nprocs];
}

/* Opens kind type's reader of process pid and hands it to the sampler: whether the file
 * was this kind's. */
static bool start(struct rec_interp_procs *ip, const struct rec_interp_type *type, uint32_t pid,
		  const char *path, uint64_t start, uint64_t pgoff)
{
	struct rec_interp_proc reader;
	int r = type->open(pid, path, start, pgoff, &reader);
	if (r == 1)
		return false;
	if (!r && !ip->trace) {
		reader.ops->free(reader.self);
		r = err_set(-ENOSYS, "%s frames are read in ptrace mode, which this recording's "
				     "options leave out", type->name);
	}
	struct rec_interp_procs_proc *p = NULL;
	if (!r) {
		char *copy = strdup(path);
		p = copy ? vec_push_raw((void **)&ip->procs, &ip->nprocs, &ip->capprocs,
					sizeof(*p))
			 : NULL;
		if (!p) {
			free(copy);
			reader.ops->free(reader.self);
			r = err_set(-ENOMEM, "out of memory");
		} else {
			*p = (struct rec_interp_procs_proc){ pid, type, copy, start, pgoff };
			r = rec_ptrace_start(ip->trace, pid, reader);
		}
	}
	if (r) {
		if (p)
			stop(ip, pid);
		if (r != -ESRCH) /* not one that ended meanwhile */
			warn(ip, pid, path, err_msg());
		err_clear();
		return true;
	}
	ip->seen++;
	return true;
}

static void note_mmap(struct rec_interp_procs *ip, const struct rec_mmap *mm)
{
	if (mm->path[0] != '/' || find(ip, mm->pid))
		return;
	for (size_t i = 0; types[i]; i++)
		if (wanted(ip, types[i]) && types[i]->may_be(mm->path) &&
		    start(ip, types[i], mm->pid, mm->path, mm->start, mm->pgoff))
			return;
}

/* FORK and EXIT: u32 pid, ppid, tid, ptid. */
static void note_task(struct rec_interp_procs *ip, uint32_t type, const uint8_t *body)
{
	uint32_t id[4];
	memcpy(id, body, sizeof(id));
	if (id[0] != id[2]) /* a thread, not a process */
		return;
	if (type == PERF_RECORD_EXIT) {
		stop(ip, id[0]);
		return;
	}
	const struct rec_interp_procs_proc *parent = find(ip, id[1]);
	if (parent && id[0] != id[1] && !find(ip, id[0])) {
		struct rec_interp_procs_proc from = *parent; /* start may move the table */
		start(ip, from.type, id[0], from.path, from.start, from.pgoff);
	}
}

void rec_interp_procs_note(struct rec_interp_procs *ip, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	struct rec_mmap mm;
	if (size < sizeof(*h) + 16)
		return;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (rec_mmap_of(rec, size, &mm))
			note_mmap(ip, &mm);
		return;
	case PERF_RECORD_COMM:
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
			uint32_t pid;
			memcpy(&pid, (const uint8_t *)rec + sizeof(*h), 4);
			stop(ip, pid);
		}
		return;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		note_task(ip, h->type, (const uint8_t *)rec + sizeof(*h));
		return;
	}
}

void rec_interp_procs_free(struct rec_interp_procs *ip)
{
	for (size_t i = 0; i < ip->nprocs; i++)
		free(ip->procs[i].path);
	for (size_t i = 0; i < ip->nwarned; i++)
		free(ip->warned[i]);
	free(ip->procs);
	free(ip->warned);
	memset(ip, 0, sizeof(*ip));
}
