/*
 * Shared between the files of src/dwarf only.
 */
#ifndef TALLY_DWARF_INTERNAL_H
#define TALLY_DWARF_INTERNAL_H

#include "base/cursor.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"

/* Decodes every abbreviation table of .debug_abbrev, front to back, as if for units
 * shaped like shape, while .debug_info is still being inflated: the tables lie one after
 * the other, so they need no unit to be found. Stops at the first damaged one (a unit
 * that names it reads it itself and reports the damage). */
void dwarf_abbrevs_preload(struct dwarf *d, const struct dwarf_unit *shape);
/* Points u at its table when that is loaded already (preloaded), parsing nothing. Takes
 * no lock: for the thread that reads the units, before any other walks them. */
bool dwarf_unit_abbrevs_loaded(struct dwarf *d, struct dwarf_unit *u);
/* The abbreviation with this code in u's table, decoded alone into *a (its attributes in
 * d's arena, so on the thread that reads the units): -ENOENT when the table has no such
 * code, or the table's error. */
int dwarf_abbrev_decode(struct dwarf *d, const struct dwarf_unit *u, uint64_t code,
			struct dwarf_abbrev *a);
const struct dwarf_abbrev *dwarf_abbrev_find_sparse(const struct dwarf_abbrevs *t, uint64_t code);
/* The abbreviation of that code, or NULL. Inline: it runs for every DIE. */
static inline const struct dwarf_abbrev *dwarf_abbrev_find(const struct dwarf_abbrevs *t,
							   uint64_t code)
{
	if (code >= 1 && code <= t->n_dense)
		return &t->by_code[code - 1];
	return dwarf_abbrev_find_sparse(t, code);
}

/* Unit heads (unit_head.c): the first bytes of units of a large .debug_info read from the
 * file, not through its mapping, while the units are read. */
#define DWARF_HEAD_MAX 256
struct dwarf_heads {
	int fd;            /* the file, or -1: every unit is read through the mapping */
	uint64_t at;       /* where .debug_info lies in it */
	uint64_t window;   /* the 64 KiB of the file last read through the mapping, + 1 */
	unsigned small_run; /* short units just read, in a row */
};
void dwarf_heads_open(struct dwarf *d, struct dwarf_heads *h);
void dwarf_heads_close(struct dwarf_heads *h);
/* The first bytes of the unit at .debug_info offset off read into buf: how many (up to
 * DWARF_HEAD_MAX, fewer only at the section's end), or 0 when the unit is to be read
 * through the mapping (no file, units close together or near one read so, a failed read). */
size_t dwarf_head_read(struct dwarf *d, struct dwarf_heads *h, uint64_t off,
		       uint8_t buf[DWARF_HEAD_MAX]);
/* Notes the unit just read: the lengths of the last ones predict whether the next is far. */
void dwarf_heads_note(struct dwarf_heads *h, const struct dwarf_unit *u);
/* Makes die's strings and blocks read from u's head point into the mapping, where the same
 * bytes are: values outlive the reader (a unit's name does), the mapping outlives it. */
void dwarf_head_repoint(const struct dwarf *d, const struct dwarf_unit *u, struct dwarf_die *die);

/* The value of attribute at of a when its form is DW_FORM_implicit_const, else 0. */
static inline int64_t dwarf_attr_const(const struct dwarf_abbrev *a,
				       const struct dwarf_abbrev_attr *at)
{
	return at->form == DW_FORM_implicit_const ? a->consts[at->const_index] : 0;
}

/* The error for what is wrong at .debug_info offset off: "PATH: .debug_info at 0xOFF: what"
 * (-EINVAL). */
int dwarf_info_bad(struct dwarf *d, uint64_t off, const char *what);
/* Starts reading the DIE at off of unit u: *c just past its abbreviation code, die's
 * offset and abbreviation (NULL for a null entry), no values yet. Inline: it runs for
 * every DIE read. */
static inline int dwarf_die_begin(struct dwarf *d, struct dwarf_unit *u, uint64_t off,
				  struct dwarf_die *die, struct cur *c)
{
	if (off < u->first_die || off >= u->end)
		return dwarf_info_bad(d, off, "DIE offset outside its unit");
	*c = cur_make(d->info.data, u->end, d->big_endian);
	cur_seek(c, off);
	die->offset = off;
	die->nvals = 0;
	die->abbrev = NULL;
	uint64_t code = cur_uleb(c);
	if (!cur_ok(c))
		return dwarf_info_bad(d, off, "truncated DIE");
	if (code && !(die->abbrev = dwarf_abbrev_find(u->abbrevs, code)))
		return dwarf_info_bad(d, off, "DIE uses an undefined abbreviation code");
	return 0;
}

/* Makes the first end bytes of s (a section front mode reads lazily: see struct dwarf)
 * readable where front mode left them compressed; a failure sets d->beyond, for the full
 * reader to report. */
void dwarf_sect_need(struct dwarf *d, struct dwarf_sect *s, uint64_t end);
/* For readers that cannot know how far they will read from off (a string to its NUL, a
 * list to its end): inflates a lazy s as far as *len bytes past off and doubles *len for
 * the next call (the reach past off doubles, not the offset: a table 300 KB in that ran
 * past a first guess inflated the section to 600 KB); false, doing nothing, when nothing
 * of s is left to inflate. */
bool dwarf_sect_grow(struct dwarf *d, struct dwarf_sect *s, uint64_t off, uint64_t *len);

/* Decodes one attribute value of the given form at c. 0, or -EINVAL for an unknown form
 * or a value past the end (the cursor is then bad). */
int dwarf_form_read(struct dwarf *d, const struct dwarf_unit *u, struct cur *c, uint16_t form,
		    int64_t implicit_const, struct dwarf_value *v);
/* Units of one shape (address size, offset size, version class) give every fixed-size form
 * the same size. */
uint32_t dwarf_unit_shape(const struct dwarf_unit *u);
/* The sizes of forms 0 to DWARF_FORM_SIZES - 1 for units shaped like u, worked out once
 * for a whole table: bytes, 0 for a value the abbreviation holds, -1 when it varies. */
#define DWARF_FORM_SIZES 0x2d
struct dwarf_form_sizes {
	int16_t of[DWARF_FORM_SIZES];
};
void dwarf_form_sizes(const struct dwarf_unit *u, struct dwarf_form_sizes *fs);
/* Fills a's sizes (struct dwarf_abbrev's fixed, fixed_size, attrs[].size) for units
 * shaped like u, from fs when given. */
void dwarf_abbrev_sizes(const struct dwarf_unit *u, const struct dwarf_form_sizes *fs,
			struct dwarf_abbrev *a);
/* Steps over one attribute value without decoding it. */
int dwarf_form_skip(struct dwarf *d, const struct dwarf_unit *u, struct cur *c, uint16_t form);
/* Entry idx of the unit's .debug_addr table. */
int dwarf_addrx(struct dwarf *d, const struct dwarf_unit *u, uint64_t idx, uint64_t *addr);

#endif
