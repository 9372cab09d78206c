/*
 * The seam for interpreters read at the sample in ptrace mode (the lead's
 * record/interp.h, copied here until it lands on main, where this copy goes).
 */
#ifndef TALLY_RECORD_INTERP_H
#define TALLY_RECORD_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* Reads n bytes of the target at addr into buf: 0, or -1 when any is unreadable. */
struct rec_mem {
	int (*read)(void *arg, uint64_t addr, void *buf, size_t n);
	void *arg;
};
/* process_vm_readv of the process whose pid is arg ((void *)(uintptr_t)pid). */
int rec_mem_read_process(void *arg, uint64_t addr, void *buf, size_t n);

/* Receives one interpreter record's payload; a non-zero return stops the walk and is
 * returned by it. */
typedef int (*rec_interp_emit_fn)(const void *payload, size_t size, void *arg);

/* The thread being sampled, stopped (ptrace) while walk runs. */
struct rec_interp_thread {
	uint32_t pid, tid;
	uint64_t native_tid;
	const struct user_regs_struct *regs;
	uint64_t *cache;
};

struct rec_interp_ops {
	int (*walk)(void *self, const struct rec_mem *mem, const struct rec_interp_thread *th,
		    rec_interp_emit_fn emit, void *arg);
	void (*regen)(void *self);
	void (*free)(void *self);
};
struct rec_interp_proc {
	const struct rec_interp_ops *ops;
	void *self;
};

struct rec_interp_type {
	const char *name;
	bool (*may_be)(const char *path);
	int (*open)(uint32_t pid, const char *path, uint64_t start, uint64_t pgoff,
		    struct rec_interp_proc *out);
};

#endif
