/*
 * What recording sessions share besides their events: records synthesized for processes
 * that were running before the events existed (COMM per thread, MMAP2 per mapping, as
 * perf record -p writes them), and the accounting of each record on its way into the
 * perf.data (samples, lost, throttled, bytes; executable mappings noted for build-ids).
 */
#ifndef TALLY_RECORD_SIDEBAND_H
#define TALLY_RECORD_SIDEBAND_H

#include <stddef.h>

#include "record/modules.h"
#include "record/record.h"

typedef int (*rec_emit_fn)(const void *rec, size_t size, void *arg);

/* Calls fn for every thread of process pid listed in /proc/PID/task; stops at the first
 * error. -ESRCH "no process PID" when there is no such process. */
int rec_each_task(int pid, int (*fn)(int pid, int tid, void *arg), void *arg);
/* A COMM record for thread tid of pid, from /proc, handed to emit. */
int rec_synth_comm(int pid, int tid, rec_emit_fn emit, void *arg);
/* A COMM record naming thread tid of pid name (at most 79 bytes) from time on: tally's
 * own, with a name longer than the kernel's 15 bytes where it has one. */
int rec_synth_named(int pid, int tid, const char *name, uint64_t time, rec_emit_fn emit,
		    void *arg);
/* An MMAP2 record for each executable or file-backed mapping of pid. */
int rec_synth_maps(int pid, rec_emit_fn emit, void *arg);
/* Counts rec (as the kernel wrote it) into res and notes executable mappings in m. */
void rec_account(struct rec_result *res, struct rec_modules *m, const void *rec, size_t size);

#endif
