/*
 * `tally sbpf run --sample[=HZ]`: the run profiled by the agent's sampler (include/tally/
 * agent.h) instead of the exact hooks: the VM publishes its pc, calls, returns and
 * syscalls push and pop the agent's shadow stack, the sampler streams folded stacks to a
 * temporary file, and that file, read back, is the profile (metric samples/count).
 */
#ifndef TALLY_CUPROF_SAMPLE_H
#define TALLY_CUPROF_SAMPLE_H

#include <stdint.h>

struct prof;
struct sbpf_vm;
struct sbpf_result;

/* Runs vm (of the program at path, for its symbols; NULL: none) sampled at hz. 0 with
 * *res and a finished *out, or a negative code with the message set. */
int cuprof_sample_run(struct sbpf_vm *vm, const char *path, uint32_t hz,
		      struct sbpf_result *res, struct prof **out);

#endif
