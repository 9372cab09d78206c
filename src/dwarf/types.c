/*
 * Type layouts (see types.h). The index maps (namespace, name) to the first complete
 * definition among a unit's top-level DIEs: C keeps struct, union and enum tags apart
 * from ordinary names, so "struct _ts" and a typedef _ts are different entries. Walks
 * follow DW_AT_sibling where it points forward and count nesting where it does not, so
 * every step moves forward through its unit; chains of typedefs, qualifiers and anonymous
 * members are cut at fixed depths, so hostile DWARF ends in an error, not a loop.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"
#include "dwarf/types.h"

/* Typedef and qualifier chains are a handful deep in real code; anonymous members nest
 * two or three levels (CPython's PyASCIIObject.state is one). */
#define MAX_CHAIN 32
#define MAX_ANON_DEPTH 8
#define MAX_PATH_PARTS 16
/* DIEs one lookup may read: a few hundred for real types. Hostile DWARF could otherwise
 * make the anonymous-member search exponential (each level many anonymous members). */
#define STEP_BUDGET (1u << 20)

enum type_ns { NS_ORDINARY, NS_STRUCT, NS_UNION, NS_ENUM };

struct name_entry {
	const char *name; /* NULL: empty slot; points into the DWARF's sections */
	uint64_t die;
	uint8_t ns;
};

struct dwarf_types {
	struct dwarf *d;
	struct name_entry *slots; /* open addressing, cap a power of two, at most half full */
	size_t cap, count;
	size_t next_unit; /* units before this one are indexed */
	uint32_t steps;   /* DIEs the current lookup may still read */
	int index_err;    /* of the last unit that could not be indexed, 0 when none */
	struct dwarf_die die; /* scratch for the one DIE being read */
};

/* What a walk wants of a DIE, picked out of it. */
struct type_die {
	struct dwarf_unit *unit;
	uint16_t tag;
	bool has_children, declaration;
	const char *name;
	uint64_t type; /* DW_AT_type, 0 when absent */
	bool has_byte_size, has_location, has_data_bit_offset, has_bit_offset, has_count,
		has_upper;
	uint64_t byte_size, location, data_bit_offset, bit_offset, bit_size, count, upper;
	uint64_t first_child; /* when has_children */
	uint64_t after;       /* the next sibling, past any children */
};

int dwarf_types_open(struct dwarf *d, struct dwarf_types **out)
{
	struct dwarf_types *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->d = d;
	*out = t;
	return 0;
}

void dwarf_types_close(struct dwarf_types *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static uint64_t name_hash(const char *name, uint8_t ns)
{
	uint64_t h = 0xcbf29ce484222325u ^ ns; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	return h;
}

static struct name_entry *slot_for(struct name_entry *slots, size_t cap, const char *name,
				   uint8_t ns)
{
	size_t i = (size_t)name_hash(name, ns) & (cap - 1);
	while (slots[i].name && (slots[i].ns != ns || strcmp(slots[i].name, name)))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int index_grow(struct dwarf_types *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct name_entry *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].name)
			*slot_for(slots, cap, t->slots[i].name, t->slots[i].ns) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* Keeps the first definition of a name: every unit of one program agrees on it. */
static int index_add(struct dwarf_types *t, const char *name, uint8_t ns, uint64_t die)
{
	if ((t->count + 1) * 2 > t->cap) {
		int err = index_grow(t);
		if (err)
			return err;
	}
	struct name_entry *e = slot_for(t->slots, t->cap, name, ns);
	if (!e->name) {
		*e = (struct name_entry){ name, die, ns };
		t->count++;
	}
	return 0;
}

static const struct name_entry *index_get(const struct dwarf_types *t, const char *name,
					  uint8_t ns)
{
	if (!t->cap)
		return NULL;
	const struct name_entry *e = slot_for(t->slots, t->cap, name, ns);
	return e->name ? e : NULL;
}

static int tag_ns(uint16_t tag)
{
	switch (tag) {
	case DW_TAG_structure_type:
	case DW_TAG_class_type: return NS_STRUCT;
	case DW_TAG_union_type: return NS_UNION;
	case DW_TAG_enumeration_type: return NS_ENUM;
	case DW_TAG_typedef:
	case DW_TAG_base_type: return NS_ORDINARY;
	default: return -1;
	}
}

/* Counts one DIE read against the lookup's budget. */
static int spend(struct dwarf_types *t, uint64_t off)
{
	if (!t->steps)
		return dwarf_info_bad(t->d, off, "types nest too deeply or too widely to follow");
	t->steps--;
	return 0;
}

/* The DIE after the one at off and its children. Each DIE stepped over counts against
 * budget's lookup when budget is given (the index walks each unit once, unbudgeted). */
static int skip_subtree(struct dwarf *d, struct dwarf_unit *u, uint64_t off, uint64_t *after,
			struct dwarf_types *budget)
{
	uint64_t depth = 0; /* open child lists */
	for (;;) {
		const struct dwarf_abbrev *a;
		uint64_t sibling, next;
		int err = budget ? spend(budget, off) : 0;
		if (!err)
			err = dwarf_die_skip(d, u, off, &a, &sibling, &next);
		if (err)
			return err;
		if (!a) {
			off = next;
			if (depth && --depth == 0)
				break;
			if (!depth)
				break; /* a null entry alone: it is its own subtree */
			continue;
		}
		if (!a->has_children)
			off = next;
		else if (sibling > off && sibling <= u->end)
			off = sibling;
		else {
			depth++;
			off = next;
			continue;
		}
		if (!depth)
			break;
	}
	*after = off;
	return 0;
}

static bool value_const(const struct dwarf_value *v, uint64_t *out)
{
	if (!v || (v->cls != DWC_CONST && v->cls != DWC_SECOFF))
		return false;
	*out = v->u;
	return true;
}

/* DW_AT_data_member_location as a block: DWARF 2 producers wrote DW_OP_plus_uconst N (the
 * offset added to the struct's address); a constant pushed and added means the same. */
static bool location_expr(const struct dwarf_value *v, uint64_t *out)
{
	struct cur c = cur_make(v->block, v->len, false);
	uint64_t value = 0;
	uint8_t op = cur_u8(&c);
	if (op == DW_OP_plus_uconst || op == DW_OP_constu)
		value = cur_uleb(&c);
	else if (op >= DW_OP_lit0 && op <= DW_OP_lit31)
		value = op - DW_OP_lit0;
	else
		return false;
	if (op != DW_OP_plus_uconst && !cur_eof(&c) && cur_u8(&c) != DW_OP_plus)
		return false;
	if (!cur_ok(&c) || !cur_eof(&c))
		return false;
	*out = value;
	return true;
}

/* Reads the DIE at off of unit u into *td: 0, or 1 for a null entry (the end of a list
 * of children, td->after past it). */
static int read_type_die_in(struct dwarf_types *t, struct dwarf_unit *u, uint64_t off,
			    struct type_die *td)
{
	struct dwarf_die *die = &t->die;
	uint64_t next;
	int err = spend(t, off);
	if (!err)
		err = dwarf_die_read(t->d, u, off, die, &next);
	if (err)
		return err;
	memset(td, 0, sizeof(*td));
	td->unit = u;
	td->after = next;
	if (!die->abbrev)
		return 1;
	td->tag = die->abbrev->tag;
	td->has_children = die->abbrev->has_children;
	const struct dwarf_value *v;
	if ((v = dwarf_die_attr(die, DW_AT_name)) && v->cls == DWC_STRING)
		td->name = v->str;
	if ((v = dwarf_die_attr(die, DW_AT_declaration)))
		td->declaration = v->cls == DWC_FLAG && v->u;
	if ((v = dwarf_die_attr(die, DW_AT_type)) && v->cls == DWC_REF)
		td->type = v->u;
	td->has_byte_size = value_const(dwarf_die_attr(die, DW_AT_byte_size), &td->byte_size);
	v = dwarf_die_attr(die, DW_AT_data_member_location);
	td->has_location = value_const(v, &td->location) ||
			   (v && v->cls == DWC_BLOCK && location_expr(v, &td->location));
	td->has_data_bit_offset =
		value_const(dwarf_die_attr(die, DW_AT_data_bit_offset), &td->data_bit_offset);
	td->has_bit_offset = value_const(dwarf_die_attr(die, DW_AT_bit_offset), &td->bit_offset);
	value_const(dwarf_die_attr(die, DW_AT_bit_size), &td->bit_size);
	td->has_count = value_const(dwarf_die_attr(die, DW_AT_count), &td->count);
	td->has_upper = value_const(dwarf_die_attr(die, DW_AT_upper_bound), &td->upper);
	if (!td->has_children)
		return 0;
	td->first_child = next;
	return skip_subtree(t->d, u, off, &td->after, t);
}

/* The same for a type reference: in whatever unit holds it, and not a null entry. */
static int read_type_die(struct dwarf_types *t, uint64_t off, struct type_die *td)
{
	struct dwarf_unit *u = dwarf_unit_at(t->d, off);
	if (!u)
		return dwarf_info_bad(t->d, off, "type reference outside every unit");
	int err = dwarf_unit_abbrevs(t->d, u);
	if (err)
		return err;
	err = read_type_die_in(t, u, off, td);
	return err == 1 ? dwarf_info_bad(t->d, off, "type reference to a null entry") : err;
}

/* Indexes the named type definitions among unit u's top-level DIEs. */
static int index_unit(struct dwarf_types *t, struct dwarf_unit *u)
{
	struct dwarf *d = t->d;
	if (u->is_split)
		return 0;
	int err = dwarf_unit_abbrevs(d, u);
	if (err)
		return err;
	const struct dwarf_abbrev *a;
	uint64_t sibling, off;
	if ((err = dwarf_die_skip(d, u, u->first_die, &a, &sibling, &off)))
		return err;
	if (!a || !a->has_children)
		return 0;
	while (off < u->end) {
		uint64_t next, after;
		if ((err = dwarf_die_skip(d, u, off, &a, &sibling, &next)))
			return err;
		if (!a)
			break;
		int ns = tag_ns(a->tag);
		if (ns >= 0) {
			uint64_t want = 0;
			for (uint16_t i = 0; i < a->nattrs && i < DWARF_MAX_ATTRS; i++)
				if (a->attrs[i].name == DW_AT_name ||
				    a->attrs[i].name == DW_AT_declaration)
					want |= 1ull << i;
			if (want) {
				struct dwarf_die *die = &t->die;
				uint64_t unused;
				if ((err = dwarf_die_read_some(d, u, off, want, die, &unused)))
					return err;
				const struct dwarf_value *name = dwarf_die_attr(die, DW_AT_name),
							 *decl = dwarf_die_attr(die, DW_AT_declaration);
				bool declaration = decl && decl->cls == DWC_FLAG && decl->u;
				if (name && name->cls == DWC_STRING && name->str && *name->str &&
				    !declaration && (err = index_add(t, name->str, (uint8_t)ns, off)))
					return err;
			}
		}
		if (!a->has_children)
			after = next;
		else if (sibling > off && sibling <= u->end)
			after = sibling;
		else if ((err = skip_subtree(d, u, off, &after, NULL)))
			return err;
		off = after;
	}
	return 0;
}

/* Splits "struct NAME" and the like into namespace and name. */
static const char *spelling_ns(const char *spelling, uint8_t *ns)
{
	static const struct {
		const char *word;
		uint8_t ns;
	} words[] = { { "struct ", NS_STRUCT }, { "union ", NS_UNION }, { "enum ", NS_ENUM } };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].word);
		if (!strncmp(spelling, words[i].word, n)) {
			*ns = words[i].ns;
			return spelling + n;
		}
	}
	*ns = NS_ORDINARY;
	return spelling;
}

/* A unit that cannot be indexed (damaged, or using a form this reader does not know) is
 * passed over, keeping what it gave before the damage: the type may be defined in another.
 * The error is the answer only when no unit defines the name. */
static int find_in_ns(struct dwarf_types *t, const char *name, uint8_t ns, uint64_t *type)
{
	for (;;) {
		const struct name_entry *e = index_get(t, name, ns);
		if (e) {
			*type = e->die;
			return 0;
		}
		if (t->next_unit >= t->d->nunits)
			return t->index_err ? t->index_err : -ENOENT;
		int err = index_unit(t, &t->d->units[t->next_unit++]);
		if (err == -ENOMEM)
			return err;
		if (err)
			t->index_err = err; /* the last one's, as the message is */
	}
}

int dwarf_type_find(struct dwarf_types *t, const char *name, uint64_t *type)
{
	uint8_t ns;
	const char *bare = spelling_ns(name, &ns);
	return find_in_ns(t, bare, ns, type);
}

static int type_strip(struct dwarf_types *t, uint64_t type, uint64_t *out, uint16_t *tag)
{
	struct type_die td;
	for (int i = 0; i < MAX_CHAIN; i++) {
		if (!type)
			return -ENOENT;
		int err = read_type_die(t, type, &td);
		if (err)
			return err;
		switch (td.tag) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
		case DW_TAG_atomic_type: type = td.type; continue;
		default: break;
		}
		int ns = tag_ns(td.tag);
		/* A unit that saw only `struct x;` refers to its declaration; the layout is
		 * wherever the struct is defined. */
		if (td.declaration && td.name && ns > NS_ORDINARY &&
		    (err = find_in_ns(t, td.name, (uint8_t)ns, &type)))
			return err;
		*out = type;
		*tag = td.tag;
		return 0;
	}
	return dwarf_info_bad(t->d, type, "typedef or qualifier chain too long");
}

static int type_size(struct dwarf_types *t, uint64_t type, int depth, uint64_t *size);

/* An array's size: its element's times each dimension's count (C bounds start at 0). */
static int array_size(struct dwarf_types *t, const struct type_die *array, int depth,
		      uint64_t *size)
{
	uint64_t total;
	int err = type_size(t, array->type, depth + 1, &total);
	if (err)
		return err;
	uint64_t off = array->first_child;
	for (int dims = 0; array->has_children && dims < MAX_CHAIN; dims++) {
		struct type_die sub;
		err = read_type_die_in(t, array->unit, off, &sub);
		if (err < 0)
			return err;
		if (err || sub.tag != DW_TAG_subrange_type)
			break;
		if (!sub.has_count && !sub.has_upper)
			return -ENOENT; /* a flexible array member */
		uint64_t n = sub.has_count ? sub.count : sub.upper + 1;
		if (n && total > UINT64_MAX / n)
			return dwarf_info_bad(t->d, off, "array size overflows");
		total *= n;
		off = sub.after;
	}
	*size = total;
	return 0;
}

/* depth: arrays of arrays met so far (an array may be its own element in hostile DWARF). */
static int type_size(struct dwarf_types *t, uint64_t type, int depth, uint64_t *size)
{
	if (depth >= MAX_CHAIN)
		return dwarf_info_bad(t->d, type, "array types nest too deeply");
	uint16_t tag;
	int err = type_strip(t, type, &type, &tag);
	if (err)
		return err;
	struct type_die td;
	if ((err = read_type_die(t, type, &td)))
		return err;
	if (td.has_byte_size) {
		*size = td.byte_size;
		return 0;
	}
	if (tag == DW_TAG_pointer_type) {
		*size = td.unit->addr_size;
		return 0;
	}
	if (tag == DW_TAG_array_type)
		return array_size(t, &td, depth, size);
	return -ENOENT;
}

int dwarf_type_size(struct dwarf_types *t, uint64_t type, uint64_t *size)
{
	t->steps = STEP_BUDGET;
	return type_size(t, type, 0, size);
}

int dwarf_type_strip(struct dwarf_types *t, uint64_t type, uint64_t *out, uint16_t *tag)
{
	t->steps = STEP_BUDGET;
	return type_strip(t, type, out, tag);
}

/* Where member m of a struct lies, in bits from the struct's start. */
static int member_bits(const struct type_die *m, uint64_t *bits)
{
	uint64_t byte = m->has_location ? m->location : 0;
	if (byte > UINT64_MAX / 16)
		return -ERANGE;
	if (!m->bit_size || m->has_data_bit_offset) {
		*bits = m->has_data_bit_offset ? m->data_bit_offset : byte * 8;
		return 0;
	}
	if (!m->has_bit_offset) {
		*bits = byte * 8;
		return 0;
	}
	/* DWARF 2/3: DW_AT_bit_offset counts from the most significant bit of a storage
	 * unit of DW_AT_byte_size bytes; on a little-endian target that is the far end. */
	uint64_t storage = m->has_byte_size ? m->byte_size * 8 : 0;
	if (!storage || m->bit_offset + m->bit_size > storage)
		return -ERANGE;
	*bits = byte * 8 + storage - m->bit_offset - m->bit_size;
	return 0;
}

/* Looks for the member called name among the children of struct or union s, and inside
 * its anonymous struct and union members. 0 and *m (offsets relative to s), -ENOENT. */
static int find_member(struct dwarf_types *t, uint64_t s, const char *name, size_t name_len,
		       int depth, struct dwarf_member *m)
{
	struct type_die st, td;
	int err = read_type_die(t, s, &st);
	if (err)
		return err;
	if (!st.has_children)
		return -ENOENT;
	for (uint64_t off = st.first_child; off < st.unit->end; off = td.after) {
		if ((err = read_type_die_in(t, st.unit, off, &td)))
			return err > 0 ? -ENOENT : err;
		if (td.tag != DW_TAG_member)
			continue;
		uint64_t bits;
		if (member_bits(&td, &bits))
			return dwarf_info_bad(t->d, off, "member bit-field outside its storage");
		if (td.name && strlen(td.name) == name_len && !memcmp(td.name, name, name_len)) {
			*m = (struct dwarf_member){ .offset = bits / 8, .bit_offset = bits,
						    .bit_size = (uint32_t)td.bit_size,
						    .type = td.type };
			if (td.bit_size > UINT32_MAX)
				return dwarf_info_bad(t->d, off, "member bit-field too wide");
			err = type_size(t, td.type, 0, &m->size);
			if (err == -ENOENT)
				m->size = 0;
			return err == -ENOENT ? 0 : err;
		}
		if (td.name || depth >= MAX_ANON_DEPTH)
			continue;
		uint64_t inner;
		uint16_t tag;
		if ((err = type_strip(t, td.type, &inner, &tag)))
			return err == -ENOENT ? dwarf_info_bad(t->d, off, "anonymous member of no type")
					      : err;
		if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			continue;
		err = find_member(t, inner, name, name_len, depth + 1, m);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		m->offset += bits / 8;
		m->bit_offset += bits;
		return 0;
	}
	return -ENOENT;
}

int dwarf_type_member(struct dwarf_types *t, uint64_t type, const char *path,
		      struct dwarf_member *m)
{
	struct dwarf_member total = { 0 };
	const char *part = path;
	t->steps = STEP_BUDGET;
	for (int parts = 0; parts < MAX_PATH_PARTS; parts++) {
		const char *dot = strchr(part, '.');
		size_t len = dot ? (size_t)(dot - part) : strlen(part);
		uint64_t s;
		uint16_t tag;
		int err = type_strip(t, type, &s, &tag);
		if (err)
			return err;
		if (!len || (tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
			     tag != DW_TAG_class_type))
			return -ENOENT;
		struct dwarf_member inner;
		if ((err = find_member(t, s, part, len, 0, &inner)))
			return err;
		inner.offset += total.offset;
		inner.bit_offset += total.offset * 8;
		total = inner;
		if (!dot) {
			*m = total;
			return 0;
		}
		type = total.type;
		part = dot + 1;
	}
	return -ENOENT;
}
