/*
 * Processes' address spaces as a recording's records describe them, for replay and for
 * tally record's live unwinding alike, so that both follow one set of rules: each process
 * (pid) has its own unw_space; a mapping record adds to it (the kernel's own image, pid -1,
 * to none); a fork copies the parent's space into the child's; an exec empties the space
 * before the new image's mappings arrive. Records must be given in time order.
 *
 * Ownership: the procs own their spaces; spaces borrow modules from the unw_ctx given to
 * unw_procs_map, which must outlive them. Not thread-safe.
 */
#ifndef TALLY_UNWIND_PROCS_H
#define TALLY_UNWIND_PROCS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/idmap.h"
#include "base/vec.h"
#include "unwind/unwind.h"

struct unw_proc {
	uint32_t pid;
	bool sampled; /* the user's mark (replay counts sampled processes); kept over exec */
	struct unw_space space;
};

struct unw_procs {
	struct idmap index; /* pid -> v[] */
	VEC(struct unw_proc) v;
};

/* pid's process, made empty when new; NULL when out of memory. The pointer holds until the
 * next call that may add a process. */
struct unw_proc *unw_procs_get(struct unw_procs *p, uint32_t pid);
/* A mapping record of pid (MMAP, MMAP2): pid UINT32_MAX, the kernel's image, is ignored. */
int unw_procs_map(struct unw_ctx *c, struct unw_procs *p, uint32_t pid, uint64_t start,
		  uint64_t len, uint64_t pgoff, uint32_t prot, const char *path);
/* pid exec'd (COMM with PERF_RECORD_MISC_COMM_EXEC, from its main thread). */
int unw_procs_exec(struct unw_procs *p, uint32_t pid);
/* A FORK record: a new process (pid != ppid) starts with a copy of its parent's space. */
int unw_procs_fork(struct unw_procs *p, uint32_t pid, uint32_t ppid);
/* pid is gone: its space is freed (its modules no longer named by it), and a later record
 * of pid starts a new, empty one. Pointers from unw_procs_get no longer hold. */
void unw_procs_exit(struct unw_procs *p, uint32_t pid);
void unw_procs_free(struct unw_procs *p);

#endif
