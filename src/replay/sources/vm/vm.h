/*
 * The agent's VM frame source (mixed mode, include/tally/agent.h): the VM frames of the
 * loop records found in each sample's stack copy, checked against the agents' registries,
 * as PROF_VM frames in place of the native frame holding the record. Each loop record
 * found either becomes VM frames or leaves its native frame in place, counted by reason.
 */
#ifndef TALLY_REPLAY_SOURCES_VM_H
#define TALLY_REPLAY_SOURCES_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "replay/sources/source.h"

/* How the VM frames of a recording went; present once a loop record was found (a registry
 * in the directory alone changes no output: registries of other runs may lie in /tmp). */
struct replay_vm_stats {
	bool present;
	uint64_t samples;	   /* stacks with VM frames */
	uint64_t frames;	   /* VM frames, over all samples */
	uint64_t malformed;	   /* a record of another layout version */
	uint64_t changing;	   /* sampled while the loop pushed or popped a frame */
	uint64_t empty;		   /* a record with no frame pushed yet (or any more) */
	uint64_t too_deep;	   /* deeper than its frames array */
	uint64_t unreadable;	   /* its frames outside the stack copy */
	uint64_t no_registry;	   /* no tally-vm-PID-N.dump for it */
	uint64_t unknown_function; /* a frame's function not in the registry */
	uint64_t pc_outside;	   /* a pc outside its frame's function */
};

/* The source for d: registries are tally-vm-PID-N.dump in perf_jit_dir(d->path) when that
 * directory exists, else in /tmp; outcomes counted in *stats (NULL: its own, which become
 * its counters), which must outlive the source. out->ops is NULL when no registry is
 * there. 0, or a negative code with the message set. */
int replay_vm_source_new(struct perf_data *d, struct replay_vm_stats *stats,
			 struct replay_frame_source *out);
extern const struct replay_source_type replay_vm_source;

#endif
