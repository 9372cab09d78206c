/*
 * The module index, shared by the files of src/symbolize only.
 *
 * Per module: the symbol tables, and the address ranges of every compile unit, made
 * disjoint. Per unit, built on first use: the subprogram and inlined-subroutine DIEs
 * ("scopes") with resolved names and call sites, a disjoint address map from ranges to the
 * innermost scope, and the unit's line table.
 */
#ifndef TALLY_SYMBOLIZE_INTERNAL_H
#define TALLY_SYMBOLIZE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/arena.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"
#include "elf/gopclntab.h"
#include "symbolize/symbolize.h"

struct sym_scope {
	const char *name;     /* demangled unless asked not to; NULL when DWARF has none */
	uint64_t die_offset;  /* where its name is found: the DIE, or the abstract origin it
			       * names itself through (see names.c) */
	int32_t parent;       /* enclosing scope in this unit, -1 for none */
	bool inlined;         /* DW_TAG_inlined_subroutine (else subprogram) */
	atomic_uchar naming;  /* SCOPE_*: name and cxx_plain_name are set on first use */
	bool cxx_plain_name;  /* a C++ subprogram named by DW_AT_name alone (see lookup.c) */
	uint32_t call_file, call_line, call_column;
	uint64_t low;         /* start of its first range, UINT64_MAX when it has none */
};

struct sym_span {
	uint64_t lo, hi; /* [lo, hi) */
	int32_t scope;
};

enum { UNIT_UNBUILT, UNIT_BUILDING, UNIT_READY };
enum { SCOPE_UNNAMED, SCOPE_NAMING, SCOPE_NAMED };

struct sym_unit_index {
	atomic_int state; /* UNIT_*: one thread builds, others wait on the module's cond */
	int error; /* the unit's DWARF is unusable: treated as having no scopes */
	struct sym_scope *scopes;
	size_t nscopes;
	struct sym_span *spans; /* disjoint, sorted by lo */
	size_t nspans;
	struct dwarf_line_table lines;
	bool has_lines;
	bool cxx; /* the unit is C++ */
};

struct sym_cu_range {
	uint64_t lo, hi;
	uint32_t unit;
};

struct sym_symbols {
	struct elf_symtab tab; /* aliases kept: see symbols.c for whose choice is whose */
	const char *_Atomic *demangled; /* per symbol, demangled when first named */
};

struct sym_cfi_func {
	uint64_t start, end; /* an FDE's [start, end), inside one section of code */
};

struct sym_module {
	struct sym_opts opts;
	struct elf_file *elf;       /* the module */
	struct elf_file *debug_elf; /* its separate debug file, or NULL */
	struct dwarf *dwarf;        /* from whichever of the two has .debug_info, or NULL */
	struct sym_symbols symbols; /* the module's .symtab, else its .dynsym */
	struct sym_symbols fallback; /* the debug file's symbols: see sym_fallback() */
	struct sym_loader *loader;   /* loads them: see sym_symbols_start() */
	struct sym_cu_range *cu_ranges;
	size_t ncu_ranges;
	struct sym_unit_index *units; /* parallel to dwarf->units */
	size_t nunits_indexed;        /* how many of them units has room for */
	pthread_mutex_t lock;         /* with built: for threads waiting on another's build */
	pthread_cond_t built;
	pthread_mutex_t names_lock;   /* guards arena and names */
	/* Front mode (front.c): dwarf reads .debug_info only as far as lookups so far
	 * needed; lookups take front_lock while it lasts. */
	atomic_bool front;
	pthread_mutex_t front_lock;
	struct sym_front *fr;
	/* The batch's units in the order it needs them (sym_prepare), and the next one no
	 * thread has taken. */
	uint32_t *plan;
	size_t nplan;
	atomic_size_t plan_next;
	/* The functions of the unwind tables (cfi_funcs.c), indexed when a lookup first finds
	 * no name; cfi_lock guards the build. cfi_pages[p] counts the functions that start
	 * below cfi_base + (p << cfi_shift), for p up to cfi_npages. */
	pthread_mutex_t cfi_lock;
	atomic_bool cfi_built;
	struct sym_cfi_func *cfi_funcs;
	size_t ncfi_funcs;
	uint32_t *cfi_pages;
	size_t cfi_npages;
	uint64_t cfi_base;
	unsigned cfi_shift;
	/* Go's own table (go.c), for a Go binary without DWARF: NULL otherwise. */
	struct elf_gopclntab *go;
	struct arena arena;           /* names */
	struct bulk bulk;             /* what unit indexes hold: scopes, spans, line rows */
	struct sym_name_cache *names;
};

/* module.c */
/* Opens src's DWARF whole into m->dwarf (NULL when unusable, with a warning). */
void sym_open_dwarf(struct sym_module *m, struct elf_file *src);
/* The address ranges of every unit of m->dwarf, and room for their indexes. */
int sym_index_units(struct sym_module *m);
/* The same after m->dwarf has read more units (front mode): the indexes built so far
 * stay, room is made for the new units' (m->units may move), all ranges are worked out
 * again. */
int sym_index_more_units(struct sym_module *m);
/* Calls fn for each non-empty range of f's .debug_aranges: 0, 1 when the table is damaged
 * (fn saw the ranges before the damage), -ENOENT without a table, or fn's error. */
int sym_aranges_walk(struct elf_file *f, int (*fn)(uint64_t info_off, uint64_t lo, uint64_t hi,
						    void *ctx),
		     void *ctx);
/* Frees the unit indexes and ranges (m->dwarf stays). */
void sym_drop_units(struct sym_module *m);

/* front.c: whether src's DWARF is read in front mode (then m->dwarf stays NULL until the
 * first lookup). */
bool sym_front_open(struct sym_module *m, struct elf_file *src);
/* A lookup in front mode; false when front mode is over (the caller goes on in full). */
bool sym_front_lookup(struct sym_module *m, uint64_t addr, enum sym_style style,
		      struct tally_frame *frames, size_t max, int *n);
/* Leaves front mode: m->dwarf read whole. Takes front_lock. */
void sym_front_end(struct sym_module *m);
void sym_front_free(struct sym_module *m);
/* The .debug_aranges sets front mode read at open, each passed to fn as sym_aranges_walk()
 * passes them (fn's first error is returned); -ENOENT when the module never had a front. */
int sym_front_aranges(const struct sym_module *m,
		      int (*fn)(uint64_t info_off, uint64_t lo, uint64_t hi, void *ctx), void *ctx);
/* lookup.c: the lookup itself, in either mode. */
int sym_lookup_in(struct sym_module *m, uint64_t addr, enum sym_style style,
		  struct tally_frame *frames, size_t max);

/* unit_index.c: the index of a unit, built on first use by whichever thread asks first. */
int sym_unit_index(struct sym_module *m, uint32_t unit, struct sym_unit_index **out);
/* Builds the unit's index unless it is built or being built: never waits. Returns whether
 * it built it. */
bool sym_unit_build_ahead(struct sym_module *m, uint32_t unit);
/* prepare.c: builds the next unit of the plan no thread has started; false when none is
 * left. */
bool sym_build_planned(struct sym_module *m);
/* The name of scope s (NULL when DWARF has none), resolved on first use; *cxx_plain tells
 * whether it is a C++ subprogram named by DW_AT_name alone. Thread-safe. */
const char *sym_scope_name(struct sym_module *m, struct sym_unit_index *ix, int32_t s,
			   bool *cxx_plain);
/* lookup.c: the unit holding addr, or -1; the unit's address range holding it, or NULL. */
int32_t sym_unit_of(const struct sym_module *m, uint64_t addr);
const struct sym_cu_range *sym_cu_range_of(const struct sym_module *m, uint64_t addr);
void sym_unit_index_free(struct sym_unit_index *ix);

/* names.c: the subroutine name LLVM would give the DIE (linkage name, else name, through
 * DW_AT_abstract_origin and DW_AT_specification), demangled; NULL when there is none. */
const char *sym_die_name(struct sym_module *m, uint64_t die_offset);
/* Whether the DIE has a linkage name, directly or through the same links. */
bool sym_die_has_linkage_name(struct sym_module *m, uint64_t die_offset);
const char *sym_demangle(struct sym_module *m, const char *name);
void sym_names_free(struct sym_module *m);

/* cfi_funcs.c: the range of the function the unwind tables place addr in, for an address
 * no symbol names; false when none does. Thread-safe. */
bool sym_cfi_function(struct sym_module *m, uint64_t addr, uint64_t *start, uint64_t *end);
void sym_cfi_free(struct sym_module *m);

/* go.c: opens a Go binary's .gopclntab when src (the file with DWARF) is NULL, warning of
 * a damaged one; the frames of addr from it (function, file, line; inlined calls first),
 * at most max (>= 1) of them, 0 when it has none. */
#define SYM_GO_MAX_FRAMES 64
void sym_go_open(struct sym_module *m, const struct elf_file *src);
size_t sym_go_frames(struct sym_module *m, uint64_t addr, struct tally_frame *frames,
		     size_t max);
void sym_go_free(struct sym_module *m);

/* symbols.c */
/* The module's table (symbols): for a batch (opts.many) it loads on a thread of its own,
 * started here (0, or -ENOMEM); sym_symbols_wait() waits until it is sorted, which
 * lookups need, or, for lookups one at a time, loads it at the second lookup (the first
 * scans the file's table). sym_fallback() is the debug file's table, read on first use. */
int sym_symbols_start(struct sym_module *m);
void sym_symbols_wait(struct sym_module *m);
const struct sym_symbols *sym_fallback(struct sym_module *m);
/* Joins the loading thread (at close). */
void sym_symbols_stop(struct sym_module *m);
/* The (demangled) name of the symbol llvm-symbolizer would name addr with (with any_size,
 * addr2line's: the nearest symbol at or before addr), or NULL; *start is its address and
 * *file the STT_FILE before it, for a local symbol (else NULL). */
const char *sym_symbols_find(struct sym_module *m, const struct sym_symbols *s, uint64_t addr,
			     bool any_size, uint64_t *start, const char **file);
void sym_symbols_free(struct sym_symbols *s);

#endif
