/*
 * The exact CU profiler of sBPF runs: a calling-context tree built from the VM's hooks
 * with profile's event builder (prof_cct), with the exact CU of every node and every pc,
 * turned into a src/profile profile (metric cu/count) that every report output takes.
 *
 * During the run it records only what the VM says: function entries keyed by (parent,
 * call-site pc, target), syscalls as leaves with their own cost, and per-pc instruction
 * counts in the builder's dense array per node (the VM reports runs of consecutive pcs,
 * two adds each however long). Its hooks bring a trace of their own (struct sbpf_trace),
 * so syscalls reach it as entries of the VM's trace rather than as hook calls, and the
 * VMs of a CPI share it. Symbols are looked up after the run: each node
 * becomes its function's frame, below the inline frames of its call site (the call-site
 * pc decides which inlined function made the call), and each pc's CU lands in the
 * innermost inline frame at that pc.
 *
 * Invariant: the sum of self CU over all nodes equals the CU the run consumed (checked by
 * cuprof_build; a mismatch is an internal error, never silently accepted).
 *
 * Ownership: borrows the programs, which must outlive the profiler.
 */
#ifndef TALLY_CUPROF_PROFILER_H
#define TALLY_CUPROF_PROFILER_H

#include <stdint.h>

#include "sbpf/vm.h"

struct prof;
struct cuprof;

int cuprof_new(const struct sbpf_program *prog, struct cuprof **out);
void cuprof_free(struct cuprof *pr);
/* The hooks to attach with sbpf_vm_set_hooks() before the run. */
const struct sbpf_hooks *cuprof_hooks(struct cuprof *pr);
/* Cross-program invocation: a syscall (the current event) runs another program in a VM of
 * its own, with the same hooks (cuprof_hooks) attached. Call enter before that VM
 * runs and exit after it ended, however it ended. The callee's frames nest under the
 * syscall, below a `program:NAME` frame; the syscall keeps only its own cost (what it
 * charged beyond the callee's CU). name NULL: the program's name; path: its file, for
 * symbols (NULL: none). A program is known by its struct sbpf_program pointer, which must
 * outlive the profiler. */
int cuprof_enter_program(struct cuprof *pr, const struct sbpf_program *prog,
			 const char *name, const char *path);
int cuprof_exit_program(struct cuprof *pr);
/* A builtin program (no sBPF: the System program) invoked by the current syscall, which
 * took cu for it: a `program:NAME` leaf under the syscall holding cu, which the syscall's
 * own cost no longer does. */
int cuprof_builtin(struct cuprof *pr, const char *name, uint64_t cu);
/* CU recorded so far (instructions and syscall costs). */
uint64_t cuprof_total(const struct cuprof *pr);
/* After the run: checks the invariant against cu_used and builds a finished profile.
 * path is the program's file (symbols, DWARF, the module of the frames), NULL when it has
 * none (raw bytecode given in memory). */
int cuprof_build(struct cuprof *pr, const char *path, uint64_t cu_used,
		 struct prof **out);

#endif
