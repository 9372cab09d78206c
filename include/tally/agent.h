/*
 * The agent: profiling an interpreter or VM written in C from inside its own process, in
 * the interpreter's own terms (its functions, its bytecode pcs). Two modes, usable together:
 *
 *   sampling  the interpreter publishes its current pc (TALLY_AGENT_PC, one relaxed store)
 *             and keeps a shadow stack of its frames (TALLY_AGENT_PUSH / TALLY_AGENT_POP);
 *             a sampler thread of the agent reads them at F Hz (or, with
 *             opts.caller_samples, the thread samples itself: tally_agent_sample) and
 *             streams folded stacks to a file that stays readable up to its last flush if
 *             the process dies;
 *   exact     the interpreter reports every function entry, exit and unit of cost
 *             (tally_agent_enter / _exit / _cost); at stop the agent writes the exact
 *             calling-context tree as a pprof file.
 *
 * Functions are registered first (name, file, bytecode range, optionally the bytecode, a
 * pc -> line table and the text of each instruction) and named by the id registration
 * returns; with opts.listing the agent writes their instructions at stop, for `tally
 * annotate --listing` to show the weights of each bytecode instruction. JIT code is
 * registered as a native address range and also written to perf-PID.map, where perf and
 * samply look.
 *
 * Conventions are libtally's (tally.h, docs/library.md): 0 or a negative errno code, the
 * message in tally_errmsg(); opts structs carry their size. docs/agent.md is the guide.
 *
 * Compiling the interpreter with -DTALLY_AGENT_DISABLE turns the macros into nothing, so a
 * build without profiling pays nothing at all.
 */
#ifndef TALLY_AGENT_H
#define TALLY_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tally/tally.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tally_agent;

enum tally_agent_mode {
	TALLY_AGENT_SAMPLE = 1, /* the sampler thread and the folded stream */
	TALLY_AGENT_EXACT = 2,	/* the enter/exit/cost hooks and the pprof written at stop */
	TALLY_AGENT_MIXED = 4,	/* frames in native samples (`tally record`): the registry is
				   written as tally-vm-PID-N.dump in jit_dir, and interpreter
				   loops keep their state in a struct tally_agent_loop */
};

/* Options (same size rules as struct tally_symbolizer_opts in tally.h; TALLY_OPTS declares
 * them). A path given is used as given (relative to the working directory). Paths may hold
 * "%p", replaced by the process id when the file is opened (so that a forked child that
 * restarts sampling writes its own file). */
struct tally_agent_opts {
	size_t sz;
	unsigned mode;		  /* enum tally_agent_mode bits; 0: TALLY_AGENT_SAMPLE */
	const char *output;	  /* folded stream; NULL: "tally-agent-%p.folded" in
				     $TMPDIR, else /tmp (never the working directory) */
	const char *exact_output; /* pprof of exact mode; NULL: "tally-agent-%p.pb.gz",
				     in the same directory */
	const char *exact_metric; /* its metric's type; NULL: "instructions" (unit "count") */
	uint32_t freq_hz;	  /* sampling frequency; 0: 999 */
	uint32_t flush_ms;	  /* the stream is flushed at least this often; 0: 100 */
	uint32_t max_threads;	  /* threads registered at once; 0: 64 */
	uint32_t max_depth;	  /* shadow frames kept per thread; 0: 512 */
	const char *jit_dir;	  /* directory of perf-PID.map (and of the registry of
				     mixed mode); NULL: /tmp */
	bool omit_thread;	  /* no "thread TID" root frame on sampled stacks */
	bool jitdump;		  /* JIT regions also go to jit-PID.dump in jit_dir, with
				     their code, for `perf inject --jit` */
	const char *sample_pprof; /* also the samples with their pcs and lines, as pprof
				     written at stop; NULL: none */
	const char *listing;	  /* the registered functions' instructions (their insns),
				     written at stop as a text listing for `tally annotate
				     --listing` (docs/agent.md); NULL: none */
	bool caller_samples;	  /* the threads take their own samples with
				     tally_agent_sample() (from a timer's signal handler or
				     a hook); the sampler thread takes none, it only writes
				     theirs to the stream, waking every flush_ms; freq_hz is
				     then the caller's business */
};

/* ---- per-thread VM state ---- */

/* A frame of the shadow stack: the function entered and the pc in its caller that called
 * it (0 for an outermost frame). */
struct tally_agent_frame {
	uint32_t function;
	uint32_t reserved;
	uint64_t call_pc;
};

/* The pc a frame has from its push until the interpreter's first TALLY_AGENT_PC in it:
 * readers take it for the function's first pc. */
#define TALLY_AGENT_PC_ENTRY UINT64_MAX

/* What one interpreter thread publishes. The layout is part of libtally's ABI (the macros
 * below write it inline); only the agent allocates it. The sampler reads depth, frames and
 * pc between two equal even values of seq (a sequence lock: the writer makes it odd while
 * it changes the stack). A push or pop sets pc with the stack, so that a sample between it
 * and the next TALLY_AGENT_PC never pairs a frame with a pc of another function: the
 * callee's is TALLY_AGENT_PC_ENTRY, the caller's after a pop its call site. */
struct tally_agent_thread {
	uint64_t pc;
	uint32_t depth;
	uint32_t seq;
	uint32_t max_depth; /* frames[] holds this many; deeper pushes count in depth only */
	uint32_t reserved;
	struct tally_agent_frame *frames;
};

static inline void tally_agent_push(struct tally_agent_thread *t, uint32_t function,
				    uint64_t call_pc)
{
	uint32_t d = t->depth, s = t->seq;
	__atomic_store_n(&t->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (d < t->max_depth) {
		__atomic_store_n(&t->frames[d].function, function, __ATOMIC_RELAXED);
		__atomic_store_n(&t->frames[d].call_pc, call_pc, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->depth, d + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->pc, TALLY_AGENT_PC_ENTRY, __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, s + 2, __ATOMIC_RELEASE);
}

static inline void tally_agent_pop(struct tally_agent_thread *t)
{
	uint32_t d = t->depth, s = t->seq;
	if (!d)
		return;
	__atomic_store_n(&t->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&t->depth, d - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->pc, d <= t->max_depth ? t->frames[d - 1].call_pc : TALLY_AGENT_PC_ENTRY,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, s + 2, __ATOMIC_RELEASE);
}

#ifdef TALLY_AGENT_DISABLE
#define TALLY_AGENT_PC(t, pc) ((void)0)
#define TALLY_AGENT_PUSH(t, function, call_pc) ((void)0)
#define TALLY_AGENT_POP(t) ((void)0)
#else
/* Before each instruction: the pc it is at, in the interpreter's own pc space. */
#define TALLY_AGENT_PC(t, pcv) __atomic_store_n(&(t)->pc, (uint64_t)(pcv), __ATOMIC_RELAXED)
#define TALLY_AGENT_PUSH(t, function, call_pc) tally_agent_push((t), (function), (call_pc))
#define TALLY_AGENT_POP(t) tally_agent_pop(t)
#endif

/* ---- mixed mode: VM frames in native samples ----
 *
 * A native sampler (`tally record`, perf) copies the user stack of the thread it
 * interrupts, and nothing else. For that copy to carry the VM's state of the sample's own
 * instant, an interpreter loop keeps its pc and shadow frames in its own native frame: a
 * struct tally_agent_loop and an array of frames, both locals of the loop function. The
 * replay finds the record inside the unwound frame that holds it (magic, its own address,
 * layout version), reads the frames it points to from the same copy, checks each against
 * the registry the agent wrote (tally-vm-PID-N.dump, N the agent's number in the record)
 * and splices them in place of that native frame; native code the loop called stays
 * above them. docs/agent.md says where to put what. */

#define TALLY_AGENT_LOOP_MAGIC 0x31706f6f6c796c74ull /* "tlyloop1" in memory */
#define TALLY_AGENT_LOOP_VERSION 1

/* The layout is ABI: the replay reads it from stack copies. */
struct tally_agent_loop {
	uint64_t magic;	 /* TALLY_AGENT_LOOP_MAGIC while the loop runs, 0 after */
	uint64_t self;	 /* the record's own address: a stale copy elsewhere is no record */
	uint32_t agent;	 /* the agent's number in its process (tally-vm-PID-N.dump) */
	uint32_t version; /* TALLY_AGENT_LOOP_VERSION */
	struct tally_agent_thread state; /* pc and frames; frames points at the loop's array */
};

/* Starts the record of a loop activation in loop, with nframes shadow frames at frames
 * (locals of the same function, or of one that called it), and returns the state to pass
 * to TALLY_AGENT_PC/_PUSH/_POP. The agent must have TALLY_AGENT_MIXED. NULL when a is
 * NULL or has not (nothing is then recorded; the macros must not be given NULL). */
TALLY_API struct tally_agent_thread *tally_agent_loop_begin(struct tally_agent *a,
							     struct tally_agent_loop *loop,
							     struct tally_agent_frame *frames,
							     uint32_t nframes);
/* Before the loop function returns: the bytes left on the stack are no record. */
static inline void tally_agent_loop_end(struct tally_agent_loop *loop)
{
	__atomic_store_n(&loop->magic, 0, __ATOMIC_RELAXED);
}

/* ---- lifecycle ---- */

/* An agent for one VM; several may live in one process, each with its own registry,
 * threads, sampler and files. opts may be NULL (all defaults). */
TALLY_API int tally_agent_new(const struct tally_agent_opts *opts, struct tally_agent **out);
/* Opens the stream (sampling mode) and starts the sampler thread. Again after stop (or in
 * a forked child, where the parent's sampler does not exist: the child's agent is stopped,
 * its threads other than the one that forked are forgotten) it starts afresh, truncating
 * the stream. -EALREADY when running. */
TALLY_API int tally_agent_start(struct tally_agent *a);
/* Paused, the sampler takes no samples (it keeps its clock); exact hooks still count. */
TALLY_API int tally_agent_pause(struct tally_agent *a, bool paused);
/* Stops the sampler, flushes and closes the stream, and writes the exact profile (and
 * sample_pprof). The exact trees are read here: no thread may be inside an exact hook
 * while stop runs (stop after the interpreter threads are done with them). */
TALLY_API int tally_agent_stop(struct tally_agent *a);
/* Stops if running and frees everything. NULL is fine. */
TALLY_API void tally_agent_free(struct tally_agent *a);

/* Figures of the run so far: samples written, samples dropped (a stack that kept changing
 * while it was read, or a stream write that failed), sampler deadlines missed, and ticks
 * at which a thread was not sampled because it had used no CPU time since the previous
 * one (blocked or descheduled: sampling it again would count the same instant twice);
 * and the CPU time the sampler thread itself used (what sampling costs the process). */
struct tally_agent_stats {
	size_t sz; /* set to sizeof by the caller: the library writes at most that many bytes */
	uint64_t samples, dropped, missed, off_cpu;
	uint64_t sampler_cpu_ns;
};
TALLY_API int tally_agent_stats(struct tally_agent *a, struct tally_agent_stats *out);

/* ---- samples a thread takes of itself (opts.caller_samples) ---- */

/* Appends one sample of t's state as it is now (its pc, its frames, its tid and the time
 * of the monotonic clock) to t's ring, which the sampler thread writes to the stream in
 * the order of the samples' times: what the sampler thread would have read at a tick.
 * Only t's own thread may call it, at any point, also from a signal handler that
 * interrupted a push or pop: it takes no lock, allocates nothing and is async-signal-safe.
 * 0 when the sample was queued, or when none was taken because the agent is not running
 * or is paused; -EAGAIN when it was dropped (counted: the ring was full, or the handler
 * interrupted a change of the stack), -EINVAL without opts.caller_samples. Sets no
 * message (tally_errmsg() is not async-signal-safe). */
TALLY_API int tally_agent_sample(struct tally_agent_thread *t);

/* ---- threads ---- */

/* The state of the calling thread (its tid is recorded): pass it to the macros and hooks.
 * Valid until unregistered or the agent is freed. -ENOSPC past max_threads. */
TALLY_API int tally_agent_thread_register(struct tally_agent *a, struct tally_agent_thread **out);
TALLY_API void tally_agent_thread_unregister(struct tally_agent *a, struct tally_agent_thread *t);

/* ---- code registry ---- */

/* A source line from pc on (until the next entry's pc): sorted by pc. */
struct tally_agent_line {
	uint64_t pc;
	uint32_t line;
};

/* One instruction as the interpreter's disassembler prints it ("push 3"), at pc. */
struct tally_agent_insn {
	uint64_t pc;
	const char *text;
};

struct tally_agent_function {
	size_t sz;		/* sizeof(struct tally_agent_function); same rules as opts */
	const char *name;	/* required */
	const char *file;	/* NULL when unknown */
	uint32_t line;		/* first line, 0 when unknown */
	uint64_t start, end;	/* the function's pcs: [start, end) */
	const uint8_t *code;	/* optional: its bytecode, code_size bytes (copied) */
	size_t code_size;
	const struct tally_agent_line *lines; /* optional (copied) */
	size_t nlines;
	const struct tally_agent_insn *insns; /* optional: its instructions as text, sorted by
						 pc, for opts.listing (copied) */
	size_t ninsns;
};

/* Registers a function; *id (never 0) names it in the macros and hooks. Safe while the
 * sampler runs, from any thread. */
TALLY_API int tally_agent_register(struct tally_agent *a, const struct tally_agent_function *f,
				   uint32_t *id);
/* Its samples taken later show "[unregistered]". -ENOENT for an unknown id. */
TALLY_API int tally_agent_unregister(struct tally_agent *a, uint32_t id);
/* Native code a JIT made at [addr, addr + size), named name: appended to perf-PID.map
 * (in jit_dir) as perf reads it, and with opts.jitdump to jit-PID.dump with a copy of
 * the code (read from addr: it must be readable). */
TALLY_API int tally_agent_register_jit(struct tally_agent *a, const char *name,
				       const void *addr, size_t size);

/* ---- exact mode (calls of the interpreter thread t itself) ---- */

/* Entered function from call_pc in the current function (0 for the outermost). */
TALLY_API int tally_agent_enter(struct tally_agent_thread *t, uint32_t function,
				uint64_t call_pc);
/* Returned to the caller. */
TALLY_API int tally_agent_exit(struct tally_agent_thread *t);
/* cost units at pc of the current function. */
TALLY_API int tally_agent_cost(struct tally_agent_thread *t, uint64_t pc, uint64_t cost);

#ifdef __cplusplus
}
#endif

#endif
