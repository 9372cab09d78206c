/*
 * The Ruby frame source: the Ruby frames tally record read at each sample (the ptrace
 * sampler's records, perf/interp_records.h's Ruby section, handed over in time order
 * through the record op) spliced, as PROF_RUBY frames, in place of the VM's native frames
 * that ran them. A sample with rb_vm_exec activations but none of these spliced keeps its
 * native frames, counted by reason.
 */
#ifndef TALLY_REPLAY_SOURCES_RUBY_RUBY_H
#define TALLY_REPLAY_SOURCES_RUBY_RUBY_H

#include <stdint.h>

#include "replay/sources/source.h"

/* How the Ruby frames of a recording went. */
struct replay_ruby_stats {
	uint64_t records;      /* stack records read */
	uint64_t samples;      /* samples with Ruby frames */
	uint64_t frames;       /* Ruby frames, over all samples */
	uint64_t inconsistent; /* groups of Ruby frames and rb_vm_exec activations disagreed */
	uint64_t unknown;      /* a frame's iseq or method entry had no record */
	uint64_t unrecorded;   /* rb_vm_exec activations, but no stack record of the thread */
	uint64_t cut;          /* stacks cut at the cap (outer activations stay native) */
	uint64_t read_failed;  /* stacks whose record says a read failed */
	uint64_t nested_c;     /* C methods called from C methods, left out of the splice */
	uint64_t malformed;    /* records not understood, left out */
};

/* The source for d, its outcomes counted in *stats (NULL: its own, which become its
 * counters), which must outlive it. out->ops is NULL when d has no records attribute. */
int replay_ruby_source_new(const struct perf_data *d, struct replay_ruby_stats *stats,
			   struct replay_frame_source *out);
extern const struct replay_source_type replay_ruby_source;

#endif
