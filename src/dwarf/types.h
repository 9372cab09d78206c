/*
 * Type layouts: the named structs, unions, enums and typedefs of a module's DWARF, the
 * offsets of their members (by dotted path, through anonymous struct and union members),
 * their sizes and bit-fields. Types are named as C spells them: "struct _ts", "union u",
 * "enum e", or a bare name for a typedef or a base type.
 *
 * The index of top-level type names is built unit by unit as lookups need it: a lookup
 * reads units only until it finds its name, and later lookups start from what is indexed.
 * A type handle is the .debug_info offset of its DIE.
 *
 * Ownership: struct dwarf_types borrows the struct dwarf (which must outlive it). Lookups
 * grow the index, so one thread at a time.
 */
#ifndef TALLY_DWARF_TYPES_H
#define TALLY_DWARF_TYPES_H

#include <stdint.h>

#include "dwarf/dwarf.h"

struct dwarf_types;

struct dwarf_member {
	uint64_t offset;     /* bytes from the start of the outermost type */
	uint64_t size;       /* of the member's type (a bit-field's storage type); 0 if none */
	uint64_t bit_offset; /* bits from the start of the outermost type, least significant
			      * bit of each byte first (little-endian numbering) */
	uint32_t bit_size;   /* 0 unless the member is a bit-field */
	uint64_t type;       /* the member's type as declared (typedefs kept); 0 for none */
};

int dwarf_types_open(struct dwarf *d, struct dwarf_types **out);
void dwarf_types_close(struct dwarf_types *t);

/* The complete definition (not a declaration) of the type spelled name: 0 and *type,
 * -ENOENT (no message) when no unit defines it, another negative code with the message
 * set when the DWARF is damaged. */
int dwarf_type_find(struct dwarf_types *t, const char *name, uint64_t *type);

/* The member at path ("interpreters.head": members of members, each looked up in the
 * type of the one before, anonymous members searched through) of a struct or union type
 * (typedefs and qualifiers looked through, a declaration replaced by its definition): 0
 * and *m, -ENOENT (no message) when a component is missing or not a struct or union,
 * another negative code when the DWARF is damaged. */
int dwarf_type_member(struct dwarf_types *t, uint64_t type, const char *path,
		      struct dwarf_member *m);

/* The size in bytes of type (typedefs and qualifiers looked through; pointers without
 * DW_AT_byte_size take the unit's address size; arrays multiply their bounds): 0 and
 * *size, -ENOENT when it has none (void, an unbounded array, a declaration only). */
int dwarf_type_size(struct dwarf_types *t, uint64_t type, uint64_t *size);

/* The type under typedefs and qualifiers (const, volatile, restrict, _Atomic): 0, *out
 * and its DW_TAG_* in *tag; -ENOENT for void. */
int dwarf_type_strip(struct dwarf_types *t, uint64_t type, uint64_t *out, uint16_t *tag);

#endif
