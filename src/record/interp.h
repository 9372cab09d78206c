/*
 * The seam between the sampler that stops threads (ptrace_sampler.h) and the readers of an
 * interpreter's frames: what a reader is given at a sample (the stopped thread and a way
 * to read its process's memory), what it gives back (its records, perf/interp_records.h),
 * and how a kind of interpreter is recognised in a process (interp_procs.h lists them).
 * CPython's reader is one (python_walk.h), used when its BPF program may not be loaded;
 * other interpreters are read only this way.
 */
#ifndef TALLY_RECORD_INTERP_H
#define TALLY_RECORD_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#include <linux/perf_event.h>

/* Reads n bytes of the target at addr into buf: 0, or -1 when any of them is unreadable.
 * The bytes are input like any file's: a reader checks what it reads. */
struct rec_mem {
	int (*read)(void *arg, uint64_t addr, void *buf, size_t n);
	void *arg;
};

/* The read of a live process's memory, with process_vm_readv: arg is its pid, cast as
 * (void *)(uintptr_t)pid. 0 when all n bytes were read, else -EIO. */
int rec_mem_read_process(void *arg, uint64_t addr, void *buf, size_t n);

/* The attribute of the interpreter records' samples. */
void rec_interp_output_attr(struct perf_event_attr *a);

/* Receives one record's payload (code or name records before the stack record that needs
 * them); a non-zero return stops the walk, which returns it. */
typedef int (*rec_interp_emit_fn)(const void *payload, size_t size, void *arg);

/* The thread being sampled, stopped while it is read. */
struct rec_interp_thread {
	uint32_t pid, tid;                   /* in tally's pid namespace */
	uint64_t native_tid;                 /* its tid in its own pid namespace */
	const struct user_regs_struct *regs; /* at the stop (fs_base: its TLS block) */
	uint64_t *cache;                     /* the reader's word for this thread, kept
					      * from sample to sample (0 at first) */
};

struct rec_interp_ops {
	/* Emits the records of the thread's interpreter frames at this instant: 0, or what
	 * emit returned. */
	int (*walk)(void *self, const struct rec_mem *mem, const struct rec_interp_thread *th,
		    rec_interp_emit_fn emit, void *arg);
	/* Forgets which code records were written, so that each is written again at its
	 * next use (the next file of a rotating recording). */
	void (*regen)(void *self);
	void (*free)(void *self);
};

/* The reader of one process's interpreter. Ownership: self, freed by ops->free. */
struct rec_interp_proc {
	const struct rec_interp_ops *ops;
	void *self;
};

/* A kind of interpreter other than CPython (whose processes python.h finds). */
struct rec_interp_type {
	const char *name; /* for messages: "Ruby", "Lua" */
	/* Whether a file mapped executable, by its path, may hold this interpreter: cheap
	 * (the name), open decides. */
	bool (*may_be)(const char *path);
	/* The reader of process pid, which maps file path at start (file offset pgoff)
	 * executable: 0 with *out set; 1: not this interpreter after all; negative: an error
	 * with its message set (an unknown version), and the process keeps native frames. */
	int (*open)(uint32_t pid, const char *path, uint64_t start, uint64_t pgoff,
		    struct rec_interp_proc *out);
};

#endif
