/*
 * Off-CPU recording: the sched:sched_switch tracepoint of every followed thread, sampled
 * at each switch with the user registers, stack copy and kernel callchain of the thread
 * going off CPU; the CPU event's context-switch records give the moment it comes back.
 * No BPF. Replay charges each interval to the stack (replay/offcpu.c).
 */
#ifndef TALLY_RECORD_OFFCPU_H
#define TALLY_RECORD_OFFCPU_H

#include "perf/perf.h"

/* Turns cpu (the CPU-sampling event, already set up) into the first event of an off-CPU
 * recording (context-switch records, sample identifiers) and fills sw with the
 * sched_switch event that goes beside it, mounting tracefs where it is not mounted (as
 * perf does). 0, or a negative code with a message that says what to change. */
int rec_offcpu_setup(struct perf_event_attr *cpu, struct perf_event_attr *sw);
/* Gives w the event's format (perf's tracing data), for perf script. */
int rec_offcpu_write_format(struct perf_writer *w);

#endif
