/*
 * A thread's CPython frames read from user space (ptrace mode, ptrace_sampler.h): the walk
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
#include "record/interp.h"

/* The code objects of one process whose code record was written (their address, name
 * and line-table pointers, as the BPF program's seen map keys them), bounded: when full
 * it starts over, which only writes some code records twice. Owns its table;
 * rec_pyseen_free releases it. Zeroed: empty. */
struct rec_pyseen {
	uint64_t *keys; /* 3 words a slot, all zero when free */
	size_t n, cap;
};

void rec_pyseen_free(struct rec_pyseen *s);

/* Reads the frames of thread tid of process pid (native_tid: what its thread state
 * holds, the kernel tid or, with PY_CFG_THREAD_POINTER, the thread's FS base) and emits
 * them (a thread without a thread state: an empty stack). *tstate: the thread state found
 * at the thread's last walk, tried first, and updated (0: none known). Each record as its
 * payload, the code records a stack names first. What emit returned (0 when all were
 * emitted). */
int rec_pywalk(const struct py_proc_cfg *cfg, const struct rec_mem *mem,
	       struct rec_pyseen *seen, uint32_t pid, uint32_t tid, uint64_t native_tid,
	       uint64_t *tstate, rec_interp_emit_fn emit, void *arg);

/* The reader of a CPython process for ptrace mode, with its configuration: 0, or -ENOMEM
 * with the message set. */
int rec_python_interp(const struct py_proc_cfg *cfg, struct rec_interp_proc *out);

#endif
