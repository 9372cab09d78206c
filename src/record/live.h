/*
 * Live unwinding (tally record's default; --keep-stacks keeps the copies instead): the
 * records of the rings, put back in time order (reorder.h), each process's mappings kept by
 * replay's rules (unwind/procs.h), each sample with a user stack copy unwound by replay's
 * unwinder against the mappings of its instant and written with the unwound chain instead
 * of the copy (perf_sample_unwound): the kernel's part, then PERF_CONTEXT_USER, the sampled
 * ip and the return addresses, and the walk's note (unw_walk_note: how it ended, its
 * frame-pointer steps), so that replay counts the chain as a replay of the copy would.
 *
 * A sample keeps its copy where the report names its frames from more than the chain: a
 * copy that holds a loop record of libtally's agent (its VM frames are read from the copy),
 * and, in a process that maps a jitdump's marker, a walk that went into memory no file
 * backs or stopped (the dump's unwinding information is read at report time). So does a
 * thread that outlives its process's main thread: a process's space is freed when the main
 * thread exits, so that what tally holds does not grow with every process it saw (nor
 * with every file they mapped: unw_ctx_bound_unused). Each is counted (struct
 * rec_live_stats). Records other than samples go out unchanged, in the same time order.
 */
#ifndef TALLY_RECORD_LIVE_H
#define TALLY_RECORD_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"
#include "unwind/unwind.h"

/* Records added with this flag are not the sampling events' (Python's bpf-output samples):
 * kept in order by the time given, written as they are. */
#define REC_LIVE_OPAQUE 1u

/* What live unwinding did, for the summary and the tests. */
struct rec_live_stats {
	uint64_t samples;      /* rewritten with an unwound chain */
	uint64_t dropped;      /* samples that could not be decoded or rewritten */
	uint64_t raw_agent;    /* kept raw: libtally's agent's VM frames in the copy */
	uint64_t raw_jitdump;  /* kept raw: in code of a JIT that writes a jitdump */
	uint64_t raw_exited;   /* kept raw: threads of a process whose main thread exited */
	uint64_t bytes_in, bytes_out; /* of the samples rewritten, before and after */
	uint64_t forced;       /* records the queue's bound pushed out before their round */
	size_t peak_bytes;     /* the most the queue held */
	uint64_t unwind_ns;    /* CPU time of the walks and rewrites (CLOCK_THREAD_CPUTIME_ID) */
};

struct rec_live;

/* attr: the sampling events' attribute as opened (with PERF_SAMPLE_STACK_USER: the off-CPU
 * events' samples have the same layout). emit takes every record in order; name is for
 * messages. */
int rec_live_new(const char *name, const struct perf_event_attr *attr,
		 int (*emit)(const void *rec, size_t size, void *arg), void *arg,
		 struct rec_live **out);
/* A record of a ring (a copy is kept). time is used for REC_LIVE_OPAQUE records only;
 * the others' time is their own. */
int rec_live_add(struct rec_live *l, const void *rec, size_t size, uint32_t flags,
		 uint64_t time);
/* A drain round ended that began at round_start on the samples' clock (0: the clock is not
 * known: records up to the latest time of the round before are then given out). */
int rec_live_round(struct rec_live *l, uint64_t round_start);
/* Everything still held, in order. */
int rec_live_finish(struct rec_live *l);
/* The build-id a file had when it was mapped (passed on to the unwinder, see
 * unw_ctx_expect_build_id). */
int rec_live_expect_build_id(struct rec_live *l, const char *path, const uint8_t *id,
			     size_t len);
void rec_live_stats(const struct rec_live *l, struct rec_live_stats *out);

struct rec_modules;
struct rec_result;
/* Hands the unwinder the build-ids of the modules noted since the last call (*seen of m
 * were handed before): it then opens what the process mapped (a cache copy where the path
 * now holds another file), as a report would. */
int rec_live_modules(struct rec_live *l, const struct rec_modules *m, size_t *seen);
/* The round's start on the samples' clock for rec_live_round: CLOCK_MONOTONIC now when attr
 * (as opened: perf_open drops the clock id on kernels without it) times samples by it, else
 * 0. */
uint64_t rec_live_clock(const struct perf_event_attr *attr);
/* live's figures into res->live, and res's bytes and samples (accounted as the rings gave
 * them) made the file's: rewritten samples, without those dropped. */
void rec_live_result(const struct rec_live *l, struct rec_result *res);
void rec_live_free(struct rec_live *l);

/* tally record --unwind-file: the live unwinder over a raw recording's records as they lie
 * in the file (the rings' order), written unwound to out: the same walks as while
 * recording, for comparing with a replay of the raw file sample by sample. */
int rec_live_file(const char *in, const char *out, struct rec_live_stats *st);

#endif
