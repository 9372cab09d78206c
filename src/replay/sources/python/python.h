/*
 * The CPython frame source: the Python frames tally record captured at each sample's
 * instant (bpf-output payloads, handed over in time order through the record op) spliced,
 * as PROF_PYTHON frames, in place of the _PyEval_EvalFrameDefault activations that ran
 * them. A sample with activations of the eval loop but none of these spliced keeps its
 * native frames, counted by reason.
 */
#ifndef TALLY_REPLAY_SOURCES_PYTHON_H
#define TALLY_REPLAY_SOURCES_PYTHON_H

#include <stdbool.h>
#include <stdint.h>

#include "replay/sources/source.h"

/* How the Python frames of a recording went. */
struct replay_python_stats {
	uint64_t records;      /* Python stack records read */
	uint64_t samples;      /* samples with Python frames */
	uint64_t frames;       /* Python frames, over all samples */
	uint64_t inconsistent; /* runs of Python frames and eval activations disagreed */
	uint64_t code_unknown; /* a frame's code object had no record */
	uint64_t unrecorded;   /* eval activations, but no stack record of the thread */
	uint64_t cut;          /* stacks the capture cut short (outer activations stay native) */
	uint64_t read_failed;  /* samples whose stack record says a read failed: its frames up
				* to there spliced (none after a cycle), the rest native */
	uint64_t between;      /* sampled in the eval loop between frames (at a frame's start
				* or end, before the thread shows it or after): that activation
				* stays native, the runs go to the ones outside it */
	uint64_t malformed;    /* payloads not understood, left out */
	/* samples whose thread held its interpreter's GIL, and did not (read by the capture:
	 * threads with a thread state) */
	uint64_t gil_held, gil_not_held;
};

/* The source for d, its outcomes counted in *stats (NULL: its own, which become its
 * counters), which must outlive the source. out->ops is NULL when d has no bpf-output
 * event. 0, or -ENOMEM with the message set. */
int replay_python_source_new(const struct perf_data *d, struct replay_python_stats *stats,
			     struct replay_frame_source *out);
extern const struct replay_source_type replay_python_source;

#endif
