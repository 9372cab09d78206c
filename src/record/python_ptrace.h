/*
 * Python frames without BPF (docs/python.md, "Without privileges"): the processes of a
 * session that run CPython are sampled by tally itself through ptrace, each sampled thread
 * stopped while its registers, a copy of its stack and its Python frames are read, then let
 * go. Its samples are written as the kernel would write the session's CPU samples (same
 * attribute, registers and stack copy for the DWARF unwinder), each after the Python
 * records of its instant (perf/interp_records.h, under an attribute of their own like the
 * BPF program's bpf-output events), so that replay and perf script read them alike. The
 * kernel's CPU samples of such a process, from the moment it is taken over, are left out.
 */
#ifndef TALLY_RECORD_PYTHON_PTRACE_H
#define TALLY_RECORD_PYTHON_PTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/perf.h"
#include "record/bpf/python_abi.h"

/* The processes traced, their threads, and what ptrace mode counted. Ownership: everything;
 * rec_pytrace_free detaches from every thread still traced and releases it. */
struct rec_pytrace;

/* A sampler whose threads are sampled every period_ns of their CPU time (at the next tick
 * they are found running), its samples laid out by sample_attr (the session's, whose
 * sample_type must begin with PERF_SAMPLE_IDENTIFIER). */
int rec_pytrace_new(const struct perf_event_attr *sample_attr, uint64_t period_ns,
		    struct rec_pytrace **out);
void rec_pytrace_free(struct rec_pytrace *t);

/* The timer to poll: readable at each tick (every period_ns), when rec_pytrace_tick is due. */
int rec_pytrace_fd(const struct rec_pytrace *t);

/* Takes process pid over (every thread seized) with its interpreter's configuration: 0, or
 * a negative code with the message set (not allowed to trace it, gone). */
int rec_pytrace_start(struct rec_pytrace *t, uint32_t pid, const struct py_proc_cfg *cfg);
/* Lets process pid go (each thread detached), from now on sampled by the kernel again. */
void rec_pytrace_stop(struct rec_pytrace *t, uint32_t pid);

/* Forgets which code objects were written, so that each is written again at its next
 * use (the next file of a rotating recording). */
void rec_pytrace_regen(struct rec_pytrace *t);

/* Emits one record (whole, header first) into the recording. */
typedef int (*rec_pytrace_emit_fn)(const void *rec, size_t size, void *arg);

/* At a tick: reads the timer, handles what the traced threads reported (signals passed on,
 * new threads, exits, execs) and samples each thread due, its samples carrying sample_id
 * (an id of the session's sampling events). child: the command tally started (0: none);
 * when it has ended, true with *status as waitpid gives it (the waits of traced threads
 * and the command's are one: tally's waitpid would take the reports meant for the tracer). */
bool rec_pytrace_tick(struct rec_pytrace *t, uint64_t sample_id, pid_t child, int *status,
		      rec_pytrace_emit_fn emit, void *arg);
/* The same without sampling: between ticks, and after the recording while the command
 * runs on. */
bool rec_pytrace_reap(struct rec_pytrace *t, pid_t child, int *status);

/* Whether a CPU sample of the kernel's (its identifier first) is of a process ptrace
 * mode sampled at the sample's time: the sample is then left out. */
bool rec_pytrace_replaces(const struct rec_pytrace *t, const void *rec, size_t size);

/* The Python records' attribute and its one identifier, and whether a record is one. */
const struct perf_event_attr *rec_pytrace_attr(const struct rec_pytrace *t);
const uint64_t *rec_pytrace_ids(const struct rec_pytrace *t, size_t *n);
bool rec_pytrace_owns(const struct rec_pytrace *t, const void *rec, size_t size);

/* Samples taken, the time their threads were held stopped for them (ns, by the clock,
 * from when tally saw the stop to the resume), and tally's CPU time taking them (ns). */
void rec_pytrace_counters(const struct rec_pytrace *t, uint64_t *samples, uint64_t *stopped_ns,
			  uint64_t *cpu_ns);

#endif
