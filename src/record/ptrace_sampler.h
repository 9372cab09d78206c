/*
 * Ptrace mode (docs/python.md, "Without privileges"): the processes of a session whose
 * interpreter frames are read from user space (CPython's without BPF, every other
 * interpreter's always: interp.h) are sampled by tally itself through ptrace, each sampled
 * thread stopped while its registers, a copy of its stack and its interpreter's frames
 * are read, then let go. Its samples are written as the kernel would write the session's
 * CPU samples (same attribute, registers and stack copy for the DWARF unwinder), each after
 * the interpreter's records of its instant (perf/interp_records.h, under an attribute of
 * their own like the BPF program's bpf-output events), so that replay and perf script read
 * them alike. The kernel's CPU samples of such a process, from the moment it is taken
 * over, are left out.
 */
#ifndef TALLY_RECORD_PTRACE_SAMPLER_H
#define TALLY_RECORD_PTRACE_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/perf.h"
#include "record/interp.h"

/* The processes traced, their threads, and what ptrace mode counted. Ownership: everything;
 * rec_ptrace_free detaches from every thread still traced and releases it. */
struct rec_ptrace;

/* A sampler whose threads are sampled every period_ns of their CPU time (at the next tick
 * they are found running), its samples laid out by sample_attr (the session's, whose
 * sample_type must begin with PERF_SAMPLE_IDENTIFIER). */
int rec_ptrace_new(const struct perf_event_attr *sample_attr, uint64_t period_ns,
		    struct rec_ptrace **out);
void rec_ptrace_free(struct rec_ptrace *t);

/* The command tally started (0: none). Set before any process is taken over: any wait of
 * the sampler's may take the command's end (a process that exits as it is seized), which
 * is then kept for rec_ptrace_tick to hand back. */
void rec_ptrace_set_child(struct rec_ptrace *t, pid_t child);

/* The timer to poll: readable at each tick (every period_ns from the first process taken
 * over), when rec_ptrace_tick is due. */
int rec_ptrace_fd(const struct rec_ptrace *t);

/* Takes process pid over (every thread seized), its frames read by ip (owned from now on,
 * whatever the outcome): 0, or a negative code with the message set (not allowed to trace
 * it, gone). */
int rec_ptrace_start(struct rec_ptrace *t, uint32_t pid, struct rec_interp_proc ip);
/* Whether any process was taken over (the ticks have begun). */
bool rec_ptrace_started(const struct rec_ptrace *t);
/* Lets process pid go (each thread detached), from now on sampled by the kernel again. */
void rec_ptrace_stop(struct rec_ptrace *t, uint32_t pid);

/* Forgets which code records were written, so that each is written again at its next
 * use (the next file of a rotating recording). */
void rec_ptrace_regen(struct rec_ptrace *t);

/* Emits one record (whole, header first) into the recording. */
typedef int (*rec_ptrace_emit_fn)(const void *rec, size_t size, void *arg);

/* At a tick: reads the timer, handles what the traced threads reported (signals passed on,
 * new threads, exits, execs) and samples each thread due, its samples carrying sample_id
 * (an id of the session's sampling events). child: the command tally started (0: none);
 * when it has ended, true with *status as waitpid gives it (the waits of traced threads
 * and the command's are one: tally's waitpid would take the reports meant for the tracer). */
bool rec_ptrace_tick(struct rec_ptrace *t, uint64_t sample_id, pid_t child, int *status,
		      rec_ptrace_emit_fn emit, void *arg);
/* The same without sampling: between ticks, and after the recording while the command
 * runs on. */
bool rec_ptrace_reap(struct rec_ptrace *t, pid_t child, int *status);

/* Whether a CPU sample of the kernel's (its identifier first) is of a process ptrace
 * mode sampled at the sample's time: the sample is then left out. */
bool rec_ptrace_replaces(const struct rec_ptrace *t, const void *rec, size_t size);

/* The interpreter records' attribute and its one identifier, and whether a record is one. */
const struct perf_event_attr *rec_ptrace_attr(const struct rec_ptrace *t);
const uint64_t *rec_ptrace_ids(const struct rec_ptrace *t, size_t *n);
bool rec_ptrace_owns(const struct rec_ptrace *t, const void *rec, size_t size);

/* Samples taken, the time their threads were held stopped for them (ns, by the clock,
 * from when tally saw the stop to the resume), and tally's CPU time taking them (ns). */
void rec_ptrace_counters(const struct rec_ptrace *t, uint64_t *samples, uint64_t *stopped_ns,
			  uint64_t *cpu_ns);

#endif
