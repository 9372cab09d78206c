/*
 * Internals shared by the files of src/unwind: the context, module loading, the rule cache.
 */
#ifndef TALLY_UNWIND_INTERNAL_H
#define TALLY_UNWIND_INTERNAL_H

#include "base/slot_cache.h"
#include "base/vec.h"
#include "unwind/unwind.h"

/* A direct-mapped cache of CFI rows by (module, vaddr): sampled pcs repeat a lot, and running
 * the CIE and FDE programs for each step is the bulk of the cost without it. Its entries
 * (1 KiB each) are allocated as slots are first used (base/slot_cache.h). */
#define UNW_CACHE_SIZE 2048

struct unw_cache_entry {
	const struct unw_module *mod;
	uint64_t vaddr;
	int result; /* 0 or -ENOENT */
	uint64_t rules; /* bit per register whose rule is not DWARF_RULE_UNSET */
	struct dwarf_cfi_row row;
};

struct unw_expect {
	char *path;
	uint8_t id[20];
	uint8_t len;
};

struct unw_ctx {
	enum unw_method method;
	const struct unw_arch *arch;
	struct unw_expect *expects;
	size_t nexpects, capexpects;
	struct unw_module **mods;
	size_t nmods, capmods;
	size_t max_unused; /* unw_ctx_bound_unused, 0: no bound */
	uint64_t ticks;    /* unw_space_map calls: the modules' clock */
	struct slot_cache cache;     /* of struct unw_cache_entry */
	struct unw_cache_entry spare; /* for a row the cache has no memory to keep */
	struct unw_stats stats;
	struct unw_memo *memo; /* the last walk (memo.c), or NULL */
	VEC(struct unw_jit_code *) jits; /* jit.c */
};

/* A JIT's CFI for one piece of code, as a module without a file: the rule cache and the
 * CFI step take it as they take an ELF file's, its addresses counted from the code's
 * start. */
struct unw_jit_code {
	struct unw_module mod;
	uint64_t size;
};

/* A new stamp for s, after a change (space.c). */
void unw_space_restamp(struct unw_space *s);
/* The JIT range of s holding addr, NULL for none (jit.c). */
const struct unw_jit_range *unw_jit_find(const struct unw_space *s, uint64_t addr);
void unw_jit_free_all(struct unw_ctx *c);

/* The module of path, opened the first time (closing unreferenced ones beyond the bound
 * first, unw_ctx_bound_unused); its tick is set. */
struct unw_module *unw_module_get(struct unw_ctx *c, const char *path);
bool unw_module_try_debug(struct unw_module *m);
void unw_module_free(struct unw_module *m);

/* The row for vaddr in m, through the cache: 0, -ENOENT, or another negative code. *rules
 * (when not NULL): the registers the row has a rule for, so that a step visits only them. */
int unw_rule_lookup(struct unw_ctx *c, struct unw_module *m, uint64_t vaddr,
		    const struct dwarf_cfi_row **row, uint64_t *rules);
/* Drops m's rows from the cache, before m is freed (another module may get its address). */
void unw_rule_forget(struct unw_ctx *c, const struct unw_module *m);

/* memo.c: the last walk, noted so that the next can copy the frames they share. A walk
 * notes each frame's registers (unw_memo_step, before its step), each read its steps
 * make (unw_memo_read), and which registers each step used and passed on unchanged
 * (unw_memo_stepped) into what unw_memo_begin gives, and hands its frames to
 * unw_memo_end, which keeps them for the next walk unless a note could not be made or the
 * stack copy could not be fetched. unw_memo_match finds, for a frame past the first, the
 * frame of the last walk in the same unchanged space with the same registers (those that
 * decide the rest of the walk); when every read the last walk made from there (its reads
 * from steps[at].first_read on) reads the same now, unw_memo_copy copies the frames from
 * there to out and goes on noting as the last walk did, and returns how many it copied,
 * adding the frame-pointer and JIT CFI steps among them to stats. */
struct unw_memo;
struct memo_read {
	uint64_t addr, value;
	uint32_t size;
	bool ok;
};

struct memo_step {
	uint64_t valid, sp;  /* at the frame, before its step: the registers known, the sp */
	bool signal;         /* the frame below was a signal frame */
	uint32_t first_read;  /* its step's reads start there */
	/* Registers (bits by DWARF number) whose validity and value the step read, and those
	 * it passed on to the caller's frame unchanged; then, once the walk is over, those
	 * whose validity and value decide this frame and every frame above it. */
	uint64_t uses, passes, live;
};

struct memo_walk {
	const struct unw_arch *arch;
	const struct unw_space *space;
	uint64_t stamp; /* the space's, when the walk was made */
	bool ok;        /* noted in full: usable */
	enum unw_end end;
	size_t n; /* frames, and steps (one per frame) */
	struct unw_frame *frames;
	struct memo_step *steps;
	uint64_t *values; /* each step's registers' values, arch->nregs of them */
	size_t cap;
	VEC(struct memo_read) reads; /* no more than UINT32_MAX: steps count them in 32 bits */
};

/* Room for more reads: false, and w no longer ok, when there is none. */
bool unw_memo_reads_room(struct memo_walk *w, size_t more);
struct unw_memo *unw_memo_new(void);
void unw_memo_free(struct unw_memo *mo);
struct memo_walk *unw_memo_begin(struct unw_memo *mo, const struct unw_arch *a,
				 const struct unw_space *s);
void unw_memo_step(struct memo_walk *w, const struct unw_regs *regs, bool signal, size_t at);
void unw_memo_stepped(struct memo_walk *w, uint64_t uses, uint64_t passes);
/* Inline: every read of every walk is noted. */
static inline void unw_memo_read(struct memo_walk *w, uint64_t addr, unsigned size,
				 uint64_t value, bool ok)
{
	if (!w->ok || (w->reads.n == w->reads.cap && !unw_memo_reads_room(w, 1)))
		return;
	w->reads.v[w->reads.n++] = (struct memo_read){ addr, ok ? value : 0, size, ok };
}
const struct memo_walk *unw_memo_match(const struct unw_memo *mo, const struct unw_arch *a,
				       const struct unw_space *s, const struct unw_regs *regs,
				       bool signal, size_t *at);
size_t unw_memo_copy(const struct memo_walk *from, size_t at, struct memo_walk *to,
		     struct unw_frame *out, struct unw_stats *stats, enum unw_end *end);
void unw_memo_end(struct unw_memo *mo, struct memo_walk *w, const struct unw_frame *frames,
		  size_t n, enum unw_end end, bool fetch_failed);

#endif
