/*
 * The perf maps (perf-PID.map) and agent VM registries (tally-vm-PID-N.dump) of the
 * processes a session recorded, kept with the recording: the files in /tmp can be gone, or
 * rewritten by a later process of the same pid, by the time the recording is read (see
 * jitmaps.c, docs/jit.md and docs/agent.md).
 */
#ifndef TALLY_RECORD_JITMAPS_H
#define TALLY_RECORD_JITMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/idmap.h"
#include "record/record.h"

/* Ownership: the pids noted; rec_jitmaps_free releases them. Zeroed: empty. */
struct rec_jitmaps {
	struct idmap pids;     /* pid -> its index in order */
	uint32_t *order;       /* the pids */
	size_t n, cap;
	uint32_t *gone;        /* pids whose EXIT came, not yet pruned */
	size_t ngone, capgone;
	uint64_t dropped;      /* processes not noted: REC_JITMAPS_MAX were (record.h) */
	struct timespec since; /* when the first was seen */
};

/* Notes the process of a COMM, FORK, EXIT or MMAP record (as the kernel wrote it); a
 * process's EXIT marks it gone. */
void rec_jitmaps_note(struct rec_jitmaps *j, const void *rec, size_t size);
/* Forgets the processes gone that left no perf map or registry in /tmp (one look at /tmp
 * for all of them), so that a recording of a machine that runs processes by the million
 * holds only the live ones and the JIT ones. */
void rec_jitmaps_prune(struct rec_jitmaps *j);
/* Copies /tmp/perf-PID.map and /tmp/tally-vm-PID-N.dump of every process noted into
 * perf_jit_dir(output), after removing the copies an earlier recording left there; a
 * file older than the recording of a process that is gone is not its own (a pid reused)
 * and is left out. Failures are
 * warnings on stderr: the recording stands without them. */
void rec_jitmaps_keep(const struct rec_jitmaps *j, const char *output);
void rec_jitmaps_free(struct rec_jitmaps *j);

#endif
