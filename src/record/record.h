/*
 * Recording sessions (perf_event_open on a command or on running processes, written as
 * perf.data) and replay: reading a perf.data (ours or perf's), following each process's
 * mappings through mmap, fork and exec records, and unwinding every sample.
 */
#ifndef TALLY_RECORD_H
#define TALLY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perf/perf.h"
#include "unwind/unwind.h"

/* ---- replay ---- */

struct rec_stack {
	const struct perf_event_rec *ev;
	const struct unw_frame *frames; /* innermost first */
	size_t n;
	enum unw_end end;
	size_t nkernel; /* kernel frames in the sample's callchain */
	const char *comm; /* the thread's command name, "" before any COMM record */
};

struct rec_replay_info {
	uint64_t samples;
	uint64_t lost;      /* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t lost_samples;
	uint64_t throttled; /* throttle events */
	uint64_t processes; /* distinct pids with samples */
	uint64_t fp_recorded; /* samples with a frame-pointer callchain and no stack copy */
};

/* Calls fn for every sample of path, unwound with method. The context (and its statistics)
 * is returned in *ctx_out when not NULL, for the caller to free. */
int rec_replay(const char *path, enum unw_method method,
	       int (*fn)(const struct rec_stack *st, void *arg), void *arg,
	       struct rec_replay_info *info, struct unw_ctx **ctx_out);

/* Unwind quality of a replay, for the header of a report. */
struct rec_quality {
	struct rec_replay_info info;
	struct unw_stats stats;
	char stop_modules[3][64]; /* where truncated stacks ended most often */
	uint64_t stop_counts[3];
	enum unw_method method;
};

/* The same on an open file (fuzzing, files in memory). */
int rec_replay_data(struct perf_data *d, enum unw_method method,
		    int (*fn)(const struct rec_stack *st, void *arg), void *arg,
		    struct rec_replay_info *info, struct unw_ctx **ctx_out);

/* ---- symbolized stacks ---- */

enum rec_frame_kind { REC_FRAME_NATIVE, REC_FRAME_INLINE, REC_FRAME_KERNEL, REC_FRAME_TRUNCATED };

struct rec_sym_frame {
	enum rec_frame_kind kind; /* INLINE: inlined into the frame before it */
	const char *function;     /* NULL when unknown; "[truncated]", "[plt]" */
	const char *file;         /* source file, NULL when unknown */
	uint32_t line;
	const char *module;       /* path as mapped; NULL when in no file */
	const char *build_id;     /* the module's build-id in hex, NULL or "" when unknown */
	uint64_t addr;            /* module-relative pc (return addresses as found), 0 unknown */
	uint64_t pc;              /* the runtime address */
	uint64_t sym_start;       /* module-relative start of the function, 0 unknown */
};

struct rec_sym_stack {
	const struct rec_stack *raw;
	const struct rec_sym_frame *frames; /* outermost first: [truncated], user, kernel */
	size_t n;
	const char *comm;
	/* The same for samples whose frames are the same (frames is then the same pointer,
	 * valid until the replay ends): 1, 2, ...; 0 when not known. */
	uint32_t id;
};

/* Calls fn for every sample of path with its frames unwound (method) and symbolized with
 * inline frames; kernel frames from /proc/kallsyms when readable. Strings live until
 * rec_symbolized returns. q receives the unwind quality. */
int rec_symbolized(const char *path, enum unw_method method,
		   int (*fn)(const struct rec_sym_stack *st, void *arg), void *arg,
		   struct rec_quality *q);
int rec_symbolized_data(struct perf_data *d, enum unw_method method,
			int (*fn)(const struct rec_sym_stack *st, void *arg), void *arg,
			struct rec_quality *q);

/* Folded stacks ("comm;outermost;...;innermost COUNT" per line, sorted: flame graph input):
 * unknown frames as [module+0xADDR], kernel frames without a symbol as [kernel]. */
int rec_folded(const char *path, enum unw_method method, FILE *out, struct rec_quality *q);
/* The unwind-quality header of a report: samples, lost, single-frame and truncated
 * shares, average depth, where stacks stopped; a warning when only frame pointers ran. */
void rec_quality_print(FILE *out, const struct rec_quality *q);

/* ---- as a profile ---- */

/* The unwind-quality counters of a perf.data's profile: counts of samples (unwound
 * stacks), of complete, truncated and single-frame stacks, and the frames of all stacks. */
#define REC_COUNTER_SAMPLES "samples"
#define REC_COUNTER_COMPLETE "unwind: complete stacks"
#define REC_COUNTER_TRUNCATED "unwind: truncated stacks"
#define REC_COUNTER_SINGLE "unwind: single-frame stacks"
#define REC_COUNTER_FRAMES "unwind: frames"

/* The profile of a perf.data: metrics samples/count and cpu/nanoseconds (clock events) or
 * events/count, stacks unwound with method and symbolized, unwind quality as counters. */
struct prof;
int rec_profile(struct perf_data *d, enum unw_method method, struct prof **out);
/* One line of shares from those counters ("unwind:   99.7% complete, 0.3% truncated, ...";
 * a share is rounded to 0% or 100% only when exact); nothing when p has none. */
void rec_quality_summary(FILE *out, const struct prof *p);
/* "12.5%" with the fewest decimals (at least one) that keep a non-zero share above 0 and a
 * partial one below 100; "0%" and "100%" only when exact. */
const char *rec_share(char *buf, size_t size, uint64_t part, uint64_t whole);

/* ---- recording ---- */

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
};

struct rec_result {
	uint64_t samples, lost, throttled, bytes;
	int exit_status; /* of CMD, as a shell reports it (128+signal when killed) */
};

int rec_run(const struct rec_opts *o, struct rec_result *res);

#endif
