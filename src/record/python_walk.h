/*
 * A thread's CPython frames read from user space (ptrace mode, python_ptrace.c): the walk
 * bpf/python_stack.bpf.c does in the kernel, driven by the same struct py_proc_cfg and
 * writing the same records (perf/interp_records.h), through a read function (the target
 * stopped, read with process_vm_readv; a byte image in the fuzz target). The target's
 * memory is input: every read is bounded, every count capped, and a read that fails ends
 * the stack with PERF_PY_STACK_READ_FAILED.
 */
#ifndef TALLY_RECORD_PYTHON_WALK_H
#define TALLY_RECORD_PYTHON_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "perf/interp_records.h"
#include "record/bpf/python_abi.h"

/* Reads n bytes of the target at addr into buf: 0, or -1 when any of them is unreadable. */
struct rec_pymem {
	int (*read)(void *arg, uint64_t addr, void *buf, size_t n);
	void *arg;
};

/* The read of a live process's memory, with process_vm_readv: arg is its pid, cast as
 * (void *)(uintptr_t)pid. 0 when all n bytes were read, else -EIO. */
int rec_pymem_read_process(void *arg, uint64_t addr, void *buf, size_t n);

/* The code objects of one process whose code record was written (their address, name
 * and line-table pointers, as the BPF program's seen map keys them), bounded: when full
 * it starts over, which only writes some code records twice. Owns its table;
 * rec_pyseen_free releases it. Zeroed: empty. */
struct rec_pyseen {
	uint64_t *keys; /* 3 words a slot, all zero when free */
	size_t n, cap;
};

void rec_pyseen_free(struct rec_pyseen *s);

/* Each record as its payload (a stack or code record), in the order a reader needs them:
 * the code records a stack names first. A non-zero return stops the walk and is returned. */
typedef int (*rec_pyemit_fn)(const void *payload, size_t size, void *arg);

/* Reads the frames of thread tid of process pid (native_tid: what its thread state
 * holds, the kernel tid or, with PY_CFG_THREAD_POINTER, the thread's FS base) and emits
 * them (a thread without a thread state: an empty stack). *tstate: the thread state found
 * at the thread's last walk, tried first, and updated (0: none known). What emit returned
 * (0 when all were emitted). */
int rec_pywalk(const struct py_proc_cfg *cfg, const struct rec_pymem *mem,
	       struct rec_pyseen *seen, uint32_t pid, uint32_t tid, uint64_t native_tid,
	       uint64_t *tstate, rec_pyemit_fn emit, void *arg);

#endif
