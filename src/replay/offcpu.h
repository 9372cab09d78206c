/*
 * Off-CPU intervals of a recording made with tally record --off-cpu: its second event is
 * the sched_switch tracepoint, sampled as each followed thread goes off CPU (with the
 * stack it blocked in), and the first event's context-switch records say when the thread
 * ran again. A pass over the records before the replay pairs them: each switch sample's
 * interval is the time from the sample to its thread's next switch-in.
 */
#ifndef TALLY_REPLAY_OFFCPU_H
#define TALLY_REPLAY_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "perf/perf.h"

struct replay_offcpu;

/* *out NULL when d is not such a recording. 0, or a negative code with the message set. */
int replay_offcpu_scan(struct perf_data *d, struct replay_offcpu **out);
/* Whether ev is a sample of the switch event. */
bool replay_offcpu_is_switch(const struct replay_offcpu *o, const struct perf_event_rec *ev);
/* The nanoseconds the thread of switch sample ev stayed off CPU; 0 when it never ran
 * again within the recording (it exited, or the recording ended first). */
uint64_t replay_offcpu_ns(const struct replay_offcpu *o, const struct perf_event_rec *ev);
void replay_offcpu_free(struct replay_offcpu *o);

#endif
