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

/* Ownership: the pids seen; rec_jitmaps_free releases them. Zeroed: empty. */
struct rec_jitmaps {
	struct idmap pids;     /* a set: every pid maps to 0 */
	uint32_t *order;       /* the pids in the order seen */
	size_t n, cap;
	struct timespec since; /* when the first was seen */
};

/* Notes the process of a COMM, FORK, EXIT or MMAP record (as the kernel wrote it). */
void rec_jitmaps_note(struct rec_jitmaps *j, const void *rec, size_t size);
/* Copies /tmp/perf-PID.map and /tmp/tally-vm-PID-N.dump of every process noted into
 * perf_jit_dir(output), after removing the copies an earlier recording left there; a
 * file older than the recording of a process that is gone is not its own (a pid reused)
 * and is left out. Failures are
 * warnings on stderr: the recording stands without them. */
void rec_jitmaps_keep(const struct rec_jitmaps *j, const char *output);
void rec_jitmaps_free(struct rec_jitmaps *j);

#endif
