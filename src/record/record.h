/*
 * Recording sessions: perf_event_open on a command or on running processes, written as
 * perf.data with what a later replay needs (build-ids, cache copies of unreachable files,
 * the kernel's symbols). Reading recordings back is replay's (replay/replay.h).
 */
#ifndef TALLY_RECORD_H
#define TALLY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_opts {
	uint64_t freq;        /* samples per second, or 0 when period is set */
	uint64_t period;
	const char *event;    /* NULL: the default event */
	bool fp;              /* --call-graph fp: no stack copies */
	uint32_t stack_size;  /* bytes of user stack per sample */
	const char *output;
	int *pids;            /* -p */
	size_t npids;
	char **argv;          /* -- CMD ARGS */
	bool quiet;
	bool off_cpu;         /* --off-cpu: context switches with their stacks too */
	bool all_cpus;        /* -a: every task on every CPU (until argv ends, or duration) */
	double duration;      /* --duration: seconds, 0 for no limit (not with argv) */
	bool no_python;       /* --no-python: no Python frames (record/python.h) */
};

struct rec_result {
	uint64_t samples, lost, throttled, bytes;
	/* Python frames: processes read, stack and code records written, records the
	 * bpf-output events could not take (their ring full); the samples the program read
	 * frames at and its time on them. */
	uint64_t py_procs, py_stacks, py_codes, py_lost, py_runs, py_run_ns;
	int exit_status; /* of CMD, as a shell reports it (128+signal when killed) */
	int exec_errno;  /* CMD could not be run: exec's errno (rec_run fails, message set) */
	/* errno of the write that stopped the recording early (a full disk), 0 if none: the
	 * file is finished with the samples written before, and CMD ran on to its end. */
	int write_error;
};

int rec_run(const struct rec_opts *o, struct rec_result *res);

#endif
