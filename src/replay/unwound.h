/*
 * Replay's first stage: the samples of a perf.data (tally's or perf's) unwound in time
 * order. Each process's mappings are followed through mmap, fork and exec records and
 * every sample's stack is unwound; nothing here knows how the samples were taken, nor names
 * a frame (namer.h does).
 */
#ifndef TALLY_REPLAY_UNWOUND_H
#define TALLY_REPLAY_UNWOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"
#include "unwind/unwind.h"

/* A sample unwound: its frames as the unwinder found them, not yet named. */
/* Bytes of a thread's name kept, with its NUL: the kernel's comm has 15, tally record's
 * COMM records of Python's names up to 79. */
#define REPLAY_COMM_MAX 80

struct replay_stack {
	const struct perf_event_rec *ev;
	const struct unw_frame *frames; /* innermost first */
	size_t n;
	enum unw_end end;
	size_t nkernel;   /* kernel frames in the sample's callchain */
	const char *comm; /* the thread's command name, "" before any COMM record */
};

/* What a replay read, beside the samples. */
struct replay_info {
	uint64_t samples;
	uint64_t lost;        /* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t lost_samples;
	uint64_t throttled;   /* throttle events */
	uint64_t processes;   /* distinct pids with samples */
	uint64_t fp_recorded; /* samples with a frame-pointer callchain and no stack copy */
	uint64_t unwound_recorded; /* ... with a chain tally unwound while recording instead */
	char stopped[64]; /* why the recording ended early (a full disk), "" if it did not */
};

/* Calls fn for every sample of path, unwound with method. The context (and its statistics)
 * is returned in *ctx_out when not NULL, for the caller to free. */
int replay_unwind(const char *path, enum unw_method method,
		  int (*fn)(const struct replay_stack *st, void *arg), void *arg,
		  struct replay_info *info, struct unw_ctx **ctx_out);
/* The same on an open file (fuzzing, files in memory). */
int replay_unwind_data(struct perf_data *d, enum unw_method method,
		       int (*fn)(const struct replay_stack *st, void *arg), void *arg,
		       struct replay_info *info, struct unw_ctx **ctx_out);
/* Whether ev is a sample of a bpf-output event (PERF_COUNT_SW_BPF_OUTPUT): data, not cost. */
bool replay_is_bpf_output(const struct perf_event_rec *ev);
/* Whether file d has such an event: the interpreters' records (perf/interp_records.h). */
bool replay_has_bpf_output(const struct perf_data *d);

/* What the unwinder learns beside the recording's records: the CFI of JIT code (jitdump).
 * before_sample brings the sample's process's space s up to the sample's time (adding the
 * code loaded by then, unw_space_jit); 0, or a negative code with the message set, which
 * ends the replay. */
struct replay_unwind_hook {
	int (*before_sample)(void *self, struct unw_ctx *c, struct unw_space *s,
			     const struct perf_event_rec *ev);
	void *self;
};
/* replay_unwind_data with hook (NULL: none) called before each sample is unwound, and
 * the records that are no samples of cost handed to side (NULL: none), each in its place
 * in time order: bpf-output samples (what a BPF program wrote at a sample's instant, such
 * as a thread's Python frames: replay_is_bpf_output; never unwound, nor counted as
 * samples) and the records of processes and threads (COMM, FORK, EXIT, MMAP, ...). */
int replay_unwind_each(struct perf_data *d, enum unw_method method,
		       const struct replay_unwind_hook *hook,
		       int (*fn)(const struct replay_stack *st, void *arg),
		       int (*side)(const struct perf_event_rec *ev, void *arg), void *arg,
		       struct replay_info *info, struct unw_ctx **ctx_out);

#endif
