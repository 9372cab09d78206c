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

/* Bounds on what a recording holds per file, however long it runs (docs/native-sampling.md,
 * "Long recordings"): the mapped files whose build-ids are noted (about 100 bytes each),
 * and the processes whose perf maps are kept (the live ones, and those gone that left a
 * map in /tmp). Past them the recording goes on; what was left out is counted
 * (rec_result) and said. */
#define REC_MODULES_MAX 16384
#define REC_JITMAPS_MAX 65536

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
	bool no_ruby;         /* --no-ruby: no Ruby frames (record/ruby_interp.h) */
	bool no_lua;          /* --no-lua: no Lua frames (record/lua_interp.h) */
	bool unwound;         /* samples stored unwound (the default; record/live.h) */
	/* --rotate: a series of files OUTPUT.YYYYMMDDTHHMMSS.mmmZ (the UTC time each began),
	 * the next begun after rotate_secs seconds or once rotate_bytes are written (0: not
	 * that way; both 0: the one file OUTPUT); keep > 0 deletes all but the keep newest
	 * of the files this recording wrote. */
	double rotate_secs;
	uint64_t rotate_bytes;
	unsigned keep;
};

/* Stacks unwound while recording: samples rewritten and those dropped (undecodable), those
 * kept raw (live.h says why), the walks that reached the outermost frame or stopped, the
 * CPU time of the walks, the reorder queue's peak and the records its bound pushed out
 * early. */
struct rec_live_result {
	uint64_t samples, dropped, raw_agent, raw_jitdump, raw_exited, complete, truncated,
		unwind_ns, peak_bytes, forced;
};

struct rec_result {
	uint64_t samples, lost, throttled, bytes;
	/* Python frames: processes read, stack and code records written, records the
	 * bpf-output events could not take (their ring full); the samples the program read
	 * frames at and its time on them. */
	uint64_t py_procs, py_stacks, py_codes, py_lost, py_runs, py_run_ns;
	bool py_ptrace; /* Python frames read in ptrace mode */
	/* Ptrace mode (Python's without BPF, other interpreters' always): the processes of
	 * other interpreters read, the samples taken, the time their threads were held
	 * stopped for them and tally's CPU time taking them. */
	uint64_t interp_procs, ptrace_samples, ptrace_stopped_ns, ptrace_cpu_ns;
	int exit_status; /* of CMD, as a shell reports it (128+signal when killed) */
	int exec_errno;  /* CMD could not be run: exec's errno (rec_run fails, message set) */
	/* errno of the write that stopped the recording early (a full disk), 0 if none: the
	 * file is finished with the samples written before, and CMD ran on to its end. */
	int write_error;
	struct rec_live_result live;
	/* Files written (with --rotate; 1 without), and the last of them. */
	uint64_t files;
	char last[4096];
	/* Bounds on what tally holds over a long recording (modules.h, jitmaps.h): files
	 * whose build-ids were not kept, processes whose perf maps were not kept. */
	uint64_t modules_dropped, jit_dropped;
};

int rec_run(const struct rec_opts *o, struct rec_result *res);

#endif
