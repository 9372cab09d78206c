/*
 * Profiling an instruction run by the Solana runtime: the profiler registers itself as the
 * runtime's observer (solana/runtime.h), watches the instruction's program from its start
 * and nests the programs it invokes (CPI) under their invoke syscalls, and builds the
 * profile when the instruction ends, while the programs it borrows still exist.
 */
#ifndef TALLY_CUPROF_RUNTIME_WATCH_H
#define TALLY_CUPROF_RUNTIME_WATCH_H

#include "solana/runtime.h"

struct prof;

/* Ownership: profile (the result, NULL until the instruction ended) is the caller's to
 * free with prof_free; cuprof_watch_release frees the rest. */
struct cuprof_watch {
	struct sol_observer observer; /* what to hand the runtime */
	struct cuprof *pr;
	struct prof *profile;
};

void cuprof_watch_init(struct cuprof_watch *w);
/* Frees the profiler when the instruction did not end (tally failed); not the profile. */
void cuprof_watch_release(struct cuprof_watch *w);

#endif
