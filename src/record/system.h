/*
 * System-wide recording (tally record -a): what the whole machine was running when the
 * events were opened (every process's threads and mappings, as perf record -a
 * synthesizes them), and the message that says what to change when the machine does not
 * let tally watch every CPU.
 */
#ifndef TALLY_RECORD_SYSTEM_H
#define TALLY_RECORD_SYSTEM_H

#include "record/sideband.h"

/* A COMM record per thread and an MMAP2 record per mapping of every process in /proc
 * (processes that end meanwhile are passed over). 0, or the first error of emit. */
int rec_synth_system(rec_emit_fn emit, void *arg);
/* r from perf_open on a CPU-wide event: a permission error gets a message saying what
 * recording the whole machine needs; other codes are returned as they are. */
int rec_system_open_error(int r);

#endif
