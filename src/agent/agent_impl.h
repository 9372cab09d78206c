/*
 * The agent's insides, shared by its files (lifecycle, registry, threads, sampler, exact
 * mode); other modules use include/tally/agent.h only.
 *
 * What the sampler reads while interpreter threads run is reached without locks: function
 * entries through a table of fixed chunks whose pointers are published with atomic stores
 * (an entry is never freed while the agent lives: unregistering retires it), and thread
 * states in an array allocated once, each with a state word. The mutex serializes the
 * writers of both and the lifecycle calls.
 *
 * Ownership: an agent owns its entries, thread states, buffers and descriptors.
 */
#ifndef TALLY_AGENT_IMPL_H
#define TALLY_AGENT_IMPL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/vec.h"
#include "tally/agent.h"

#define AGENT_CHUNK_BITS 12
#define AGENT_CHUNK (1u << AGENT_CHUNK_BITS)
#define AGENT_NCHUNKS 256 /* ids below 2^20 */

struct prof;
struct prof_cct;
struct prof_loc;

/* A registered function, immutable once published. */
struct agent_fn {
	char *name, *file;
	uint32_t line;
	uint64_t start, end;
	uint8_t *code;
	size_t code_size;
	struct tally_agent_line *lines;
	size_t nlines;
	struct tally_agent_insn *insns; /* texts point into insn_text */
	size_t ninsns;
	char *insn_text;
};

enum { THREAD_FREE, THREAD_ACTIVE };

struct agent_thread {
	struct tally_agent_thread pub; /* first: the public pointer is this one */
	struct tally_agent *agent;
	uint32_t state; /* THREAD_*, atomic */
	pid_t tid;
	clockid_t cpu_clock;  /* the thread's CPU-time clock */
	/* The sampler's own: the published pc and seq it saw at the previous tick, and the
	 * CPU clock's reading then (cpu_known: read at that tick, not before). */
	uint64_t last_pc;
	uint32_t last_seq;
	bool cpu_known;
	uint64_t last_cpu_ns;
	struct prof_cct *cct; /* exact mode */
	int exact_rc;	      /* the first failure of an exact hook */
};

/* A thread's samples of itself (opts.caller_samples): a ring of bytes with one producer,
 * the thread (tally_agent_sample), and one consumer, the sampler thread. Each record is a
 * struct agent_ring_rec and its frames. head and tail count bytes, atomic. */
struct agent_ring {
	unsigned char *bytes; /* size bytes, a power of two; NULL until the slot is used */
	uint64_t size, head, tail;
};

struct agent_ring_rec {
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint64_t pc;
	int32_t tid;
	uint32_t depth, n; /* depth as published; n frames follow */
	uint32_t reserved;
};

/* One sample as the sampler copies it. */
struct agent_sample {
	pid_t tid;
	uint64_t pc;
	uint32_t depth, n; /* depth as published; n frames copied */
	struct tally_agent_frame *frames;
};

struct tally_agent {
	struct tally_agent_opts o; /* strings owned (copies) */
	pthread_mutex_t lock;
	struct agent_fn **chunks[AGENT_NCHUNKS]; /* atomic pointers */
	uint32_t next_id;
	VEC(struct agent_fn *) retired;
	VEC(struct prof_cct *) done_cct; /* exact trees of threads that unregistered */
	int exact_rc;			 /* the first failure of theirs */

	struct agent_thread *threads; /* max_threads */
	struct tally_agent_frame *frames; /* max_threads * max_depth */
	struct agent_ring *rings;	  /* max_threads, with opts.caller_samples */
	uint32_t taking;		  /* atomic: tally_agent_sample queues samples */
	pthread_mutex_t wake_lock;	  /* with wake: stop ends the sampler's wait */
	pthread_cond_t wake;

	bool running, sampler_started;
	pthread_t sampler;
	uint32_t stop, paused; /* atomic */
	int fd; /* the stream, -1 when closed */
	char *buf;
	size_t len, cap;
	struct agent_sample sample;
	struct prof *sprof;	   /* the samples with their pcs, for sample_pprof */
	struct prof_loc *locs;	   /* max_depth + 2: one sample's stack for sprof */
	int sprof_rc;		   /* its first failure */
	uint64_t samples, dropped, missed, off_cpu; /* atomic */
	uint64_t sampler_cpu_ns; /* summed over the sampler's runs, written as each ends */
	int sampler_rc;

	int perfmap_fd; /* -1 until the first JIT region */
	int jitdump_fd; /* -1 until the first JIT region with opts.jitdump */
	void *jitdump_map; /* the executable mapping perf looks for */
	size_t jitdump_map_len;
	uint64_t jitdump_index;
	uint32_t number; /* the agent's number in its process, from 1 (mixed mode's files) */
	int vmdump_fd;	 /* mixed mode's registry, tally-vm-PID-N.dump; -1 until needed */
	struct tally_agent *next_live; /* the process's agents, for fork */
};

/* The entry of id, or NULL (unknown or unregistered): lock-free. */
const struct agent_fn *agent_fn_get(const struct tally_agent *a, uint32_t id);
/* The line of pc in f: its table's last entry at or before pc, else f's first line. */
uint32_t agent_fn_line(const struct agent_fn *f, uint64_t pc);
/* f's VM frame in p ("[unregistered]" for NULL); PROF_NONE on failure. */
uint32_t agent_fn_frame(struct prof *p, const struct agent_fn *f);
void agent_registry_free(struct tally_agent *a);

/* opts.listing: every function's instructions as text (listing.c), under the lock. */
int agent_listing_write(struct tally_agent *a);

/* path with "%p" replaced by the pid: a malloc'd string, or NULL (message set). */
char *agent_path(const char *pattern, pid_t pid);

/* jit-PID.dump (jitdump.c), under the agent's lock. */
int agent_jitdump_add(struct tally_agent *a, const char *name, const void *addr, size_t size);
void agent_jitdump_close(struct tally_agent *a);
/* Mixed mode's registry (jitdump.c), under the agent's lock: function id as a JIT_CODE_LOAD
 * in the VM's pc space, with its lines; and every live function again into a new file of
 * the calling process (a forked child's). */
int agent_vmdump_add(struct tally_agent *a, uint32_t id, const struct agent_fn *f);
int agent_vmdump_rewrite(struct tally_agent *a);
void agent_vmdump_close(struct tally_agent *a);

/* The sampler thread (sampler.c). */
int agent_sampler_start(struct tally_agent *a);
int agent_sampler_stop(struct tally_agent *a);
/* One sample into the stream (and sample_pprof), counted; on the sampler's thread. */
void agent_sampler_emit(struct tally_agent *a, const struct agent_sample *s);

/* Samples the threads take of themselves (ring.c): a ring for slot i (under the lock, at
 * registration), the records queued before start dropped, and every ring written to the
 * stream through agent_sampler_emit, oldest sample first (on the sampler's thread). */
int agent_ring_alloc(struct tally_agent *a, uint32_t i);
void agent_rings_reset(struct tally_agent *a);
void agent_rings_drain(struct tally_agent *a);
void agent_rings_free(struct tally_agent *a);
/* The lock and condition the sampler waits on between drains (agent.c). */
void agent_wake_init(struct tally_agent *a);

/* Exact mode (exact.c): the profile of every thread's tree, written to exact_output. */
int agent_exact_write(struct tally_agent *a);
int agent_exact_thread_init(struct agent_thread *t);
void agent_exact_thread_free(struct agent_thread *t);
/* Keeps the tree of a thread that unregisters (under the agent's lock). */
void agent_exact_thread_retire(struct agent_thread *t);

/* Fork handling (thread.c): agents join the process's list while they live. */
void agent_live_add(struct tally_agent *a);
void agent_live_remove(struct tally_agent *a);

#endif
