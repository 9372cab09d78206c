/*
 * Replay: a perf.data (tally's or perf's) turned into a profile. Its stages have headers
 * of their own: unwound.h (samples unwound in time order), namer.h (their frames named by
 * the frame sources of sources/, kernel symbols and unwind quality); this is what the
 * command line uses. Nothing here knows how the samples were taken, and the profile depends
 * on the file alone.
 */
#ifndef TALLY_REPLAY_H
#define TALLY_REPLAY_H

#include "perf/perf.h"
#include "unwind/unwind.h"

/* The profile of a perf.data: metrics samples/count (hits/count for recordings of probe
 * hits) and cpu/nanoseconds (clock events) or events/count, stacks unwound with method and
 * symbolized, unwind quality and the frame sources' figures as counters
 * (profile/counters.h). */
struct prof;
int replay_profile(struct perf_data *d, enum unw_method method, struct prof **out);

#endif
