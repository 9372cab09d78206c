/*
 * Outputs written from a finished profile (src/profile): text report and tree, folded
 * stacks, pprof, speedscope JSON, and the per-function diff table. Every writer is
 * deterministic: the same profile gives the same bytes. Writers return 0 or a negative
 * code with the message set (write errors included). The flame graph and annotation live
 * in their own headers.
 */
#ifndef TALLY_REPORT_H
#define TALLY_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct prof;

struct rep_text_opts {
	int metric;	  /* -1: the profile's default */
	unsigned top;	  /* rows per table; 0: 20 */
	bool tree;	  /* print the call tree instead of the tables */
	double threshold; /* tree: hide nodes under this percent of the total (< 0: 0.5) */
	bool threads;	  /* a table of threads, then the tables or tree per thread */
};
/* The text report: the unwind quality (rep_quality_summary), the profile's header (its
 * source, each metric's total, the duration, its counters), then the tables or tree. */
int rep_text(FILE *f, const struct prof *p, const struct rep_text_opts *o);
/* The lines of unwind quality of a profile of a recording, from its counters
 * (profile/counters.h): "unwind:   N stacks: 99.7% complete, 0.3% truncated, ..." and,
 * where the recording has them, the shares of Python and VM frames. Nothing when p has no
 * such counters. */
void rep_quality_summary(FILE *out, const struct prof *p);
/* "12.5%" with the fewest decimals (at least one) that keep a non-zero share above 0 and a
 * partial one below 100; "0%" and "100%" only when exact. */
const char *rep_share(char *buf, size_t size, uint64_t part, uint64_t whole);

/* The threads of p (prof_thread ids) sorted by pid, then tid: a malloc'd array of
 * prof_nthreads(p) ids, NULL when out of memory. */
uint32_t *rep_threads_sorted(const struct prof *p);
/* What every --threads output says of a profile without threads: -EINVAL, message set. */
int rep_no_threads(void);

struct rep_folded_opts {
	int metric;		/* -1: the profile's default */
	bool annotate_kinds;	/* suffix inline frames "_[i]", kernel frames "_[k]" */
	bool threads;		/* each thread's stacks below a "NAME-PID/TID" frame */
};
int rep_folded(FILE *f, const struct prof *p, const struct rep_folded_opts *o);

/* gzipped profile.proto, gzip header without mtime or name. */
int rep_pprof(FILE *f, const struct prof *p);
/* The same, unzipped, into a malloc'd buffer (tests, fuzzing). */
int rep_pprof_encode(const struct prof *p, uint8_t **buf, size_t *len);
/* rep_pprof with a Sample per logged sample, labelled thread (name), pid and tid
 * (-EINVAL without threads). */
int rep_pprof_threads(FILE *f, const struct prof *p);

/* speedscope file format: one sampled profile per metric. name is the profile's title.
 * threads: one per thread and metric, named NAME-PID/TID (-EINVAL without threads). */
int rep_speedscope(FILE *f, const struct prof *p, const char *name, bool threads);

/* The Firefox Profiler's processed format (JSON): one thread per thread of p, samples
 * weighted by metric (-1: the default; nanoseconds become milliseconds), off-CPU
 * intervals and probe hits as markers. name is the profile's product name. */
int rep_firefox(FILE *f, const struct prof *p, int metric, const char *name);

struct rep_diff_opts {
	int metric_before, metric_after; /* -1: each profile's default */
	unsigned top;			 /* rows; 0: all */
};
/* Per-function self and total change, sorted by absolute change of self, then total. */
int rep_diff(FILE *f, const struct prof *before, const struct prof *after,
	     const struct rep_diff_opts *o);

#endif
