/*
 * DWARF 2-5 debugging information, 32- and 64-bit formats: units, abbreviations, attribute
 * forms, DIEs, address ranges and line programs. Reading is lazy: dwarf_open() reads only
 * unit headers and the first DIE of each unit; callers walk a unit's DIEs and decode its
 * line program when they need them. After dwarf_open() nothing here writes to struct
 * dwarf, so readers on several threads need no lock.
 *
 * Ownership: struct dwarf borrows the elf_file (which must outlive it) and owns its arena.
 */
#ifndef TALLY_DWARF_H
#define TALLY_DWARF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/bulk.h"
#include "base/cursor.h"
#include "base/vec.h"
#include "elf/elf.h"

struct dwarf_sect {
	const uint8_t *data;
	size_t size;
};

/* Twelve bytes: libc6-dbg's units need 300,000 of them, and at 24 (with the value of a
 * DW_FORM_implicit_const in place) their pages were a fifth of a batch's page faults. */
struct dwarf_abbrev_attr {
	uint16_t name;
	uint16_t form;
	int16_t size; /* in units of the table's shape: bytes, or -1 when the value says */
	/* The run of fixed-size attributes (DW_AT_sibling apart) that starts here: how many,
	 * 0 when this one is not, and their bytes; skipped in one step. Same units. A run
	 * that would pass 65,535 bytes is cut in two. */
	uint16_t run;
	uint16_t run_size;
	/* For DW_FORM_implicit_const: its value's index in the entry's consts. */
	uint16_t const_index;
};

struct dwarf_abbrev {
	uint64_t code;
	uint16_t tag;
	bool has_children;
	uint16_t nattrs;
	struct dwarf_abbrev_attr *attrs;
	const int64_t *consts; /* the DW_FORM_implicit_const values, in attribute order */
	uint16_t nconsts;
	/* For skipping, in units of the table's shape: the attributes' total size when all
	 * are fixed, and where among them DW_AT_sibling's value lies (the walker wants it):
	 * DWARF_NO_SIBLING, or DWARF_SLOW_SIBLING when it must be decoded attribute by
	 * attribute. */
	bool fixed;
	int32_t sibling_at;
	uint16_t sibling_form;
	uint32_t fixed_size;
};
#define DWARF_NO_SIBLING (-1)
#define DWARF_SLOW_SIBLING (-2)
#define DWARF_FORM_REF4 0x13 /* DW_FORM_ref4, for dwarf_die_step() */

struct dwarf_abbrevs {
	uint64_t offset;
	uint32_t shape; /* address size, offset size and version class of the first unit */
	struct dwarf_abbrev *by_code; /* dense: codes 1..n_dense map to by_code[code - 1] */
	size_t n_dense;
	struct dwarf_abbrev *sparse; /* codes that do not fit the dense array, sorted */
	size_t n_sparse;
};

struct dwarf_unit {
	uint64_t offset; /* of the unit header in .debug_info */
	uint64_t end;    /* one past the unit */
	uint64_t first_die;
	uint16_t version;
	uint8_t unit_type; /* DW_UT_* (DWARF 5), DW_UT_compile for earlier versions */
	uint8_t addr_size;
	uint8_t offset_size; /* 4 or 8 */
	uint64_t abbrev_offset;
	/* NULL until loaded (dwarf_unit_abbrevs()); set by whichever thread loads it. */
	struct dwarf_abbrevs *_Atomic abbrevs;
	bool abbrevs_fit; /* abbrevs were sized for this unit's shape (see dwarf_abbrev) */
	/* The root DIE's abbreviation, decoded alone when the unit was read (code 0 when
	 * the whole table was loaded instead): see dwarf_unit_root(). */
	struct dwarf_abbrev root_abbrev;
	/* The unit's first head_size bytes (header and root DIE) as read from the file when
	 * the units were read (unit_head.c), or NULL: the root DIE is read from them. */
	const uint8_t *head;
	uint32_t head_size;
	/* From the unit DIE: */
	uint16_t tag;
	uint64_t base_addr; /* DW_AT_low_pc, the base for DWARF 4 ranges */
	uint64_t str_offsets_base, addr_base, rnglists_base, loclists_base;
	bool has_str_offsets_base, has_rnglists_base;
	bool has_stmt_list;
	uint64_t stmt_list;
	const char *name;
	const char *comp_dir;
	uint16_t language; /* DW_LANG_*, 0 when not given */
	bool is_split; /* a skeleton pointing at a .dwo: its DIEs are elsewhere */
};

struct dwarf {
	struct elf_file *elf;
	const char *path;
	bool big_endian;
	struct dwarf_sect info, abbrev, str, line_str, str_offsets, addr, ranges, rnglists, line,
		aranges;
	struct dwarf_unit *units; /* sorted by offset; type units included */
	size_t nunits;
	VEC(struct dwarf_abbrevs *) abbrev_tables; /* loaded tables, sorted by offset */
	pthread_mutex_t abbrev_lock; /* guards abbrev_tables and arena once units are read */
	/* Why some of this DWARF cannot be used (split DWARF, dwz), or NULL. */
	const char *unsupported;
	/* What the repair of toolchain-broken DWARF could not recover (repair_sbpf.c), or NULL. */
	const char *lost;
	struct arena arena;
	/* Opened by dwarf_open_front(): .debug_info was read only as far as info.size, out
	 * of info_total (partial says whether anything was left out), and beyond is set
	 * when a reference leads past that front. Only one thread may use such a reader. */
	bool front, partial, beyond;
	uint64_t front_upto, info_total;
	/* In front mode, .debug_line, .debug_abbrev, the string sections and .debug_rnglists
	 * are inflated only as far as readers ask (dwarf_sect_need); these are set while some
	 * of them is left. */
	struct elf_section *line_lazy, *abbrev_lazy, *str_lazy, *line_str_lazy, *rnglists_lazy;
};

/* An attribute value. Which member is meaningful follows the form's class. */
enum dwarf_class {
	DWC_NONE,
	DWC_ADDR,     /* u: an address (addrx already resolved) */
	DWC_CONST,    /* u (and s for sdata/implicit_const) */
	DWC_STRING,   /* str */
	DWC_REF,      /* u: .debug_info offset, already made absolute */
	DWC_SECOFF,   /* u: offset into another section (lineptr, rangelistptr...) */
	DWC_RNGLISTX, /* u: index into the unit's range-list table */
	DWC_BLOCK,    /* block, len */
	DWC_FLAG,     /* u */
	DWC_OTHER,    /* understood but not decoded (loclistx, ref_sig8, data16...) */
};

struct dwarf_value {
	enum dwarf_class cls;
	uint16_t form;
	uint64_t u;
	int64_t s;
	const char *str;
	const uint8_t *block;
	uint64_t len;
};

/* Opens the DWARF of elf. A file without .debug_info gives a struct dwarf with no units.
 * Errors name the file and offset (corrupt headers); the caller decides whether to go on
 * without DWARF. */
int dwarf_open(struct elf_file *elf, struct dwarf **out);
void dwarf_close(struct dwarf *d);
/* The same, reading .debug_info only through the unit that holds offset upto (and every
 * unit before it): for a few lookups in a large compressed .debug_info, whose rest is
 * not inflated. Opened again with a larger upto, it goes on inflating where it stopped. */
int dwarf_open_front(struct elf_file *elf, uint64_t upto, struct dwarf **out);
/* Reads a reader opened by dwarf_open_front() further, through the unit that holds upto:
 * the units read before stay as they are (d->units may move), the new ones follow. 0, or an
 * error after which d is to be closed. */
int dwarf_front_extend(struct dwarf *d, uint64_t upto);
/* The same over sections given directly (tests and fuzzing): elf is a stand-in that
 * names the file and gives byte order; its sections are not read. */
int dwarf_open_sections(struct elf_file *elf, const struct dwarf_sect *info,
			const struct dwarf_sect *abbrev, const struct dwarf_sect *str,
			const struct dwarf_sect *line, struct dwarf **out);

/* The unit whose bytes hold .debug_info offset off, or NULL. */
struct dwarf_unit *dwarf_unit_at(struct dwarf *d, uint64_t off);
/* Loads the unit's abbreviation table if needed (dwarf_open() leaves it to the first
 * reader of the unit's DIEs). Thread-safe: units may be walked on several threads. */
int dwarf_unit_abbrevs(struct dwarf *d, struct dwarf_unit *u);

/* DIEs. A reader walks a unit's DIEs in order; each DIE's attributes are decoded into
 * vals (indexed like abbrev->attrs). */
#define DWARF_MAX_ATTRS 64
struct dwarf_die {
	uint64_t offset;
	const struct dwarf_abbrev *abbrev; /* NULL for a null entry (end of siblings) */
	struct dwarf_value vals[DWARF_MAX_ATTRS];
	uint16_t nvals;
};

/* Reads the DIE at offset off of unit u (abbrevs loaded); *next is the following DIE.
 * A DIE with more than DWARF_MAX_ATTRS attributes keeps the first ones. */
int dwarf_die_read(struct dwarf *d, struct dwarf_unit *u, uint64_t off, struct dwarf_die *die,
		   uint64_t *next);
/* The same, decoding only attributes i whose bit (1 << i) is set in want: the others are
 * stepped over and left as DWC_NONE. */
int dwarf_die_read_some(struct dwarf *d, struct dwarf_unit *u, uint64_t off, uint64_t want,
			struct dwarf_die *die, uint64_t *next);
/* Steps over the DIE at off without decoding it: *abbrev (NULL for a null entry), the
 * DW_AT_sibling offset if it has one (else 0), and the next DIE's offset. */
int dwarf_die_skip(struct dwarf *d, struct dwarf_unit *u, uint64_t off,
		   const struct dwarf_abbrev **abbrev, uint64_t *sibling, uint64_t *next);
/* dwarf_die_skip() inline for the DIEs most of a unit is made of: null entries, and DIEs of
 * a one-byte code whose abbreviation gives their size, with no DW_AT_sibling or one in
 * DW_FORM_ref4. A walk over every DIE of a unit spent a sixth of its steps on the call. */
static inline int dwarf_die_step(struct dwarf *d, struct dwarf_unit *u, uint64_t off,
				 const struct dwarf_abbrev **abbrev, uint64_t *sibling,
				 uint64_t *next)
{
	if (off < u->first_die || off >= u->end || !u->abbrevs_fit)
		return dwarf_die_skip(d, u, off, abbrev, sibling, next);
	const uint8_t *p = d->info.data + off;
	if (!*p) {
		*abbrev = NULL;
		*sibling = 0;
		*next = off + 1;
		return 0;
	}
	if (*p & 0x80 || *p > u->abbrevs->n_dense)
		return dwarf_die_skip(d, u, off, abbrev, sibling, next);
	const struct dwarf_abbrev *a = &u->abbrevs->by_code[*p - 1];
	if (!a->fixed || a->fixed_size >= u->end - off)
		return dwarf_die_skip(d, u, off, abbrev, sibling, next);
	if (a->sibling_at == DWARF_NO_SIBLING)
		*sibling = 0;
	else if (a->sibling_at >= 0 && a->sibling_form == DWARF_FORM_REF4)
		*sibling = u->offset + load_u32(p + 1 + a->sibling_at, d->big_endian);
	else
		return dwarf_die_skip(d, u, off, abbrev, sibling, next);
	*abbrev = a;
	*next = off + 1 + a->fixed_size;
	return 0;
}
/* Reads the unit's root DIE, with its table or, when that is not loaded, the root's
 * abbreviation decoded when the unit was read. */
int dwarf_unit_root(struct dwarf *d, struct dwarf_unit *u, struct dwarf_die *die);
/* The value of attribute at in die, or NULL. */
const struct dwarf_value *dwarf_die_attr(const struct dwarf_die *die, uint16_t at);
/* Reads the DIE at an absolute .debug_info offset, in whatever unit holds it. */
int dwarf_die_at(struct dwarf *d, uint64_t off, struct dwarf_die *die, struct dwarf_unit **u);

/* Address ranges of a DIE: low/high pc or DW_AT_ranges (DWARF 4 .debug_ranges or DWARF 5
 * .debug_rnglists, by offset or rnglistx). Calls fn for each non-empty [lo, hi). Returns 0
 * when the DIE has no ranges. */
int dwarf_die_ranges(struct dwarf *d, struct dwarf_unit *u, const struct dwarf_die *die,
		     int (*fn)(uint64_t lo, uint64_t hi, void *ctx), void *ctx);
/* The same from the three attribute values (each may be NULL), for callers that have
 * already picked them out of a DIE. */
int dwarf_ranges(struct dwarf *d, struct dwarf_unit *u, const struct dwarf_value *low_pc,
		 const struct dwarf_value *high_pc, const struct dwarf_value *ranges,
		 int (*fn)(uint64_t lo, uint64_t hi, void *ctx), void *ctx);

/* Line programs. A row is 16 bytes (the tables are the largest part of an index): file
 * and column are 16 bits wide, as LLVM's registers are, and discriminators, rare, are kept
 * aside. */
struct dwarf_line_row {
	uint64_t addr;
	uint32_t line;
	uint16_t file;
	uint16_t column;
};

struct dwarf_line_seq {
	uint64_t lo, hi;    /* [lo, hi) */
	uint32_t first_row; /* rows[first_row .. end_row) belong to the sequence, */
	uint32_t end_row;   /* the last being the end_sequence row */
};

struct dwarf_line_file {
	const char *name, *dir;
};

struct dwarf_line_table {
	uint16_t version;
	struct dwarf_line_row *rows;
	size_t nrows;
	struct dwarf_line_seq *seqs; /* sorted by lo */
	size_t nseqs;
	/* Discriminators: row i has one when bit i % 64 of disc_bits[i / 64] is set, and it
	 * is disc_values[disc_rank[i / 64] + the bits set below it in that word]. All NULL
	 * when no row has one. */
	uint64_t *disc_bits;
	uint32_t *disc_rank, *disc_values;
	/* Each file entry's name and directory (the comp_dir is the unit's); the full path,
	 * joined as LLVM does, is made on first use by dwarf_line_file() into paths. */
	struct dwarf_line_file *files;
	_Atomic(const char *) *joined;
	size_t nfiles;
	const char *comp_dir;
	pthread_mutex_t lock; /* guards paths */
	bool zero_based_files; /* DWARF 5 */
	bool kept; /* rows, seqs and discriminators live in the caller's bulk memory */
	struct arena paths;      /* owns the joined paths */
};

/* Decodes the line program at .debug_line offset off for unit u. Free with
 * dwarf_line_free(). Reads d only, so tables may be decoded on several threads at once.
 * The rows go to keep when it is not NULL (they then live as long as it), else to malloc. */
int dwarf_line_read(struct dwarf *d, struct dwarf_unit *u, uint64_t off, struct bulk *keep,
		    struct dwarf_line_table *t);
void dwarf_line_free(struct dwarf_line_table *t);
/* The path of file index i (as the line program numbers files), or NULL. Thread-safe. */
const char *dwarf_line_file(struct dwarf_line_table *t, uint64_t i);
/* The row that covers addr, or NULL. */
const struct dwarf_line_row *dwarf_line_lookup(const struct dwarf_line_table *t, uint64_t addr);
/* The discriminator of a row of t. */
uint32_t dwarf_line_discriminator(const struct dwarf_line_table *t,
				  const struct dwarf_line_row *row);

/* Joins path components as LLVM's sys::path::append does (no normalisation). */
char *dwarf_path_join(struct arena *a, const char *comp_dir, const char *dir, const char *file);

/* Repairs .debug_info of sBPF programs linked by Solana platform-tools before v1.51, which
 * applied R_BPF_64_64 to DW_FORM_addr slots (see repair_sbpf.c). Returns 1 when it repaired
 * something, 0 when nothing matched, negative on error. Works on a private copy of .debug_info
 * owned by d. */
int dwarf_repair_sbpf(struct dwarf *d);

#endif
