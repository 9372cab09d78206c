/*
 * Replay's second stage: unwound stacks named. A namer asks its frame sources
 * (sources/source.h) about each unwound frame, the ELF source last, and names kernel frames
 * from the kernel's symbols; replay_symbolized_data runs a whole recording through the
 * listed sources (sources/sources.c) and gives its unwind quality.
 */
#ifndef TALLY_REPLAY_NAMER_H
#define TALLY_REPLAY_NAMER_H

#include <stddef.h>
#include <stdint.h>

#include "replay/frames.h"
#include "replay/sources/source.h"
#include "replay/unwound.h"

/* One counter a frame source gave (replay_frame_source_ops.counters). */
struct replay_counted {
	const char *name;
	uint64_t value;
};

#define REPLAY_MAX_COUNTED 48

/* Unwind quality of a replay, for the header of a report. */
struct replay_quality {
	struct replay_info info;
	struct unw_stats stats;
	char stop_modules[3][64]; /* where truncated stacks ended most often */
	uint64_t stop_counts[3];
	enum unw_method method;
	/* What the frame sources counted, source by source in their order (past
	 * REPLAY_MAX_COUNTED left out). */
	struct replay_counted counted[REPLAY_MAX_COUNTED];
	size_t ncounted;
};

/* Calls fn for every sample of d with its frames unwound (method) and named by the listed
 * frame sources (sources/sources.c) then the ELF source with inline frames; kernel frames
 * from /proc/kallsyms (or the recording's copy) when a sample has some. Strings live until
 * replay_symbolized_data returns. q receives the unwind quality. */
int replay_symbolized_data(struct perf_data *d, enum unw_method method,
			   int (*fn)(const struct replay_sym_stack *st, void *arg), void *arg,
			   struct replay_quality *q);

/* Names stacks: "[truncated]" first when one was not unwound to its outermost frame, each
 * unwound frame by sources[0..n) then the ELF source, kernel frames last. The namer takes
 * the n sources over (closed by replay_namer_free, also when this fails); at most 7. */
struct replay_namer;
int replay_namer_new(const struct replay_frame_source *sources, size_t n,
		     struct replay_namer **out);
/* st named into *out; out->frames stays valid until the next call, or until the namer is
 * freed when out->id is not 0. 0, or a source's error. */
int replay_namer_name(struct replay_namer *nm, const struct replay_stack *st,
		      struct replay_sym_stack *out);
/* Offers ev to the sources that take records (replay_frame_source_ops.record). */
int replay_namer_record(struct replay_namer *nm, const struct perf_event_rec *ev);
/* The sources' counters, in their order, appended to q. */
void replay_namer_counters(const struct replay_namer *nm, struct replay_quality *q);
void replay_namer_free(struct replay_namer *nm);

#endif
