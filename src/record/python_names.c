/*
 * Python's names of the threads of the processes whose frames are read (python.h, struct
 * rec_pynames): the process's threading._active is walked (cpython/thread_names.h) in its
 * memory, read with process_vm_readv (as root, or as a user who may ptrace it); a walk
 * finds the names of all its threads at once.
 *
 * A thread's first name is read at its first sample (while a short-lived thread still
 * runs), and written after the round of draining the rings that follows the round that
 * sample came in (by then every sample of it timed before is in: the rings are drained in
 * turn, and one CPU's may hold samples older than another's), or at its exit if sooner,
 * timed just before its earliest sample seen: all of its samples carry the name, and the
 * COMM comes after its FORK record (which gives a thread its parent's name). A thread not
 * in _active yet (threading adds it a few bytecodes after it starts) is looked for again
 * at the next rounds, a few times. Later walks, every 250 ms while the process is sampled,
 * catch renames, timed just before the sample that called for them. Only threads tally saw
 * sampled are named, and only in processes in tally's own pid namespace
 * (Thread._native_id is the tid in the process's).
 */
#include "record/python.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "base/vec.h"
#include "cpython/thread_names.h"
#include "record/python_walk.h"
#include "record/sideband.h"

#define NS 1000000000ull
/* A process is walked again when this much has passed since its last walk (a rename
 * shows this soon); a thread no walk found is looked for at this many rounds. */
#define RENAME_NS (NS / 4)
#define MAX_TRIES 4
/* Walks per second over all processes: a bound on tally's reads (a walk is some 28 reads
 * per thread, 40 us for four; the first of a process also finds threading in sys.modules,
 * a read per module: 100-170 us for a small script). */
#define MAX_WALKS 50
/* Threads named per walk, and known at once. */
#define MAX_NAMES 256
#define MAX_KNOWN (1u << 16)

struct rec_pynames_proc {
	uint32_t pid;
	bool foreign;       /* in another pid namespace: not named */
	bool pending;       /* some thread of it awaits its first name */
	struct cpy_layout layout;
	uint64_t runtime;   /* _PyRuntime's address */
	struct cpy_threading threading; /* active 0: not found yet */
	uint64_t walked;    /* the sample time of its last walk, 0 none */
};

struct rec_pynames_thread {
	uint32_t pid, tid;
	bool found;                     /* by a walk */
	bool pending;                   /* awaits its first name (read or not) */
	uint8_t tries;                  /* walks that did not find it */
	uint32_t round;                 /* the round its first sample came in */
	uint64_t first;                 /* the time of its earliest sample seen */
	char seen[CPY_THREAD_NAME_MAX]; /* the name read last, "" none */
	char name[CPY_THREAD_NAME_MAX]; /* the name written last, "" none */
};

static bool same_pidns(uint32_t pid)
{
	char path[64];
	struct stat mine, theirs;
	snprintf(path, sizeof(path), "/proc/%u/ns/pid", pid);
	return !stat("/proc/self/ns/pid", &mine) && !stat(path, &theirs) &&
	       mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

static struct rec_pynames_proc *proc_of(struct rec_pynames *pn, uint32_t pid,
					const struct cpy_layout *l, uint64_t runtime)
{
	for (size_t i = 0; i < pn->nprocs; i++)
		if (pn->procs[i].pid == pid)
			return &pn->procs[i];
	struct rec_pynames_proc *p =
		vec_push_raw((void **)&pn->procs, &pn->nprocs, &pn->capprocs, sizeof(*p));
	if (p)
		*p = (struct rec_pynames_proc){ .pid = pid, .foreign = !same_pidns(pid),
						.layout = *l, .runtime = runtime };
	return p;
}

static struct rec_pynames_thread *thread_of(struct rec_pynames *pn, uint32_t pid,
					    uint32_t tid, bool add)
{
	uint32_t at = idmap_get(&pn->index, tid);
	if (at != IDMAP_NONE)
		return pn->threads[at].pid == pid ? &pn->threads[at] : NULL;
	if (!add || pn->nthreads >= MAX_KNOWN ||
	    idmap_put(&pn->index, tid, (uint32_t)pn->nthreads))
		return NULL;
	struct rec_pynames_thread *t =
		vec_push_raw((void **)&pn->threads, &pn->nthreads, &pn->capthreads, sizeof(*t));
	if (!t) {
		idmap_del(&pn->index, tid);
		return NULL;
	}
	*t = (struct rec_pynames_thread){ .pid = pid, .tid = tid };
	return t;
}

static void forget_thread(struct rec_pynames *pn, uint32_t tid)
{
	uint32_t at = idmap_get(&pn->index, tid);
	if (at == IDMAP_NONE)
		return;
	idmap_del(&pn->index, tid);
	pn->threads[at] = pn->threads[--pn->nthreads];
	if (at < pn->nthreads && idmap_put(&pn->index, pn->threads[at].tid, at))
		pn->threads[at].tid = 0; /* unreachable now: never named again */
}

static void forget_proc(struct rec_pynames *pn, uint32_t pid)
{
	for (size_t i = 0; i < pn->nprocs; i++)
		if (pn->procs[i].pid == pid)
			pn->procs[i--] = pn->procs[--pn->nprocs];
	for (size_t i = pn->nthreads; i-- > 0;)
		if (pn->threads[i].pid == pid)
			forget_thread(pn, pn->threads[i].tid);
}

/* Whether the second's budget allows one more walk. */
static bool may_walk(struct rec_pynames *pn, uint64_t time)
{
	if (time < pn->window || time - pn->window >= NS) {
		pn->window = time;
		pn->walks = 0;
	}
	return pn->walks < MAX_WALKS && ++pn->walks;
}

/* Reads the names of p's threads into those tally knows (seen). */
static void read_names(struct rec_pynames *pn, struct rec_pynames_proc *p, uint64_t time)
{
	static struct cpy_thread_name names[MAX_NAMES]; /* tally records on one thread */
	uint32_t pid = p->pid;
	void *target = (void *)(uintptr_t)pid;
	const struct cpy_layout *l = &p->layout;
	int n = 0;
	p->walked = time;
	if (p->threading.active ||
	    !cpy_threading_find(l, p->runtime, rec_mem_read_process, target, &p->threading))
		n = cpy_thread_names(l, &p->threading, rec_mem_read_process, target, names, MAX_NAMES);
	if (n < 0)
		p->threading.active = 0; /* found again at the next walk */
	for (int i = 0; i < n; i++) {
		struct rec_pynames_thread *t = thread_of(pn, pid, names[i].tid, false);
		if (t && t->tid != pid) {
			t->found = true;
			memcpy(t->seen, names[i].name, sizeof(t->seen));
		}
	}
}

/* Writes the names of p's threads read that differ from those written: with first, of the
 * threads whose first name is due (timed before their earliest sample), else of the
 * others (timed before time). */
static int write_names(struct rec_pynames *pn, struct rec_pynames_proc *p, uint64_t time,
		       bool first, int (*emit)(const void *rec, size_t size, void *arg),
		       void *arg)
{
	for (size_t k = 0; k < pn->nthreads; k++) {
		struct rec_pynames_thread *t = &pn->threads[k];
		if (t->pid != p->pid || !t->found || t->pending != first ||
		    (first && t->round >= pn->round) || !strcmp(t->name, t->seen))
			continue;
		t->pending = false;
		memcpy(t->name, t->seen, sizeof(t->name));
		int r = rec_synth_named((int)p->pid, (int)t->tid, t->name,
					(first ? t->first : time) - 1, emit, arg);
		if (r)
			return r;
	}
	return 0;
}

int rec_pynames_sample(struct rec_pynames *pn, const struct cpy_layout *l, uint64_t runtime,
		       uint32_t pid, uint32_t tid, uint64_t time,
		       int (*emit)(const void *rec, size_t size, void *arg), void *arg)
{
	if (pid == tid || !time)
		return 0;
	if (time > pn->now)
		pn->now = time;
	struct rec_pynames_thread *t = thread_of(pn, pid, tid, true);
	struct rec_pynames_proc *p = t ? proc_of(pn, pid, l, runtime) : NULL;
	if (!p || p->foreign)
		return 0;
	if (t->pending && time < t->first) {
		t->first = time;
	} else if (!t->name[0] && !t->pending && t->tries < MAX_TRIES) {
		/* read now, while a short-lived thread still runs; written when due */
		t->pending = p->pending = true;
		t->round = pn->round;
		t->first = time;
		if (may_walk(pn, time))
			read_names(pn, p, time);
		return 0;
	}
	/* samples come from the CPUs' rings in turn: time may be before the last walk's */
	if (!t->found || time <= p->walked || time - p->walked < RENAME_NS || !may_walk(pn, time))
		return 0;
	read_names(pn, p, time);
	return write_names(pn, p, time, false, emit, arg);
}

int rec_pynames_round(struct rec_pynames *pn,
		      int (*emit)(const void *rec, size_t size, void *arg), void *arg)
{
	int r = 0;
	for (size_t i = 0; i < pn->nprocs && !r; i++) {
		struct rec_pynames_proc *p = &pn->procs[i];
		bool due = false, unread = false;
		for (size_t k = 0; p->pending && k < pn->nthreads; k++) {
			const struct rec_pynames_thread *t = &pn->threads[k];
			if (t->pid == p->pid && t->pending && t->round < pn->round) {
				due = true;
				unread |= !t->found;
			}
		}
		if (!due)
			continue;
		if (unread && may_walk(pn, pn->now))
			read_names(pn, p, pn->now);
		r = write_names(pn, p, pn->now, true, emit, arg);
		p->pending = false;
		for (size_t k = 0; k < pn->nthreads; k++) {
			struct rec_pynames_thread *t = &pn->threads[k];
			if (t->pid != p->pid || !t->pending)
				continue;
			/* found with the kernel's name already, or not found at all */
			if (t->round < pn->round && (t->found || ++t->tries >= MAX_TRIES))
				t->pending = false;
			p->pending |= t->pending;
		}
	}
	pn->round++;
	return r;
}

int rec_pynames_note(struct rec_pynames *pn, const void *rec, size_t size,
		     int (*emit)(const void *rec, size_t size, void *arg), void *arg)
{
	const struct perf_event_header *h = rec;
	uint32_t id[4]; /* pid, ppid, tid, ptid (EXIT); pid, tid (COMM) */
	if (size < sizeof(*h) + sizeof(id))
		return 0;
	memcpy(id, (const uint8_t *)rec + sizeof(*h), sizeof(id));
	if (h->type == PERF_RECORD_EXIT && id[0] != id[2]) {
		/* a thread that ended before its name was due: every sample of it is in */
		uint32_t at = idmap_get(&pn->index, id[2]);
		struct rec_pynames_thread *t = at == IDMAP_NONE ? NULL : &pn->threads[at];
		int r = 0;
		if (t && t->pid == id[0] && t->pending && t->found && strcmp(t->name, t->seen)) {
			memcpy(t->name, t->seen, sizeof(t->name));
			r = rec_synth_named((int)t->pid, (int)t->tid, t->name, t->first - 1, emit, arg);
		}
		forget_thread(pn, id[2]);
		return r;
	}
	if (h->type == PERF_RECORD_EXIT ||
	    (h->type == PERF_RECORD_COMM && h->misc & PERF_RECORD_MISC_COMM_EXEC))
		forget_proc(pn, id[0]);
	return 0;
}

void rec_pynames_regen(struct rec_pynames *pn)
{
	for (size_t i = 0; i < pn->nthreads; i++) {
		struct rec_pynames_thread *t = &pn->threads[i];
		t->found = t->pending = false;
		t->tries = 0;
		t->name[0] = t->seen[0] = 0;
	}
}

void rec_pynames_free(struct rec_pynames *pn)
{
	free(pn->procs);
	free(pn->threads);
	idmap_free(&pn->index);
	memset(pn, 0, sizeof(*pn));
}
