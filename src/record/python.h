/*
 * Python frames at the sample instant (docs/python.md, "Recording Python frames"): the BPF
 * program of bpf/python_stack.bpf.c loaded and attached to a session's sampling events,
 * its per-CPU bpf-output events writing into the session's rings (a second event
 * attribute in the perf.data), and the processes it reads: those that map a CPython 3.11
 * interpreter, found from the session's mmap records as they arrive.
 */
#ifndef TALLY_RECORD_PYTHON_H
#define TALLY_RECORD_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/interp_records.h"
#include "perf/perf.h"
#include "record/record.h"
#include "record/bpf/python_abi.h"

/* The loaded program, its maps and output events. Owns them; rec_python_close frees. */
struct rec_python;

/* Loads the program. 0, or a negative code with the message saying why (no privileges,
 * no BPF in the kernel). */
int rec_python_open(struct rec_python **out);
void rec_python_close(struct rec_python *p);

/* Runs the program at every overflow of the sampling event perf_fd (and of the events it
 * is inherited into). */
int rec_python_attach(struct rec_python *p, int perf_fd);
/* Opens a bpf-output event on each of the n CPUs cpu[], its records going into the ring
 * of ring_fd[] (whose events must use the same clock as sample_attr). */
int rec_python_outputs(struct rec_python *p, const int *cpu, const int *ring_fd, int n);
/* The bpf-output events' attribute and ids, for the perf.data. */
const struct perf_event_attr *rec_python_attr(const struct rec_python *p);
const uint64_t *rec_python_ids(const struct rec_python *p, size_t *n);
/* Whether a sample record (its PERF_SAMPLE_IDENTIFIER first) comes from them. */
bool rec_python_owns(const struct rec_python *p, const void *rec, size_t size);

/* Starts or stops reading the frames of process pid (in tally's pid namespace). */
int rec_python_set(struct rec_python *p, uint32_t pid, const struct py_proc_cfg *cfg);
void rec_python_unset(struct rec_python *p, uint32_t pid);
/* The program's counters, summed over the CPUs. */
void rec_python_counters(const struct rec_python *p, struct py_counters *sum);

/* The processes of a session whose Python frames are read: every mapping of a CPython
 * interpreter (its executable or libpython) starts them, an exec or exit stops them, a
 * fork passes them on. Interpreter files are checked and their layouts loaded once each.
 * Problems are one warning each on stderr (no BPF, no debug information: what to do), and
 * the recording goes on with native frames. Ownership: everything it holds, bpf included;
 * rec_pyprocs_free releases it. Zeroed and bpf NULL: capture unavailable, why says why. */
struct rec_pyprocs {
	struct rec_python *bpf;
	char *why;            /* why there is no bpf (warned about when Python shows up) */
	bool warned_why;
	struct rec_pyfile *files;
	size_t nfiles, capfiles;
	struct rec_pyproc *procs;
	size_t nprocs, capprocs;
	uint64_t seen;        /* processes whose frames were read */
	uint32_t gen;         /* of the last process started */
	bool awaited;         /* the command is an interpreter (preload) not read yet */
};

/* Loads the program (failing quietly: the reason is kept for a warning if it matters). */
void rec_pyprocs_init(struct rec_pyprocs *pp);
/* Checks the command about to run (found as execvp would), loading its layout now when it
 * is an interpreter: its first samples then have Python frames, not only those after the
 * debug information was read. Sets awaited until a process is read, so that the session
 * drains soon enough for the interpreter's mapping. */
void rec_pyprocs_preload(struct rec_pyprocs *pp, const char *cmd);
/* Notes a record on its way into the perf.data (MMAP2, COMM, FORK, EXIT: the others are
 * passed over). */
void rec_pyprocs_note(struct rec_pyprocs *pp, const void *rec, size_t size);
/* Stops reading every process and unloads the program (its events stay attached but find
 * no process to read). */
void rec_pyprocs_disable(struct rec_pyprocs *pp);
void rec_pyprocs_free(struct rec_pyprocs *pp);

/* The time of a sample's Python records, made its own: the kernel takes a sample's time
 * before the program runs (6.x: perf_prepare_sample() comes first), so the records the
 * program writes carry a later time than their sample, which follows them in the ring.
 * Each ring's records from the program are held until the ring's next record: when that
 * is the CPU sample of the stack's thread they take its time (the file then says which
 * sample a stack belongs to: the one of the same thread and time); a stack whose sample
 * never came (lost) is dropped, code records are kept as they are. Ownership: the held
 * records; rec_pypair_free releases them. Zeroed: empty. */
struct rec_pypair {
	uint8_t *buf; /* records held, whole, in ring order */
	size_t n, cap;
	uint32_t tid; /* of the stack record held; 0 when none */
	uint64_t dropped; /* stacks whose sample never came */
};

/* Counts a record of the bpf-output events into res (stacks, code objects, bytes). */
void rec_python_account(struct rec_result *res, const void *rec, size_t size);
/* Passes rec (from the ring of pp; from the program's events when ours) on to emit,
 * holding it or what came before as above. */
int rec_pypair_add(struct rec_pypair *pp, bool ours, const void *rec, size_t size,
		   int (*emit)(const void *rec, size_t size, void *arg), void *arg);
/* Passes on what is held (at the end of the session). */
int rec_pypair_flush(struct rec_pypair *pp, int (*emit)(const void *rec, size_t size,
							  void *arg), void *arg);
void rec_pypair_free(struct rec_pypair *pp);

#endif
