/*
 * Unwinding user stacks from a register snapshot and a copy of the stack (what
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER give). DWARF CFI first (Go code without
 * it: Go's own SP-delta table), frame pointers as the fallback; every step is validated (the
 * return address lies in an executable mapping, the CFA moves up the stack) and a stack that
 * cannot be followed to its outermost frame is reported as truncated, with the reason and
 * the module where it stopped. x86-64 now: what is particular to it is in struct unw_arch;
 * the register file and CFI rows have room for aarch64's registers.
 *
 * Ownership: struct unw_ctx owns the modules (ELF files and their CFI) and the rule cache;
 * a struct unw_space (one process's mappings) borrows modules from the context that made it.
 * Neither is thread-safe.
 */
#ifndef TALLY_UNWIND_H
#define TALLY_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwarf/cfi.h"

/* DWARF register numbers on x86-64 (System V psABI, figure 3.36); 16 is the return address. */
enum { UNW_X86_RBX = 3, UNW_X86_RBP = 6, UNW_X86_RSP = 7, UNW_X86_RIP = 16 };
/* Room for aarch64's registers: x0-x30, sp (31) and the pc, given 32. */
enum { UNW_NREGS = 33 };

struct unw_regs {
	uint64_t r[UNW_NREGS]; /* by DWARF register number */
	uint64_t valid;        /* bit per register */
};

/* What the step code and replay know of an architecture; everything else is DWARF. Only
 * x86-64 exists (unw_arch_x86_64): aarch64 would be one more of these (sp 31, fp x29, the
 * return address x30 copied to a pc slot, callee-saved x19-x29, perf's x0..pc numbering)
 * and its lld/PLT habits, chosen from the recording's machine. */
struct unw_arch {
	const char *name;
	unsigned nregs;        /* DWARF numbers a CFI row may name here, the pc's included */
	unsigned sp, fp, pc;   /* pc: where a step leaves the return address it recovered */
	uint64_t callee_saved; /* registers a call preserves: the rest are unknown above it */
	/* The frame-pointer frame record: the saved fp at [fp], the return address at
	 * [fp + 8], the caller's sp fp + 16 (x86-64 and aarch64 alike). */
	const int8_t *dwarf_of_perf; /* perf's user-register numbers (asm/perf_regs.h) -> DWARF,
				      * -1 for none */
	unsigned nperf;
};

extern const struct unw_arch unw_arch_x86_64;

/* The user registers of a perf sample (PERF_SAMPLE_REGS_USER: its abi, 0 for none, the
 * attribute's sample_regs_user mask, and the values by perf's register numbers) by a's
 * DWARF numbers; registers a does not know are left out. */
void unw_regs_from_perf(const struct unw_arch *a, uint64_t abi, uint64_t mask,
			const uint64_t regs[64], struct unw_regs *out);

enum unw_method { UNW_AUTO, UNW_CFI, UNW_FP };

/* Why a stack ended. UNW_END_OUTERMOST is the only complete ending. */
enum unw_end { /* numbers kept in recordings (unw_walk_note): never renumbered */
	UNW_END_OUTERMOST,  /* the CFI marked the return address undefined (_start, clone), or
			     * a Go stack reached where Go's runtime starts it (unw_module) */
	UNW_END_NO_MAPPING, /* the pc lies in no executable mapping */
	UNW_END_NO_CFI,     /* no CFI for the pc and no usable frame pointer */
	UNW_END_STACK,      /* a value lay outside the copied stack */
	UNW_END_BAD_STEP,   /* the step failed validation (CFA not moving up, bad return address) */
	UNW_END_DEPTH,      /* the frame limit was reached */
	UNW_END_NO_REGS,    /* the sample has no user registers (kernel thread, lost regs) */
	UNW_END_FP_CHAIN,   /* a recorded frame-pointer chain stopped short of the outermost frame */
	UNW_END_COUNT
};

struct unw_module {
	char *path;   /* as the mapping names it */
	char *file;   /* the file actually read (a build-id cache copy), NULL for memory */
	struct elf_file *elf;
	char build_id[41];    /* the ELF's build-id in hex (up to 20 bytes), "" without one */
	struct elf_file *dbg; /* separate debug file, opened when .eh_frame does not cover a pc */
	struct dwarf_cfi *cfi;
	bool dbg_tried;
	bool failed;
	uint64_t stops; /* stacks that ended in this module */
	/* A Go binary's functions where every stack of its starts (runtime.goexit under each
	 * goroutine, runtime.mstart and runtime.rt0_go under each thread), as ELF vaddr
	 * ranges [lo, hi) from its .gopclntab: no CFI marks them outermost, and what lies
	 * above them is no frame. */
	uint64_t go_top[3][2];
	unsigned ngo_top;
	struct elf_gopclntab *go; /* that table (a Go binary's), for steps without CFI */
	uint32_t refs; /* mappings of spaces that name it */
	uint64_t tick; /* when it was last mapped (the context's count of unw_space_map) */
};

struct unw_mapping {
	uint64_t start, end, pgoff;
	uint32_t prot; /* PROT_* */
	struct unw_module *mod; /* NULL for anonymous memory and files we cannot open */
	/* The first executable segment of mod's file that the mapping covers, found when it
	 * was mapped (NULL: none): unw_file_vaddr's answer for most pcs, without a search. */
	const struct elf_segment *text;
};

/* Code a JIT placed in anonymous memory, [start, end), and the CFI it wrote for it (NULL:
 * none, frame pointers), borrowed from the context (unw_jit_code_new). */
struct unw_jit_code;
struct unw_jit_range {
	uint64_t start, end;
	struct unw_jit_code *code;
};

struct unw_space {
	struct unw_mapping *maps; /* sorted by start, not overlapping */
	size_t n, cap;
	struct unw_jit_range *jits; /* sorted by start, not overlapping */
	size_t njits, capjits;
	uint64_t stamp; /* new, and unique, after every change of maps or jits */
};

struct unw_frame {
	uint64_t pc;           /* return addresses as found; frame 0 is the sampled ip */
	uint64_t sp;           /* the stack pointer in this frame (its locals lie from here up
				* to its caller's sp); 0 when unknown (callchains) */
	const struct unw_module *mod;
	uint64_t rel;          /* the address in the module's ELF file (vaddr), 0 without one */
	bool by_fp;            /* this frame's caller was found through the frame pointer */
	bool by_jit_cfi;       /* ... through the CFI a JIT wrote for its code */
};

struct unw_stats {
	uint64_t samples, complete, single, truncated, frames, fp_steps;
	uint64_t jit_cfi_steps; /* steps made with a JIT's CFI (unw_space_jit) */
	uint64_t reused; /* frames copied from the walk before (memo.c), not walked again */
	uint64_t ends[UNW_END_COUNT];
};

struct unw_ctx;

/* root: prefix for module paths (e.g. /proc/PID/root), NULL for none. */
int unw_ctx_new(enum unw_method method, struct unw_ctx **out);
void unw_ctx_free(struct unw_ctx *c);
const struct unw_stats *unw_ctx_stats(const struct unw_ctx *c);
const struct unw_arch *unw_ctx_arch(const struct unw_ctx *c);
/* Modules in the order they were opened, for reports of where stacks stopped. */
size_t unw_ctx_modules(const struct unw_ctx *c, struct unw_module *const **mods);
/* Keeps at most max modules that no mapping of a space names any more, closing the least
 * recently mapped first as a new module is opened (0, the default: all of them, as a
 * report's figures of where stacks stopped need). For a context that lives as long as a
 * recording (tally record), whose processes map ever new files: what it holds is then the
 * modules mapped now and max + 1 more. */
void unw_ctx_bound_unused(struct unw_ctx *c, size_t max);

/* The build-id the recording saw for path (perf.data's build-id feature). A file whose
 * build-id differs (rebuilt since) is replaced by its copy in perf's build-id cache
 * ($PERF_BUILDID_DIR or ~/.debug: .build-id/xx/rest/elf, [vdso]/ID/vdso), or not used. */
int unw_ctx_expect_build_id(struct unw_ctx *c, const char *path, const uint8_t *id, size_t len);

/* Adds a mapping of path (a file, "[vdso]", or "" for anonymous memory), replacing whatever
 * it overlaps, as mmap does. */
int unw_space_map(struct unw_ctx *c, struct unw_space *s, uint64_t start, uint64_t end,
		  uint64_t pgoff, uint32_t prot, const char *path);
int unw_space_copy(struct unw_space *dst, const struct unw_space *src);
void unw_space_clear(struct unw_space *s);
const struct unw_mapping *unw_space_find(const struct unw_space *s, uint64_t addr);

/* The CFI a JIT wrote for one piece of its code, code_size bytes (jitdump's
 * JIT_CODE_UNWINDING_INFO): an .eh_frame and its .eh_frame_hdr (either may be absent), laid
 * out as perf inject lays them in the ELF file it makes of the code, and as V8 keeps them
 * behind its code: the .eh_frame at the first multiple of 8 at or past the code's end, the
 * .eh_frame_hdr right after it, so that their pc-relative pointers lead to the code. */
struct unw_jit_cfi_opts {
	size_t sz;        /* sizeof(struct unw_jit_cfi_opts) */
	const char *name; /* for messages: the dump and the code, copied */
	uint64_t code_size;
	const uint8_t *eh_frame, *eh_frame_hdr;
	size_t eh_frame_size, eh_frame_hdr_size;
};
/* Makes such CFI, owned by c (freed with it); the bytes must outlive c. The same may serve
 * the code at several places (a JIT moves code). 0, -EINVAL for opts it does not know, or
 * -ENOMEM (messages set). */
int unw_jit_code_new(struct unw_ctx *c, const struct unw_jit_cfi_opts *o,
		     struct unw_jit_code **out);
/* From now on, code at [start, end) of s is code (NULL: code without CFI, walked by frame
 * pointers), and any JIT code s had overlapping it is gone: a JIT reuses the memory of code
 * it freed. Used for pcs in anonymous memory only (no file backs JIT code); CFI steps with
 * it are validated as every other. */
int unw_space_jit(struct unw_space *s, uint64_t start, uint64_t end,
		  struct unw_jit_code *code);

/* Unwinds; writes at most max frames to out and returns how many it wrote. *end says why
 * the walk ended (UNW_END_OUTERMOST: complete). Statistics are updated. */
size_t unw_unwind(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *regs,
		  const uint8_t *stack, uint64_t stack_size, struct unw_frame *out, size_t max,
		  enum unw_end *end);

/* A stack copy of which only the first size bytes may be at hand (perf.data samples are
 * read a prefix at a time: most walks never look further): the copy holds total valid
 * bytes, and fetch, called when the walk reads past what it has, makes at least need of
 * them (need <= total) available in *data and *size and returns 0, or returns a negative
 * code that ends the walk (the caller's error, which it has set). fetch may be NULL when
 * size == total. */
struct unw_stack {
	const uint8_t *data;
	uint64_t size, total;
	int (*fetch)(void *arg, uint64_t need, const uint8_t **data, uint64_t *size);
	void *arg;
};

/* unw_unwind on such a copy. *fetch_err is fetch's failure, 0 without one; after one the
 * frames are not to be used (the caller fails). */
size_t unw_unwind_stack(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *regs,
			const struct unw_stack *stack, struct unw_frame *out, size_t max,
			enum unw_end *end, int *fetch_err);

/* Frames from a callchain the kernel recorded by walking frame pointers (--call-graph fp,
 * perf record -g): ips[0] is the sampled ip. The chain is cut at the first address outside
 * an executable mapping; it is complete only when its last frame is an outermost one by
 * the CFI (return address undefined there). Statistics are updated. */
size_t unw_from_callchain(struct unw_ctx *c, const struct unw_space *s, const uint64_t *ips,
			  size_t nips, struct unw_frame *out, size_t max, enum unw_end *end);

/* What tally record keeps of a walk beside the chain it stores (perf_sample_unwound's
 * note): how the walk ended (enum unw_end, whose numbers are therefore fixed) and the
 * frame-pointer steps it took, so that a report counts the chain as a replay of the stack
 * copy would. */
uint32_t unw_walk_note(enum unw_end end, const struct unw_frame *f, size_t n);

/* The same for a chain tally record unwound while recording, judged as the walk that made
 * it judged it: a first frame in no mapping is kept (the walk keeps it), and a last frame
 * without CFI that returns into the entry point is outermost (the walk's step ends there).
 * note: the walk's (unw_walk_note), whose ending and frame-pointer steps are then counted;
 * NULL for chains stored without one (files of December 2026 and before), which are judged
 * by those rules alone, their frame-pointer steps uncounted. */
size_t unw_from_unwound_chain(struct unw_ctx *c, const struct unw_space *s,
			      const uint64_t *ips, size_t nips, const uint32_t *note,
			      struct unw_frame *out, size_t max, enum unw_end *end);

/* The ELF vaddr of an address in a mapping of a file; false when no segment holds it. */
bool unw_file_vaddr(const struct unw_mapping *m, uint64_t addr, uint64_t *vaddr);

const char *unw_end_name(enum unw_end e);

#endif
