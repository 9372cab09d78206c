/*
 * Python frames at the sample instant (docs/python.md, "Recording Python frames"): the BPF
 * program of bpf/python_stack.bpf.c loaded and attached to a session's sampling events,
 * its per-CPU bpf-output events writing into the session's rings (a second event
 * attribute in the perf.data), and the processes it reads: those that map a CPython 3.8-3.13
 * interpreter, found from the session's mmap records as they arrive.
 */
#ifndef TALLY_RECORD_PYTHON_H
#define TALLY_RECORD_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/idmap.h"
#include "cpython/layout.h"
#include "perf/interp_records.h"
#include "perf/perf.h"
#include "record/record.h"
#include "record/bpf/python_abi.h"
#include "record/ptrace_sampler.h"

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
/* Where the running kernel keeps a task's FS base (from its BTF), which the program reads
 * to find 3.8-3.10's thread states; 0: unknown, and such processes are not read. */
uint32_t rec_python_task_fsbase(const struct rec_python *p);
/* The program's counters, summed over the CPUs. */
void rec_python_counters(const struct rec_python *p, struct py_counters *sum);

/* The processes of a session whose Python frames are read: every mapping of a CPython
 * interpreter (its executable or libpython) starts them, an exec or exit stops them, a
 * fork passes them on. Interpreter files are checked and their layouts loaded once each.
 * Frames are read by the BPF program where tally may load it, else (not allowed: no root,
 * no CAP_BPF) by ptrace mode (ptrace_sampler.h), for the processes tally may trace.
 * Problems are one warning each on stderr (no BPF, no debug information: what to do), and
 * the recording goes on with native frames. Ownership: everything it holds but the
 * session's sampler (trace); rec_pyprocs_free releases it. Zeroed and both NULL: capture
 * unavailable, why says why. */
struct rec_pyprocs {
	struct rec_python *bpf;
	struct rec_ptrace *trace; /* ptrace mode's sampler, the session's */
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

/* Loads the program or, not allowed to, reads Python frames in ptrace mode with the
 * session's sampler trace (NULL: none; failing quietly: the reason is kept for a warning
 * if it matters). The session's samples carry PERF_SAMPLE_IDENTIFIER (the Python records
 * are told from the CPU samples by it). */
void rec_pyprocs_init(struct rec_pyprocs *pp, struct rec_ptrace *trace);
/* Whether Python frames are read (BPF or ptrace). */
bool rec_pyprocs_on(const struct rec_pyprocs *pp);
/* Checks the command about to run (found as execvp would), loading its layout now when it
 * is an interpreter: its first samples then have Python frames, not only those after the
 * debug information was read. Sets awaited until a process is read, so that the session
 * drains soon enough for the interpreter's mapping. */
void rec_pyprocs_preload(struct rec_pyprocs *pp, const char *cmd);
/* Notes a record on its way into the perf.data (MMAP2, COMM, FORK, EXIT: the others are
 * passed over). */
void rec_pyprocs_note(struct rec_pyprocs *pp, const void *rec, size_t size);
/* Starts every process read anew, as far as the program knows: a new generation, whose
 * code objects it has not seen (its seen map is keyed by it), so that each is written
 * again at its next use: for the next file of a rotating recording, which must name its
 * Python frames alone. */
void rec_pyprocs_regen(struct rec_pyprocs *pp);
/* The layout of the interpreter of process pid, whose frames are read, and the address of
 * its _PyRuntime; NULL when it is not read. */
const struct cpy_layout *rec_pyprocs_layout(const struct rec_pyprocs *pp, uint32_t pid,
					    uint64_t *runtime);
/* Stops reading every process and unloads the program (its events stay attached but find
 * no process to read). */
void rec_pyprocs_disable(struct rec_pyprocs *pp);
void rec_pyprocs_free(struct rec_pyprocs *pp);

/*
 * Python's names of the threads of the processes read (threading.Thread.name, which
 * CPython 3.8-3.13 do not give the kernel), read from their memory by tally itself
 * (cpython/thread_names.h, through process_vm_readv): a thread's first name read at its
 * first sample (while a short-lived thread still runs) and written after the round of
 * draining that follows that sample's (or at its exit), timed before its earliest sample;
 * renames when 250 ms have passed since the process's last read, timed before the
 * sample that called for it. Names go into the recording as COMM records of the threads.
 * Main threads keep the kernel's name: it names the process too. Reads are capped per
 * second over all processes. Ownership: the state of each process and thread;
 * rec_pynames_free releases it. Zeroed: empty.
 */
struct rec_pynames {
	struct rec_pynames_proc *procs;
	size_t nprocs, capprocs;
	struct rec_pynames_thread *threads;
	size_t nthreads, capthreads;
	struct idmap index; /* tid -> threads[] */
	uint32_t round;    /* rounds of draining ended */
	uint64_t now;      /* the latest sample time seen */
	uint64_t window;   /* the start (sample time, ns) of the second counted */
	uint32_t walks;    /* walks of a process's threads in it */
};

/* Notes a sample of thread tid of process pid at time, whose interpreter has layout l and
 * its _PyRuntime at runtime (whichever way its frames are read): a thread not named yet
 * has its name read now, written at the round after next; a rename is looked for now, its
 * COMM handed to emit. */
int rec_pynames_sample(struct rec_pynames *pn, const struct cpy_layout *l, uint64_t runtime,
		       uint32_t pid, uint32_t tid, uint64_t time,
		       int (*emit)(const void *rec, size_t size, void *arg), void *arg);
/* Ends a round of draining every ring: names the threads whose first samples came in a
 * round before, handing their COMM records to emit. */
int rec_pynames_round(struct rec_pynames *pn,
		      int (*emit)(const void *rec, size_t size, void *arg), void *arg);
/* Notes a record on its way into the perf.data: EXIT forgets a thread (handing emit its
 * name first when it was read but not yet due) or a process, an exec (COMM) a process. */
int rec_pynames_note(struct rec_pynames *pn, const void *rec, size_t size,
		     int (*emit)(const void *rec, size_t size, void *arg), void *arg);
/* Forgets the names written, so that each thread is named again at its next sample: for
 * the next file of a rotating recording, which must name its threads alone. */
void rec_pynames_regen(struct rec_pynames *pn);
void rec_pynames_free(struct rec_pynames *pn);

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
/* The time of one of the program's bpf-output samples (rec_python_owns), 0 when too short. */
uint64_t rec_python_time(const void *rec, size_t size);

#endif
