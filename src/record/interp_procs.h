/*
 * The processes of a session that run an interpreter other than CPython (the kinds
 * interp_procs.c lists, interp.h): the executable mapping of a file a kind recognises
 * starts the process's reader in the session's ptrace sampler, an exec or exit stops it,
 * a fork passes it on (the child's reader opened anew, on the parent's file). A file that
 * is one of them but cannot be read (an unknown version) is warned about once, and its
 * processes keep their native frames.
 */
#ifndef TALLY_RECORD_INTERP_PROCS_H
#define TALLY_RECORD_INTERP_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "record/ptrace_sampler.h"

/* Ownership: what it holds but the sampler (the session's); rec_interp_procs_free
 * releases it. Zeroed with trace NULL: no process is read. */
struct rec_interp_procs {
	struct rec_ptrace *trace;
	struct rec_interp_procs_proc *procs;
	size_t nprocs, capprocs;
	char **warned; /* files warned about */
	size_t nwarned, capwarned;
	uint64_t seen; /* processes whose frames were read */
};

/* Reads the processes with sampler trace (NULL: none could be made, and a process of one
 * of these interpreters is warned about). */
void rec_interp_procs_init(struct rec_interp_procs *ip, struct rec_ptrace *trace);
/* Notes a record on its way into the perf.data (MMAP2, COMM, FORK, EXIT: the others are
 * passed over). */
void rec_interp_procs_note(struct rec_interp_procs *ip, const void *rec, size_t size);
void rec_interp_procs_free(struct rec_interp_procs *ip);

#endif
