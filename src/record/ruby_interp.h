/*
 * Ruby frames for tally record's ptrace sampler (record/interp.h): the interpreter type
 * src/record/interps.c lists, whose processes' threads are read by record/ruby_walk.h.
 */
#ifndef TALLY_RECORD_RUBY_INTERP_H
#define TALLY_RECORD_RUBY_INTERP_H

#include <stdint.h>

#include "record/interp.h"

/* The reader of process pid, whose mapping of path (libruby) starts at start with file
 * offset pgoff: 0 with *out set; 1: not libruby; negative with the message set (a Ruby
 * version without a table: the recording keeps native frames only). */
int rec_ruby_open(uint32_t pid, const char *path, uint64_t start, uint64_t pgoff,
		  struct rec_interp_proc *out);

extern const struct rec_interp_type rec_ruby_interp;

#endif
