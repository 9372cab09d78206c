/*
 * The profile model: interned strings, modules and frames, and a calling-context tree (CCT)
 * whose nodes carry self weights per metric and per-pc weights. Every source (sampler, sBPF
 * VM, interpreter runtime, file reader) builds one of these; every output reads one. The
 * model knows nothing of where samples came from or how they are shown.
 *
 * Ownership: a struct prof owns all its strings, frames, nodes and weights; prof_free()
 * releases everything. Not thread-safe: a profile has one owner at a time. Ids (strings,
 * modules, frames, nodes, pc entries) are dense uint32_t indexes valid for the profile's
 * lifetime; id 0 of strings is "" and node 0 is the synthetic root (frame PROF_NONE).
 */
#ifndef TALLY_PROFILE_H
#define TALLY_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_NONE UINT32_MAX /* "no frame / no module / end of list" */
#define PROF_ROOT 0u	     /* the root node: no frame, never has self weight */

struct prof;

/* ---- strings ---- */

/* Interns len bytes (any bytes but NUL, not necessarily UTF-8); 0 for "". On failure
 * returns PROF_NONE (out of memory; message set). */
uint32_t prof_intern(struct prof *p, const char *s, size_t len);
uint32_t prof_intern_cstr(struct prof *p, const char *s); /* NULL interns as "" */
const char *prof_str(const struct prof *p, uint32_t id);

/* ---- metrics (pprof sample types) ---- */

struct prof_metric {
	uint32_t type; /* string id: "samples", "cpu", "cu", ... */
	uint32_t unit; /* string id: "count", "nanoseconds", ... */
};

/* Declares a metric; only before the first weight is added (-EBUSY after). Returns its
 * index (>= 0) or a negative code. A type/unit pair already declared returns its index. */
int prof_add_metric(struct prof *p, const char *type, const char *unit);
size_t prof_nmetrics(const struct prof *p);
const struct prof_metric *prof_metric(const struct prof *p, size_t i);
/* Index of the metric with this type (unit NULL: any), or -ENOENT. */
int prof_find_metric(const struct prof *p, const char *type, const char *unit);

/* ---- modules ---- */

/* A loaded object (executable, library, kernel, sBPF program). Addresses in frames and
 * nodes are module-relative: the address as the module's own file sees it (what
 * `tally symbolize -e MODULE` takes). base is what was added at run time (load bias): the
 * runtime address is base + relative; 0 when unknown or irrelevant. Caveat: other tools'
 * pprof files give file offsets, which the reader turns into vaddrs through the module's
 * PT_LOAD segments; when its file was not at hand then, relative stays a file offset (the
 * vaddr for shared objects and bfd-linked PIE, not for non-PIE executables or lld's). */
struct prof_module {
	uint32_t path;	   /* string id */
	uint32_t build_id; /* string id: lowercase hex, "" when unknown */
	uint64_t base;
};

/* Interns a module (by path and build-id; base of the first wins). PROF_NONE on failure. */
uint32_t prof_module(struct prof *p, const char *path, const char *build_id_hex,
		     uint64_t base);
size_t prof_nmodules(const struct prof *p);
const struct prof_module *prof_module_at(const struct prof *p, uint32_t id);

/* ---- frames ---- */

/* Kinds, in the order used for sorting. An inline frame is a function inlined into the
 * frame that is its parent in the tree (same machine code, no call of its own). */
enum prof_kind {
	PROF_NATIVE,
	PROF_INLINE,
	PROF_VM,	/* an interpreter's (bytecode) frame */
	PROF_SYSCALL,	/* a syscall (sBPF syscalls, or a kernel entry point) */
	PROF_PROGRAM,	/* an sBPF program entered through CPI, or a whole program */
	PROF_KERNEL,
	PROF_TRUNCATED, /* the stack could not be recovered beyond this point */
	PROF_JIT,	/* code a runtime compiled (named by a perf map or jitdump); last so
			   that the order of the kinds before it, and of every output, stays */
	PROF_PYTHON,	/* a CPython frame (line: co_firstlineno); after PROF_JIT for the same
			   reason */
	PROF_RUBY,	/* a Ruby frame (an iseq's, or a C method's as Ruby's backtrace shows
			   it); last, for the same reason */
	PROF_NKINDS
};
const char *prof_kind_name(enum prof_kind k); /* "native", "inline", ... */

/* A frame is a function (the unit a report counts), not a pc: two samples in the same
 * function at different pcs share the frame and differ in their per-pc weights. */
struct prof_frame {
	uint8_t kind;	   /* enum prof_kind */
	uint32_t function; /* string id, 0 when unknown */
	uint32_t label;	   /* string id, never 0: the function, or "module+0xADDR", or
			      "0xADDR", or "[truncated]": what outputs print */
	uint32_t file;	   /* string id of the source file, 0 when unknown */
	uint32_t line;	   /* first line of the function, 0 when unknown */
	uint32_t module;   /* module id or PROF_NONE */
	uint64_t addr;	   /* module-relative start of the function; 0 when unknown. A frame
			      with no function name is identified by this address (use the pc). */
};

/* What a source describes; strings are copied (interned). */
struct prof_frame_desc {
	enum prof_kind kind;
	const char *function; /* NULL when unknown */
	const char *file;     /* NULL when unknown */
	uint32_t line;
	uint32_t module; /* from prof_module(), or PROF_NONE */
	uint64_t addr;
};

/* Interns a frame; PROF_NONE on failure (message set). Equal descriptions give equal ids. */
uint32_t prof_frame(struct prof *p, const struct prof_frame_desc *d);
size_t prof_nframes(const struct prof *p);
const struct prof_frame *prof_frame_at(const struct prof *p, uint32_t id);
/* Shorthand: prof_str(p, prof_frame_at(p, id)->label). */
const char *prof_frame_label(const struct prof *p, uint32_t id);
/* The total order used everywhere output order matters: label, module path, file, kind,
 * line, addr (bytewise string comparison; independent of interning order). */
int prof_frame_cmp(const struct prof *p, uint32_t a, const struct prof *pb, uint32_t b);

/* ---- the calling-context tree ---- */

/* A node is keyed by (parent, frame, call site). The call site is the pc (and its line)
 * in the parent's function at which this child was entered: it tells which inlined copy or
 * which call instruction made the call (the line is part of the key too; it matters when
 * the pc is unknown, 0, as in folded stacks or pprof files without addresses). Nodes are only appended, and a parent always has a smaller id than its
 * children (so a reverse pass over ids visits children before parents). */
struct prof_node {
	uint32_t parent;       /* PROF_NONE for the root */
	uint32_t frame;	       /* PROF_NONE for the root */
	uint32_t first_child;  /* PROF_NONE when none; in canonical order after prof_finish() */
	uint32_t next_sibling; /* PROF_NONE at the end */
	uint32_t first_pc;     /* per-pc weight entries of this node (prof_pcw), PROF_NONE */
	uint32_t depth;	       /* root 0 */
	uint32_t call_line;
	uint64_t call_pc;
};

/* Per-pc self weight of a node: where exactly in the function the cost landed. The sum of
 * a node's entries equals its self weight, metric by metric (every weight added to a node
 * is added at some pc, 0 when unknown). */
struct prof_pcw {
	uint64_t pc; /* module-relative, 0 when unknown */
	uint32_t line;
	uint32_t next; /* next entry of the same node, PROF_NONE at the end; ordered by pc,
			  line after prof_finish() */
};

size_t prof_nnodes(const struct prof *p);
const struct prof_node *prof_node_at(const struct prof *p, uint32_t id);
/* Self weights of a node: prof_nmetrics() values. */
const int64_t *prof_self(const struct prof *p, uint32_t node);
const struct prof_pcw *prof_pcw_at(const struct prof *p, uint32_t id);
const int64_t *prof_pcw_weights(const struct prof *p, uint32_t pcw);

/* The child of parent for (frame, call_pc, call_line), created when missing. Returns the
 * node id, or PROF_NONE on failure (message set). */
uint32_t prof_child(struct prof *p, uint32_t parent, uint32_t frame, uint64_t call_pc,
		    uint32_t call_line);
/* Adds weights (prof_nmetrics() values) to a node's self weight, at pc/line. */
int prof_add_self(struct prof *p, uint32_t node, uint64_t pc, uint32_t line,
		  const int64_t *weights);

/* ---- building from stacks ---- */

/* One entry of a stack: the frame and where in it execution was. */
struct prof_loc {
	uint32_t frame;
	uint32_t line; /* source line at pc, 0 when unknown */
	uint64_t pc;   /* module-relative, 0 when unknown */
};

/* Adds one sample (or aggregated stack): stack[0] is the innermost frame (where the cost
 * landed), stack[n-1] the outermost, as unwinders and pprof order them. An inline frame
 * is followed by the frame it was inlined into, with the same pc. n may be 0 (the weight
 * then goes to a "[truncated]" frame: cost is never dropped). */
int prof_add_stack(struct prof *p, const struct prof_loc *stack, size_t n,
		   const int64_t *weights);
/* The same, for a caller that adds the same stack again and again (a sampler's memo of
 * whole stacks): *kept starts as PROF_NONE, and is set to where p keeps the stack; a later
 * call with *kept so set must pass the same stack but for its innermost pc and line, and
 * finds it there without looking it up. */
int prof_add_stack_kept(struct prof *p, const struct prof_loc *stack, size_t n,
			const int64_t *weights, uint32_t *kept);

/* ---- threads and the samples' timeline ----
 *
 * A source that knows which thread each sample came from, and when, adds it with
 * prof_add_sample: the weight goes into the tree as prof_add_stack_kept would put it, and
 * the sample is logged (time, thread, the node and pc entry it went to, its weights), in
 * the order added. Outputs that know threads read the log; the others ignore it, so a
 * profile with threads gives them the same bytes as one without. Transforms carry the
 * log over; readers of formats without threads (pprof, folded) leave it empty. */

/* The metric type of time spent off CPU (blocked, sleeping, waiting for a CPU), unit
 * nanoseconds, charged to the stack the thread blocked in: beside cpu/nanoseconds, the
 * two add up to each thread's wall-clock time. */
#define PROF_OFF_CPU_METRIC "off-cpu"

struct prof_thread {
	uint32_t pid, tid;
	uint32_t name; /* string id: the thread's latest name (comm) */
};

/* Interns a thread by (pid, tid), and names it name: the last name given is kept (a
 * thread renames itself, a process execs). PROF_NONE on failure (message set). */
uint32_t prof_thread(struct prof *p, uint32_t pid, uint32_t tid, const char *name);
size_t prof_nthreads(const struct prof *p);
const struct prof_thread *prof_thread_at(const struct prof *p, uint32_t id);

/* Whether the sampled thread held its interpreter's global lock (CPython's GIL) at the
 * sample, as the source saw it. */
enum prof_gil {
	PROF_GIL_UNKNOWN, /* not an interpreter's thread, or not read */
	PROF_GIL_HELD,
	PROF_GIL_NOT_HELD,
};
const char *prof_gil_name(enum prof_gil g); /* "held", "not held"; NULL for unknown */

struct prof_sample {
	uint64_t time;	 /* nanoseconds, on the source's clock (0 when unknown) */
	uint32_t thread; /* prof_thread() id */
	uint32_t node;	 /* where the weight went */
	uint32_t pcw;	 /* and at which pc entry of that node */
	uint8_t gil;	 /* enum prof_gil */
};

/* prof_add_stack_kept (kept as there) for one sample of thread at time. */
int prof_add_sample(struct prof *p, uint32_t thread, uint64_t time,
		    const struct prof_loc *stack, size_t n, const int64_t *weights,
		    uint32_t *kept);
size_t prof_nsamples(const struct prof *p);
const struct prof_sample *prof_sample_at(const struct prof *p, size_t i);
const int64_t *prof_sample_weights(const struct prof *p, size_t i); /* nmetrics values */
/* Sets the GIL state of the sample added last (prof_add_sample). */
void prof_set_last_sample_gil(struct prof *p, enum prof_gil gil);

/* A finished profile of only the samples of thread (its log included), with p's metrics
 * and facts. */
int prof_thread_profile(const struct prof *p, uint32_t thread, struct prof **out);
/* A finished profile of only the samples whose GIL state is gil (their log included), with
 * p's metrics and facts. */
int prof_gil_profile(const struct prof *p, enum prof_gil gil, struct prof **out);

/* ---- building from calling-context events (exact sources: the sBPF VM, an interpreter's
 * exact mode) ---- */

/* The calling-context tree of a run as its source reports it: which frame it enters from
 * which call-site pc, when it returns, what each pc costs. During the run the builder
 * records only that, at the price a per-instruction hook can pay: a node per (parent, key,
 * call-site pc), and per node a dense array of the differences between the costs of
 * neighbouring pcs, so that a run of instructions costs two adds however long it is (see
 * prof_cct_count_run). prof_cct_build() then turns the tree into profile nodes, parents first:
 * a source that knows its frames only by keys (an entry pc, a syscall) symbolizes each
 * node once there, and may place a node below the inline frames of its call site and
 * spread its pc costs over inline frames. One metric per builder.
 *
 * Ownership: the builder owns its nodes and arrays; prof_cct_free() releases them. Node
 * ids are dense, the root (no frame, never any cost) is 0, and a parent's id is smaller
 * than its children's. */
struct prof_cct;

/* A node as the per-event calls below see it. */
struct prof_cct_at {
	/* n + 1 entries: the cost at pc lo + i is diffs[0] + ... + diffs[i] (mod 2^64); the
	 * last entry takes the end of a run that reaches the last pc */
	uint64_t *diffs;
	uint64_t lo, n;
	uint64_t key, call_pc;
	uint32_t node, parent;
};
/* Kept in front of the builder so that the per-event calls below inline (a source's hooks
 * run per instruction or per syscall): the builder's insides otherwise. cur is the current
 * node; up its parent as it was when cur was entered, so that a return needs no lookup;
 * last the child last returned from, so that entering it again from the same call site
 * (a loop around a call or a syscall) needs none either; leaf likewise for a cost added
 * to a child without entering it. */
struct prof_cct_hot {
	struct prof_cct_at cur, up, last;
	/* the child prof_cct_child_cost() last added to; no extent (n 0) when unknown */
	struct prof_cct_at leaf;
	bool up_ok, last_ok;
};

#define PROF_CCT_ROOT 0u
#define PROF_CCT_NO_KEY UINT64_MAX /* the root's key */

int prof_cct_new(struct prof_cct **out);
void prof_cct_free(struct prof_cct *c);
/* Enters the child of the current node keyed by (key, call_pc): the frame the source calls
 * key, entered from call_pc in the current node. 1 when the node is new, 0 when it was
 * there, negative on failure (message set). */
int prof_cct_enter_lookup(struct prof_cct *c, uint64_t key, uint64_t call_pc);
static inline int prof_cct_enter(struct prof_cct *c, uint64_t key, uint64_t call_pc)
{
	struct prof_cct_hot *h = (struct prof_cct_hot *)c;
	if (h->last_ok && h->last.parent == h->cur.node && h->last.key == key &&
	    h->last.call_pc == call_pc) {
		h->up = h->cur;
		h->up_ok = true;
		h->cur = h->last;
		return 0;
	}
	return prof_cct_enter_lookup(c, key, call_pc);
}
/* Sizes the pc array of a node just entered to [lo, lo + n) (its function's extent, as far
 * as the source knows it), so that the array grows less often. Optional. */
int prof_cct_span(struct prof_cct *c, uint64_t lo, uint64_t n);
/* Returns to the caller; -EINVAL (message set) at the root. */
int prof_cct_exit_lookup(struct prof_cct *c);
static inline int prof_cct_exit(struct prof_cct *c)
{
	struct prof_cct_hot *h = (struct prof_cct_hot *)c;
	if (h->up_ok && h->up.node == h->cur.parent) {
		h->last = h->cur;
		h->last_ok = true;
		h->cur = h->up;
		h->up_ok = false;
		return 0;
	}
	return prof_cct_exit_lookup(c);
}
/* The current node, its key, and making another node current (a run that unwinds several
 * frames at once, such as a program ended by a failure, returns straight to a node it
 * noted). */
static inline uint32_t prof_cct_current(const struct prof_cct *c)
{
	return ((const struct prof_cct_hot *)c)->cur.node;
}
static inline uint64_t prof_cct_key(const struct prof_cct *c)
{
	return ((const struct prof_cct_hot *)c)->cur.key;
}
void prof_cct_resume(struct prof_cct *c, uint32_t node);
/* Adds cost at pc of the current node (pc 0 when unknown); -EINVAL at the root. */
int prof_cct_cost_far(struct prof_cct *c, uint64_t pc, uint64_t cost);
static inline int prof_cct_cost(struct prof_cct *c, uint64_t pc, uint64_t cost)
{
	struct prof_cct_at *h = &((struct prof_cct_hot *)c)->cur;
	uint64_t off = pc - h->lo;
	if (__builtin_expect(off < h->n, 1)) {
		h->diffs[off] += cost;
		h->diffs[off + 1] -= cost;
		return 0;
	}
	return prof_cct_cost_far(c, pc, cost);
}
/* Adds cost at pc of the child keyed (key, call_pc) of the current node, made as
 * prof_cct_enter() makes it, without entering it: a leaf entered and left at once (a
 * syscall) at the price of one cost. The current node stays current. 1 when the child is
 * new, 0 when it was there, negative on failure (message set). */
int prof_cct_child_cost_lookup(struct prof_cct *c, uint64_t key, uint64_t call_pc,
			       uint64_t pc, uint64_t cost);
static inline int prof_cct_child_cost(struct prof_cct *c, uint64_t key, uint64_t call_pc,
				      uint64_t pc, uint64_t cost)
{
	struct prof_cct_hot *h = (struct prof_cct_hot *)c;
	uint64_t off = pc - h->leaf.lo;
	if (off < h->leaf.n && h->leaf.parent == h->cur.node && h->leaf.key == key &&
	    h->leaf.call_pc == call_pc) {
		h->leaf.diffs[off] += cost;
		h->leaf.diffs[off + 1] -= cost;
		return 0;
	}
	return prof_cct_child_cost_lookup(c, key, call_pc, pc, cost);
}
/* One unit of cost at each of the n consecutive pcs lo .. lo + n - 1 of the current node:
 * the per-instruction path (a source reports runs of instructions). Out of memory, or a
 * cost at the root, is remembered: prof_cct_ok() then says false and prof_cct_build()
 * fails. */
void prof_cct_count_run_far(struct prof_cct *c, uint64_t lo, uint64_t n);
static inline void prof_cct_count_run(struct prof_cct *c, uint64_t lo, uint64_t n)
{
	struct prof_cct_at *h = &((struct prof_cct_hot *)c)->cur;
	uint64_t off = lo - h->lo;
	if (__builtin_expect(off < h->n && n <= h->n - off, 1)) {
		h->diffs[off]++;
		h->diffs[off + n]--;
	} else {
		prof_cct_count_run_far(c, lo, n);
	}
}
/* False once prof_cct_count_run() failed. */
bool prof_cct_ok(const struct prof_cct *c);
/* The cost recorded so far, summed over the tree. */
uint64_t prof_cct_total(const struct prof_cct *c);

/* How a source places its nodes in the profile. Without callbacks (NULL), keys are frame
 * ids (prof_frame), each node is its frame's child of its parent's node at its call_pc,
 * and costs land at their pc (line unknown). */
struct prof_cct_place {
	void *ctx;
	/* The profile node of a recorded node: key's frame entered at call_pc from the node
	 * keyed parent_key, which became profile node parent (PROF_ROOT, parent_key
	 * PROF_CCT_NO_KEY, for the outermost frames). PROF_NONE on failure (message set). */
	uint32_t (*node)(void *ctx, struct prof *p, uint32_t parent, uint64_t parent_key,
			 uint64_t key, uint64_t call_pc);
	/* Where the cost at pc of the node keyed key (profile node node) lands: node or an
	 * inline frame below it, at module-relative *addr and source *line. PROF_NONE on
	 * failure (message set). */
	uint32_t (*pc)(void *ctx, struct prof *p, uint32_t node, uint64_t key, uint64_t pc,
		       uint64_t *addr, uint32_t *line);
};
/* Adds the tree's cost to p's metric, nodes placed by place (NULL: no callbacks). p needs
 * prof_finish() afterwards. */
int prof_cct_build(const struct prof_cct *c, struct prof *p, int metric,
		   const struct prof_cct_place *place);

/* ---- profile-wide facts ---- */

/* What an output's header shows. Strings are owned by the profile. */
struct prof_info {
	const char *source;   /* "perf.data: ./a.out", "sbpf: prog.so", file read; or NULL */
	int64_t time_ns;      /* start, Unix epoch ns; 0 unknown */
	int64_t duration_ns;  /* 0 unknown */
	int64_t period;	      /* sampling period in period_type units; 0 unknown */
	struct prof_metric period_type; /* string ids; 0/0 unknown */
	int default_metric;   /* index of the metric outputs show by default */
};
const struct prof_info *prof_info(const struct prof *p);
int prof_set_source(struct prof *p, const char *source);
void prof_set_times(struct prof *p, int64_t time_ns, int64_t duration_ns);
int prof_set_period(struct prof *p, int64_t period, const char *type, const char *unit);
int prof_set_default_metric(struct prof *p, int metric);

/* Named figures a source wants shown with the profile (unwind quality such as
 * "unwind.cfi", "unwind.fp", "unwind.truncated", lost samples...). Setting a name again
 * replaces its value. Kept in insertion order. */
int prof_set_counter(struct prof *p, const char *name, int64_t value);
size_t prof_ncounters(const struct prof *p);
void prof_counter_at(const struct prof *p, size_t i, const char **name, int64_t *value);

/* ---- life cycle ---- */

int prof_new(struct prof **out);
void prof_free(struct prof *p);
/* Puts children and per-pc entries in canonical order (prof_frame_cmp, then call_pc,
 * call_line; pcs by pc, line), so that iteration, and every output, depends only on the
 * profile's content, not on the order samples arrived in. Outputs require it; readers and
 * the functions below that return new profiles call it. Adding weight or nodes afterwards
 * is allowed and needs another prof_finish(). */
int prof_finish(struct prof *p);
/* True when no weight at all was added. */
bool prof_is_empty(const struct prof *p);

/* ---- reading ---- */

/* Depth-first walk in canonical order (finished profiles only). enter is called before a
 * node's children, leave (may be NULL) after; the root is visited too (depth 0). When enter
 * returns 1 the node's children are skipped (pruning); a negative value stops the walk and
 * is returned. Iterative: any depth is fine. */
typedef int (*prof_visit_fn)(const struct prof *p, uint32_t node, void *ctx);
int prof_walk(const struct prof *p, prof_visit_fn enter, prof_visit_fn leave, void *ctx);

/* Inclusive weight of every node: a malloc'd array of prof_nnodes() * prof_nmetrics()
 * values, node-major (out[node * nmetrics + metric]); caller frees. */
int prof_totals(const struct prof *p, int64_t **out);
/* Total of each metric over the whole profile (the root's inclusive weight). */
void prof_grand_total(const struct prof *p, int64_t *out);

/* Per-function figures. A function is a frame; its total counts a sample once even when
 * the function recurses. Arrays are malloc'd and owned by the struct. */
struct prof_funcs {
	size_t n;
	uint32_t *frame; /* n frame ids in canonical frame order */
	int64_t *self;	 /* n * nmetrics, row i for frame[i] */
	int64_t *total;	 /* n * nmetrics */
};
int prof_func_stats(const struct prof *p, struct prof_funcs *out);
void prof_funcs_free(struct prof_funcs *f);

/* ---- transformations: each returns a new finished profile; the input is unchanged ---- */

/* Adds src's weight into dst (metrics matched by type and unit; a metric of src missing
 * from dst is an error, -EINVAL with message). dst must not have weights yet for new
 * metrics. Counters are summed; times span both. dst needs prof_finish() afterwards. */
int prof_merge(struct prof *dst, const struct prof *src);

/* A frame predicate for the filters; typically matches the label against a regex. */
typedef bool (*prof_frame_pred)(const struct prof *p, uint32_t frame, void *ctx);

/* Keeps only the samples whose stack contains a matching frame (pprof's focus). */
int prof_focus(const struct prof *p, prof_frame_pred match, void *ctx, struct prof **out);
/* Removes matching frames from every stack; their self weight goes to their caller
 * (pprof's hide). A stack made only of hidden frames keeps its weight on the root's
 * "[hidden]" child rather than losing it. */
int prof_hide(const struct prof *p, prof_frame_pred match, void *ctx, struct prof **out);
/* Folds recursion: when a frame already on the path is entered again, the path returns to
 * that earlier occurrence (a;b;a;c becomes a;c, a;a;a becomes a). Totals are unchanged. */
int prof_fold_recursion(const struct prof *p, struct prof **out);
/* Drops call sites (call_pc/call_line become 0), merging siblings with the same frame:
 * the per-function tree that flame graphs, folded stacks and tree reports show. Per-pc
 * self weights are kept. */
int prof_merge_callsites(const struct prof *p, struct prof **out);

/* Regex matching for the predicates above (POSIX extended, against the label). */
struct prof_regex;
int prof_regex_compile(const char *pattern, struct prof_regex **out);
bool prof_regex_match_frame(const struct prof *p, uint32_t frame, void *regex);
void prof_regex_free(struct prof_regex *r);

/* ---- differential profiles ---- */

/* A diff model: the union of two profiles' call-site-free trees, as one profile with two
 * metrics: index PROF_DIFF_BEFORE holds BEFORE's weight of the chosen metric, index
 * PROF_DIFF_AFTER holds AFTER's (both named after that metric, types "before:TYPE" and
 * "after:TYPE"). Frames are matched by content (label, module path, file, kind), not by
 * id. Nodes present in only one profile have 0 in the other. metric_before/after select
 * the metric of each input (-1: its default). */
enum { PROF_DIFF_BEFORE = 0, PROF_DIFF_AFTER = 1 };
int prof_diff(const struct prof *before, int metric_before, const struct prof *after,
	      int metric_after, struct prof **out);

#endif
