/*
 * Replay: a perf.data (tally's or perf's) turned into unwound stacks, symbolized stacks and
 * a profile. Each process's mappings are followed through mmap, fork and exec records, every
 * sample is unwound in time order, its frames are named by frame sources (ELF/DWARF today;
 * see "frame sources" below for how JIT and interpreter frames plug in) and kernel symbols,
 * and the unwind quality is counted. Nothing here knows how the samples were taken.
 */
#ifndef TALLY_REPLAY_H
#define TALLY_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perf/perf.h"
#include "unwind/unwind.h"

/* ---- unwound stacks ---- */

struct replay_stack {
	const struct perf_event_rec *ev;
	const struct unw_frame *frames; /* innermost first */
	size_t n;
	enum unw_end end;
	size_t nkernel;   /* kernel frames in the sample's callchain */
	const char *comm; /* the thread's command name, "" before any COMM record */
};

struct replay_info {
	uint64_t samples;
	uint64_t lost;        /* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t lost_samples;
	uint64_t throttled;   /* throttle events */
	uint64_t processes;   /* distinct pids with samples */
	uint64_t fp_recorded; /* samples with a frame-pointer callchain and no stack copy */
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

/* How the Python frames of a recording went (the CPython frame source), present when it
 * has a bpf-output event. A sample with activations of the eval loop but none of these
 * spliced keeps its native frames. */
struct replay_python_stats {
	bool present;
	uint64_t records;      /* Python stack records read */
	uint64_t samples;      /* samples with Python frames */
	uint64_t frames;       /* Python frames, over all samples */
	uint64_t inconsistent; /* runs of Python frames and eval activations disagreed */
	uint64_t code_unknown; /* a frame's code object had no record */
	uint64_t unrecorded;   /* eval activations, but no stack record of the thread */
	uint64_t cut;          /* stacks the capture cut short (outer activations stay native) */
	uint64_t between;      /* sampled in the eval loop between frames (at a frame's start
				* or end, before the thread shows it or after): that activation
				* stays native, the runs go to the ones outside it */
	uint64_t malformed;    /* payloads not understood, left out */
};

/* How the agent's VM frames of a recording went (mixed mode, the VM frame source),
 * present once a loop record was found (a registry in the directory alone changes no
 * output: registries of other runs may lie in /tmp). Each loop record found in a
 * native frame either becomes VM frames or leaves that frame native for one reason. */
struct replay_vm_stats {
	bool present;
	uint64_t samples;	   /* stacks with VM frames */
	uint64_t frames;	   /* VM frames, over all samples */
	uint64_t malformed;	   /* a record of another layout version */
	uint64_t changing;	   /* sampled while the loop pushed or popped a frame */
	uint64_t empty;		   /* a record with no frame pushed yet (or any more) */
	uint64_t too_deep;	   /* deeper than its frames array */
	uint64_t unreadable;	   /* its frames outside the stack copy */
	uint64_t no_registry;	   /* no tally-vm-PID-N.dump for it */
	uint64_t unknown_function; /* a frame's function not in the registry */
	uint64_t pc_outside;	   /* a pc outside its frame's function */
};

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

/* Unwind quality of a replay, for the header of a report. */
struct replay_quality {
	struct replay_info info;
	struct replay_python_stats python;
	struct replay_vm_stats vm;
	struct unw_stats stats;
	char stop_modules[3][64]; /* where truncated stacks ended most often */
	uint64_t stop_counts[3];
	enum unw_method method;
};

/* ---- symbolized stacks ---- */

enum replay_frame_kind {
	REPLAY_FRAME_NATIVE,
	REPLAY_FRAME_INLINE,
	REPLAY_FRAME_KERNEL,
	REPLAY_FRAME_TRUNCATED,
	REPLAY_FRAME_JIT, /* code a runtime compiled; module is the file that named it */
	REPLAY_FRAME_PYTHON, /* a CPython frame; module is the interpreter that ran it */
	REPLAY_FRAME_VM,     /* an agent's VM frame (mixed mode); addr is the VM's pc */
};

struct replay_sym_frame {
	enum replay_frame_kind kind; /* INLINE: inlined into the frame before it */
	const char *function;        /* NULL when unknown; "[truncated]", "[plt]" */
	const char *file;            /* source file, NULL when unknown */
	uint32_t line;
	const char *module;          /* path as mapped; NULL when in no file */
	const char *build_id;        /* the module's build-id in hex, NULL or "" when unknown */
	uint64_t addr;               /* module-relative pc (return addresses as found), 0 unknown */
	uint64_t pc;                 /* the runtime address */
	uint64_t sym_start;          /* module-relative start of the function, 0 unknown */
	uint32_t first_line;         /* a Python frame's co_firstlineno, 0 unknown */
};

struct replay_sym_stack {
	const struct replay_stack *raw;
	const struct replay_sym_frame *frames; /* outermost first: [truncated], user, kernel */
	size_t n;
	const char *comm;
	/* The same for samples whose frames are the same (frames is then the same pointer,
	 * valid until the replay ends): 1, 2, ...; 0 when not known. */
	uint32_t id;
};

/* Calls fn for every sample of d with its frames unwound (method) and named by the perf-map
 * source (JIT code; the recording's copies in perf_jit_dir(d->path)), then the ELF source
 * with inline frames; kernel frames from /proc/kallsyms when readable. Strings live
 * until replay_symbolized_data returns. q receives the unwind quality. */
int replay_symbolized_data(struct perf_data *d, enum unw_method method,
			   int (*fn)(const struct replay_sym_stack *st, void *arg), void *arg,
			   struct replay_quality *q);

/* ---- frame sources ----
 *
 * What names the unwound frames of a sample. A namer asks its sources in turn about each
 * unwound frame, from the outermost in; the first that claims the frame names it, and the
 * ELF source, always last, names whatever the others leave. A source names a frame by
 * pushing frames in its place, outermost first: the function and its inline frames (ELF),
 * a run of frames spliced in where the native one was (an interpreter's eval loop becoming
 * the script's frames, a JIT region becoming its method), or nothing (the frame dropped).
 * perf-PID.map and jitdump JIT frames, CPython frames and the agent's VM frames plug in
 * here; a source sees the whole sample (registers, stack copy, callchain) and all its
 * unwound frames, so it may also read state that only the moment of the sample holds.
 */
struct replay_frames; /* the stack being named, outermost frame first */

/* A new frame of kind at the inner end of out, zeroed but for kind; NULL when the stack is
 * full (4096 frames: what does not fit is left out). Its strings must live as long as the
 * namer. */
struct replay_sym_frame *replay_frames_push(struct replay_frames *out,
					    enum replay_frame_kind kind);

struct replay_frame_source_ops {
	/* Names st->frames[i] (0: the innermost, at the sampled pc; i + 1 is its caller) by
	 * pushing frames onto out. 1: named; 0: not this source's, the next one is asked;
	 * negative: an error (its message set) that ends the replay. */
	int (*name_frame)(void *self, const struct replay_stack *st, size_t i,
			  struct replay_frames *out);
	/* Called before the frames of each stack are named, with the stack (NULL: not
	 * needed): a source that splices by the whole sample decides there. 0 or negative. */
	int (*begin_stack)(void *self, const struct replay_stack *st);
	/* Offered every record that is no sample of cost (see replay_unwind_each), in time
	 * order among the stacks (NULL: not needed). 0 or negative, which ends the replay. */
	int (*record)(void *self, const struct perf_event_rec *ev);
	/* Frees self; NULL when there is nothing to free. */
	void (*close)(void *self);
	/* The names depend on more than each frame's module and address (on the moment of the
	 * sample): stacks are then named anew every time instead of taken from the memo. */
	bool per_sample;
};

struct replay_frame_source {
	const struct replay_frame_source_ops *ops;
	void *self;
};

/* The ELF source: tally_symbolize on the file the unwinder read, inline frames, PLT stubs
 * as "[plt]", frames without a symbol as their module and address. It names every frame.
 * 0, or -ENOMEM with the message set. */
int replay_elf_source_new(struct replay_frame_source *out);

/* The perf-map source: a frame in memory no ELF file backs (anonymous memory: JIT code) of
 * a process that has a perf-PID.map, named as a REPLAY_FRAME_JIT frame by the latest line
 * covering it, its module the map file. A process's map is jit_dir/perf-PID.map when the
 * directory jit_dir exists (the recording's copies, see perf_jit_dir; NULL: none), else
 * /tmp/perf-PID.map; bad lines are warned about on stderr and left out. Frames no line
 * covers are left to the next source. 0, or -ENOMEM with the message set. */
int replay_perfmap_source_new(const char *jit_dir, struct replay_frame_source *out);

/* The CPython frame source: the Python frames tally record captured at each sample's
 * instant (bpf-output payloads of d, handed over in time order through the record op)
 * spliced, as REPLAY_FRAME_PYTHON frames, in place of the _PyEval_EvalFrameDefault
 * activations that ran them; outcomes counted in *stats, which must outlive the source.
 * out->ops is NULL when d has no bpf-output event. 0, or -ENOMEM with the message set. */
int replay_python_source_new(const struct perf_data *d, struct replay_python_stats *stats,
			     struct replay_frame_source *out);

/* The agent's VM frame source (mixed mode, include/tally/agent.h): the VM frames of the
 * loop records found in each sample's stack copy, checked against the agents' registries
 * (tally-vm-PID-N.dump in perf_jit_dir(d->path) when that directory exists, else in
 * /tmp), as REPLAY_FRAME_VM frames in place of the native frame holding the record;
 * outcomes counted in *stats, which must outlive the source. out->ops is NULL when no
 * registry is there. 0, or a negative code with the message set. */
int replay_vm_source_new(struct perf_data *d, struct replay_vm_stats *stats,
			 struct replay_frame_source *out);

/* Names stacks: "[truncated]" first when one was not unwound to its outermost frame, each
 * unwound frame by sources[0..n) then the ELF source, kernel frames last. The namer takes
 * the n sources over (closed by replay_namer_free, also when this fails); at most 7. */
struct replay_namer;
int replay_namer_new(const struct replay_frame_source *sources, size_t n,
		     struct replay_namer **out);
/* st named into *out; out->frames stays valid until the next call, or until the namer is
 * freed when out->id is not 0. 0, or a source's error. */
int replay_namer_name(struct replay_namer *nm, const struct replay_stack *st,
		      struct replay_sym_stack *out);
/* Offers ev to the sources that take records (replay_frame_source_ops.record). */
int replay_namer_record(struct replay_namer *nm, const struct perf_event_rec *ev);
void replay_namer_free(struct replay_namer *nm);

/* ---- as a profile ---- */

/* The unwind-quality counters of a perf.data's profile: counts of samples (unwound
 * stacks), of complete, truncated and single-frame stacks, the frames of all stacks, and
 * the JIT frames among them. */
#define REPLAY_COUNTER_SAMPLES "samples"
#define REPLAY_COUNTER_COMPLETE "unwind: complete stacks"
#define REPLAY_COUNTER_TRUNCATED "unwind: truncated stacks"
#define REPLAY_COUNTER_SINGLE "unwind: single-frame stacks"
#define REPLAY_COUNTER_FRAMES "unwind: frames"
/* Of those, the frames named as JIT code (perf maps); only when there are some. */
#define REPLAY_COUNTER_JIT_FRAMES "unwind: JIT frames"
/* Truncated stacks whose walk ended in JIT code, and the steps made with the CFI a JIT
 * wrote (jitdump's JIT_CODE_UNWINDING_INFO); only when there are some. */
#define REPLAY_COUNTER_JIT_STOPS "unwind: stopped in JIT code"
#define REPLAY_COUNTER_JIT_CFI_STEPS "unwind: JIT CFI steps"
/* Python frames (recordings with them only): the samples that have some, the frames, and
 * the samples that kept native frames in their place, by reason. */
#define REPLAY_COUNTER_PY_SAMPLES "python: samples with Python frames"
#define REPLAY_COUNTER_PY_FRAMES "python: frames"
#define REPLAY_COUNTER_PY_INCONSISTENT "python: stacks inconsistent"
#define REPLAY_COUNTER_PY_CODE_UNKNOWN "python: code unknown"
#define REPLAY_COUNTER_PY_UNRECORDED "python: stacks not recorded"
#define REPLAY_COUNTER_PY_CUT "python: stacks cut"
#define REPLAY_COUNTER_PY_BETWEEN "python: eval loop between frames"
#define REPLAY_COUNTER_PY_MALFORMED "python: malformed records"
/* VM frames of mixed mode (recordings with a registry only): the samples that have some,
 * the frames, and the loop records that left their native frame in place, by reason. */
#define REPLAY_COUNTER_VM_SAMPLES "vm: samples with VM frames"
#define REPLAY_COUNTER_VM_FRAMES "vm: frames"
#define REPLAY_COUNTER_VM_MALFORMED "vm: records of another layout"
#define REPLAY_COUNTER_VM_CHANGING "vm: stacks changing"
#define REPLAY_COUNTER_VM_EMPTY "vm: records without frames"
#define REPLAY_COUNTER_VM_TOO_DEEP "vm: stacks deeper than their record"
#define REPLAY_COUNTER_VM_UNREADABLE "vm: frames outside the stack copy"
#define REPLAY_COUNTER_VM_NO_REGISTRY "vm: no registry"
#define REPLAY_COUNTER_VM_UNKNOWN "vm: function not registered"
#define REPLAY_COUNTER_VM_PC_OUTSIDE "vm: pc outside its function"

/* The profile of a perf.data: metrics samples/count and cpu/nanoseconds (clock events) or
 * events/count, stacks unwound with method and symbolized, unwind quality as counters. */
struct prof;
int replay_profile(struct perf_data *d, enum unw_method method, struct prof **out);
/* One line of shares from those counters ("unwind:   99.7% complete, 0.3% truncated, ...";
 * a share is rounded to 0% or 100% only when exact); nothing when p has none. */
void replay_quality_summary(FILE *out, const struct prof *p);
/* "12.5%" with the fewest decimals (at least one) that keep a non-zero share above 0 and a
 * partial one below 100; "0%" and "100%" only when exact. */
const char *replay_share(char *buf, size_t size, uint64_t part, uint64_t whole);

#endif
