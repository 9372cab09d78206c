/*
 * A thread's Ruby frames read from user space while the thread is stopped (the ptrace
 * sampler, record/interp.h), written as the records of perf/interp_records.h's Ruby
 * section: the thread's execution context from its thread-local ruby_current_ec, the
 * control frames from its cfp to the end of its VM stack (an array: no chain to lie
 * with, but bounded by the stack the context claims), each iseq frame's instruction
 * sequence and pc, each C function's method entry. The target's memory is input: every
 * read is bounded, every count capped, and what does not fit the shapes ends the stack
 * with PERF_RB_STACK_READ_FAILED or empties a name (PERF_RB_NAME_READ_FAILED).
 */
#ifndef TALLY_RECORD_RUBY_WALK_H
#define TALLY_RECORD_RUBY_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "perf/interp_records.h"
#include "record/interp.h"
#include "ruby/lib.h"

/* One Ruby process being read: its libruby's facts and load bias, and the iseqs and
 * method entries whose records were written (bounded: when full it starts over, which
 * only writes some records twice). Owns its table; rec_rb_proc_free releases it. */
struct rec_rb_proc {
	struct rb_lib lib;
	uint64_t bias;   /* libruby's load bias in the process */
	uint64_t modid;  /* libruby's TLS module id, read at the first walk (0: not yet) */
	uint64_t *seen;  /* 2 words a slot: the address and its second key; zero: free */
	size_t nseen;
	void *scratch;   /* the walk's buffers (some 300 KiB), made at the first walk */
	/* iseq bodies' iseq_encoded and iseq_size by (iseq, body): a frame's iseq and body
	 * are read each time, the body's fields only when new (direct-mapped) */
	struct rec_rb_body { uint64_t iseq, body, encoded, size; } bodies[256];
};

void rec_rb_proc_free(struct rec_rb_proc *p);
/* Forgets the records written: the next walks write them again. */
void rec_rb_proc_regen(struct rec_rb_proc *p);

/* Reads the Ruby frames of thread th (stopped) and emits them: the records of the iseqs and
 * C method entries new to the process, then the stack (empty for a thread without an
 * execution context). *th->cache: the address of the thread's ruby_current_ec, found at
 * its first walk. What emit returned (0 when all were emitted; -ENOMEM when the buffers
 * could not be made). */
int rec_rb_walk(struct rec_rb_proc *p, const struct rec_mem *mem,
		const struct rec_interp_thread *th, rec_interp_emit_fn emit, void *arg);

#endif
