/*
 * A frame source: what names the unwound frames of a sample. The namer (namer.h) asks its
 * sources in turn about each unwound frame, from the outermost in; the first that claims
 * the frame names it, and the ELF source, always last, names whatever the others leave. A
 * source names a frame by pushing frames in its place, outermost first: the function and
 * its inline frames (ELF), a run of frames spliced in where the native one was (an
 * interpreter's eval loop becoming the script's frames, a JIT region becoming its method),
 * or nothing (the frame dropped). A source sees the whole sample (registers, stack copy,
 * callchain) and all its unwound frames, so it may also read state that only the moment of
 * the sample holds, and it is offered the recording's other records in time order.
 *
 * A new kind of code is a new source: a folder or file here with its struct
 * replay_source_type, and one line in sources.c.
 */
#ifndef TALLY_REPLAY_SOURCES_SOURCE_H
#define TALLY_REPLAY_SOURCES_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"
#include "replay/frames.h"
#include "replay/unwound.h"
#include "unwind/unwind.h"

/* Receives one of a source's counters: name (a string that lives as long as the program)
 * and its value. */
typedef void replay_count_fn(void *arg, const char *name, uint64_t value);

struct replay_frame_source_ops {
	/* Names st->frames[i] (0: the innermost, at the sampled pc; i + 1 is its caller) by
	 * pushing frames onto out. 1: named; 0: not this source's, the next one is asked;
	 * negative: an error (its message set) that ends the replay. */
	int (*name_frame)(void *self, const struct replay_stack *st, size_t i,
			  struct replay_frames *out);
	/* Called before the frames of each stack are named, with the stack (NULL: not
	 * needed): a source that splices by the whole sample decides there. 0 or negative. */
	int (*begin_stack)(void *self, const struct replay_stack *st);
	/* Offered every record that is no sample of cost (see replay_unwind_each), in time
	 * order among the stacks (NULL: not needed). 0 or negative, which ends the replay. */
	int (*record)(void *self, const struct perf_event_rec *ev);
	/* Before a sample is unwound: brings the unwinding space s of the sample's process up
	 * to the sample's time with what the source knows that the recording's records do not
	 * tell the unwinder (the CFI of code a JIT wrote). NULL: not needed. 0, or a negative
	 * code with the message set, which ends the replay. */
	int (*before_unwind)(void *self, struct unw_ctx *c, struct unw_space *s,
			     const struct perf_event_rec *ev);
	/* Hands what the source counted to count, in the order a report lists them, once the
	 * last stack is named (NULL: it counts nothing). These become the profile's counters. */
	void (*counters)(void *self, replay_count_fn *count, void *arg);
	/* Whether the thread of the stack last given to begin_stack held its interpreter's
	 * lock at the sample, as the source read it then (NULL: a source of code without
	 * one). */
	enum prof_gil (*gil)(void *self);
	/* Frees self; NULL when there is nothing to free. */
	void (*close)(void *self);
	/* The names depend on more than each frame's module and address (on the moment of the
	 * sample): stacks are then named anew every time instead of taken from the memo. */
	bool per_sample;
};

struct replay_frame_source {
	const struct replay_frame_source_ops *ops;
	void *self;
};

/* A kind of frame source, as sources.c lists them. */
struct replay_source_type {
	/* The source for the recording d, or out->ops NULL when d has nothing for it. 0, or a
	 * negative code with the message set. */
	int (*open)(struct perf_data *d, struct replay_frame_source *out);
};

#endif
