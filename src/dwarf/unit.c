/*
 * Units and DIEs of .debug_info. dwarf_open() walks the unit headers once (cheap: no DIE
 * but each unit's first) so that addresses and references can find their unit by binary
 * search. Type units are listed but never walked.
 */
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/search.h"
#include "base/cursor.h"
#include "base/err.h"
#include "base/mutex.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

int dwarf_info_bad(struct dwarf *d, uint64_t off, const char *what)
{
	return err_set(-EINVAL, "%s: .debug_info at 0x%llx: %s", d->path,
		       (unsigned long long)off, what);
}

static void load_section(struct dwarf *d, const char *name, struct dwarf_sect *s, int *err)
{
	if (*err)
		return;
	int e = elf_section_data_by_name(d->elf, name, &s->data, &s->size);
	if (e && e != -ENOENT)
		*err = e;
}

/* Front mode: the front of a section, the rest inflated by dwarf_sect_need(). */
static void load_lazy(struct dwarf *d, const char *name, struct dwarf_sect *s,
		      struct elf_section **lazy, int *err)
{
	struct elf_section *e = elf_section_by_name(d->elf, name);
	size_t total;
	if (*err || !e)
		return;
	*err = elf_section_prefix(d->elf, e, 0, &s->data, &s->size, &total);
	*lazy = !*err && s->size < total ? e : NULL;
}

/* Where s's lazy state is kept (set while some of s is left), or NULL for a section read
 * whole. */
static struct elf_section **sect_lazy(struct dwarf *d, const struct dwarf_sect *s)
{
	return s == &d->line	   ? &d->line_lazy
	       : s == &d->abbrev   ? &d->abbrev_lazy
	       : s == &d->str	   ? &d->str_lazy
	       : s == &d->line_str ? &d->line_str_lazy
	       : s == &d->rnglists ? &d->rnglists_lazy
				   : NULL;
}

void dwarf_sect_need(struct dwarf *d, struct dwarf_sect *s, uint64_t end)
{
	struct elf_section **lazy = sect_lazy(d, s);
	if (!lazy || !*lazy || end <= s->size)
		return;
	uint64_t want = end > UINT64_MAX - 0xffff ? end : (end + 0xffff) & ~(uint64_t)0xffff;
	size_t total;
	if (elf_section_prefix(d->elf, *lazy, want > SIZE_MAX ? SIZE_MAX : (size_t)want, &s->data,
			       &s->size, &total)) {
		d->beyond = true;
		*lazy = NULL;
	} else if (s->size == total) {
		*lazy = NULL;
	}
}

bool dwarf_sect_grow(struct dwarf *d, struct dwarf_sect *s, uint64_t off, uint64_t *len)
{
	struct elf_section **lazy = sect_lazy(d, s);
	if (!lazy || !*lazy)
		return false;
	dwarf_sect_need(d, s, *len > UINT64_MAX - off ? UINT64_MAX : off + *len);
	*len = *len < UINT64_MAX / 2 ? 2 * *len : UINT64_MAX;
	return true;
}

struct info_loader {
	struct dwarf *d;
	int err;
	char msg[512]; /* err's message: messages are per thread */
};

/* Inflates the front of .debug_info up to byte want (rounded up: one call per unit
 * would be many calls). */
static int info_front(struct dwarf *d, struct elf_section *s, uint64_t want, size_t *avail,
		      size_t *total)
{
	want = (want + 0xffff) & ~(uint64_t)0xffff;
	return elf_section_prefix(d->elf, s, want > SIZE_MAX ? SIZE_MAX : (size_t)want,
				  &d->info.data, avail, total);
}

/* .debug_info through the unit that holds offset upto only: unit lengths are read as the
 * front comes in. A damaged length takes the whole section, for read_units() to report. */
static int load_info_front(struct dwarf *d, uint64_t upto)
{
	struct elf_section *s = elf_section_by_name(d->elf, ".debug_info");
	if (!s)
		return 0;
	size_t avail, total;
	uint64_t off = 0;
	int err = info_front(d, s, upto, &avail, &total);
	while (!err && off < total) {
		err = info_front(d, s, off + 12, &avail, &total);
		struct cur c = cur_make(d->info.data, avail, d->big_endian);
		cur_seek(&c, off);
		uint64_t len = cur_u32(&c);
		if (len == 0xffffffff)
			len = cur_u64(&c);
		if (err || !cur_ok(&c) || len > total - cur_off(&c)) {
			off = total;
			break;
		}
		off = cur_off(&c) + len;
		if (off > upto)
			break;
	}
	if (!err)
		err = info_front(d, s, off, &avail, &total);
	d->info.size = off < total ? off : total;
	d->info_total = total;
	d->partial = d->info.size < total;
	return err;
}

static void *load_info(void *arg)
{
	struct info_loader *l = arg;
	if (l->d->front)
		l->err = load_info_front(l->d, l->d->front_upto);
	else
		load_section(l->d, ".debug_info", &l->d->info, &l->err);
	if (l->err)
		snprintf(l->msg, sizeof(l->msg), "%s", err_msg());
	return NULL;
}

/* A large compressed .debug_info takes as long to inflate as all other sections together:
 * it gets a thread of its own. */
static bool inflate_info_apart(struct dwarf *d)
{
	const struct elf_section *s = elf_section_by_name(d->elf, ".debug_info");
	return s && s->size > (1u << 20) &&
	       ((s->flags & SHF_COMPRESSED) || !strncmp(s->name, ".zdebug", 7));
}

static int load_sections(struct dwarf *d)
{
	int err = 0;
	struct info_loader l = { d, 0, "" };
	pthread_t th;
	bool apart = inflate_info_apart(d) && !pthread_create(&th, NULL, load_info, &l);
	if (!apart)
		load_info(&l);
	if (d->front)
		load_lazy(d, ".debug_abbrev", &d->abbrev, &d->abbrev_lazy, &err);
	else
		load_section(d, ".debug_abbrev", &d->abbrev, &err);
	load_section(d, ".debug_str_offsets", &d->str_offsets, &err);
	load_section(d, ".debug_addr", &d->addr, &err);
	load_section(d, ".debug_ranges", &d->ranges, &err);
	if (d->front) {
		/* Units and lists lie in these in unit order, and strings mostly in the order
		 * units first use them: a front needs the front of each (libc6-dbg's whole
		 * string and range-list sections took a fifth of one lookup). */
		load_lazy(d, ".debug_line", &d->line, &d->line_lazy, &err);
		load_lazy(d, ".debug_str", &d->str, &d->str_lazy, &err);
		load_lazy(d, ".debug_line_str", &d->line_str, &d->line_str_lazy, &err);
		load_lazy(d, ".debug_rnglists", &d->rnglists, &d->rnglists_lazy, &err);
	} else {
		load_section(d, ".debug_line", &d->line, &err);
		load_section(d, ".debug_str", &d->str, &err);
		load_section(d, ".debug_line_str", &d->line_str, &err);
		load_section(d, ".debug_rnglists", &d->rnglists, &err);
	}
	if (apart && !d->front && !err) {
		/* Units are read as soon as .debug_info is in; their abbreviation tables,
		 * most of that work, can be read before. The usual shape is a guess: a unit of
		 * another shape skips DIEs attribute by attribute, which is slower, not wrong. */
		struct dwarf_unit shape = { .addr_size = d->elf->is64 ? 8 : 4, .offset_size = 4,
					    .version = 5 };
		dwarf_abbrevs_preload(d, &shape);
	}
	if (apart)
		pthread_join(th, NULL);
	if (!err && l.err)
		err_set(l.err, "%s", l.msg);
	return err ? err : l.err;
}

/* The header of the unit at .debug_info offset off, from c: the section's bytes from off on,
 * room of them (or a head of them, long enough for any header but the section's end). */
static int read_header(struct dwarf *d, struct cur *c, uint64_t off, uint64_t room,
		       struct dwarf_unit *u)
{
	u->offset = off;
	uint64_t len = cur_u32(c);
	u->offset_size = 4;
	if (len == 0xffffffff) {
		len = cur_u64(c);
		u->offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return dwarf_info_bad(d, u->offset, "reserved unit length");
	}
	if (!cur_ok(c) || len > room - cur_off(c))
		return dwarf_info_bad(d, u->offset, "unit length runs past the section");
	u->end = off + cur_off(c) + len;
	u->version = cur_u16(c);
	if (u->version < 2 || u->version > 5)
		return dwarf_info_bad(d, u->offset, "unsupported DWARF version");
	if (u->version >= 5) {
		u->unit_type = cur_u8(c);
		u->addr_size = cur_u8(c);
		u->abbrev_offset = cur_uN(c, u->offset_size);
		if (u->unit_type == DW_UT_skeleton || u->unit_type == DW_UT_split_compile)
			cur_skip(c, 8); /* dwo_id */
		else if (u->unit_type == DW_UT_type || u->unit_type == DW_UT_split_type)
			cur_skip(c, 8 + u->offset_size); /* signature, type offset */
	} else {
		u->unit_type = DW_UT_compile;
		u->abbrev_offset = cur_uN(c, u->offset_size);
		u->addr_size = cur_u8(c);
	}
	if (!cur_ok(c) || off + cur_off(c) > u->end)
		return dwarf_info_bad(d, u->offset, "unit header runs past the unit");
	if (u->addr_size != 1 && u->addr_size != 2 && u->addr_size != 4 && u->addr_size != 8)
		return dwarf_info_bad(d, u->offset, "unsupported address size");
	u->first_die = off + cur_off(c);
	return 0;
}

static uint64_t value_u(const struct dwarf_die *die, uint16_t at, bool *has)
{
	const struct dwarf_value *v = dwarf_die_attr(die, at);
	bool ok = v && (v->cls == DWC_SECOFF || v->cls == DWC_CONST);
	if (has)
		*has = ok;
	return ok ? v->u : 0;
}

static const char *value_str(const struct dwarf_die *die, uint16_t at)
{
	const struct dwarf_value *v = dwarf_die_attr(die, at);
	return v && v->cls == DWC_STRING ? v->str : NULL;
}

/* A cursor at u's root DIE: in its head when it has one, else in the mapping. */
static struct cur root_cursor(const struct dwarf *d, const struct dwarf_unit *u)
{
	struct cur c;
	if (u->head) {
		c = cur_make(u->head, u->head_size, d->big_endian);
		cur_seek(&c, u->first_die - u->offset);
	} else {
		c = cur_make(d->info.data, u->end, d->big_endian);
		cur_seek(&c, u->first_die);
	}
	return c;
}

/* The root DIE needs one abbreviation. Unless the unit's table is loaded already
 * (preloaded for a whole read), that one is decoded alone: a front read or a few lookups
 * touch a few units of many, and parsing every table was most of opening them. */
static int root_abbrev(struct dwarf *d, struct dwarf_unit *u)
{
	if (dwarf_unit_abbrevs_loaded(d, u))
		return 0;
	struct cur c = root_cursor(d, u);
	uint64_t code = cur_uleb(&c);
	if (!cur_ok(&c) || !code)
		return 0; /* dwarf_unit_root() says what is wrong, or finds no root */
	int err = dwarf_abbrev_decode(d, u, code, &u->root_abbrev);
	return err == -ENOENT ? 0 : err;
}

/* The root DIE from the unit's head when that holds all of it, else (the head dropped, so
 * that later readers go there at once) from the mapping. */
static int read_root(struct dwarf *d, struct dwarf_unit *u, struct dwarf_die *die)
{
	int err = dwarf_unit_root(d, u, die);
	if (err && u->head && u->head_size < u->end - u->offset) {
		err_clear();
		u->head = NULL;
		err = dwarf_unit_root(d, u, die);
	}
	return err;
}

/* The unit DIE is read twice: its bases must be known before its own strx/addrx forms
 * can be resolved, and they may come after those forms. */
static int read_unit_die(struct dwarf *d, struct dwarf_unit *u, struct dwarf_die *die)
{
	int err = root_abbrev(d, u);
	if (err)
		return err;
	for (int pass = 0; pass < 2; pass++) {
		err = read_root(d, u, die);
		if (err || !die->abbrev)
			return err;
		u->str_offsets_base = value_u(die, DW_AT_str_offsets_base, &u->has_str_offsets_base);
		bool has;
		u->addr_base = value_u(die, DW_AT_addr_base, &has);
		if (!has)
			u->addr_base = value_u(die, DW_AT_GNU_addr_base, NULL);
		u->rnglists_base = value_u(die, DW_AT_rnglists_base, &u->has_rnglists_base);
		u->loclists_base = value_u(die, DW_AT_loclists_base, NULL);
		/* The second pass reads again what depends on those bases: without any,
		 * nothing would change. */
		if (!u->str_offsets_base && !u->addr_base && !u->rnglists_base && !u->loclists_base)
			break;
	}
	u->tag = die->abbrev->tag;
	const struct dwarf_value *low = dwarf_die_attr(die, DW_AT_low_pc);
	u->base_addr = low && low->cls == DWC_ADDR ? low->u : 0;
	u->stmt_list = value_u(die, DW_AT_stmt_list, &u->has_stmt_list);
	u->name = value_str(die, DW_AT_name);
	u->comp_dir = value_str(die, DW_AT_comp_dir);
	u->language = (uint16_t)value_u(die, DW_AT_language, NULL);
	u->is_split = u->unit_type == DW_UT_skeleton || u->tag == DW_TAG_skeleton_unit ||
		      dwarf_die_attr(die, DW_AT_dwo_name) || dwarf_die_attr(die, DW_AT_GNU_dwo_name);
	if (u->is_split && !d->unsupported)
		d->unsupported = "split DWARF (.dwo/.dwp)";
	return 0;
}

/* The header of the unit at off, from its head when one is read from the file (kept for
 * its root DIE), else from the mapping. */
static int read_header_at(struct dwarf *d, struct dwarf_heads *h, uint64_t off,
			  struct dwarf_unit *u)
{
	uint8_t buf[DWARF_HEAD_MAX];
	size_t n = dwarf_head_read(d, h, off, buf);
	struct cur c = n ? cur_make(buf, n, d->big_endian)
			 : cur_make(d->info.data + off, d->info.size - off, d->big_endian);
	int err = read_header(d, &c, off, d->info.size - off, u);
	if (!err && n && (u->head = arena_copy(&d->arena, buf, n)))
		u->head_size = (uint32_t)n;
	if (!err)
		dwarf_heads_note(h, u);
	return err;
}

/* The units past those already read (all of them at first): headers, then first DIEs. */
static int read_units(struct dwarf *d)
{
	/* dwz moves shared DIEs and strings to an alternate file this reader does not open. */
	if (elf_section_by_name(d->elf, ".gnu_debugaltlink"))
		d->unsupported = "dwz alternate debug files (.gnu_debugaltlink)";
	size_t first = d->nunits, cap = first; /* full: the first new unit grows it */
	struct dwarf_heads heads;
	dwarf_heads_open(d, &heads);
	int err = 0;
	for (uint64_t off = first ? d->units[first - 1].end : 0; off < d->info.size && !err;) {
		/* VEC's growth on the array symbolize/ reads as units and nunits */
		if (d->nunits == cap &&
		    !vec_reserve_grow((void **)&d->units, d->nunits, &cap, sizeof(*d->units), 1)) {
			err = -ENOMEM;
			break;
		}
		struct dwarf_unit *u = &d->units[d->nunits];
		memset(u, 0, sizeof(*u));
		err = read_header_at(d, &heads, off, u);
		if (!err) {
			d->nunits++;
			off = u->end;
		}
	}
	dwarf_heads_close(&heads);
	if (err)
		return err;
	struct dwarf_die *die = malloc(sizeof(*die));
	if (!die)
		return -ENOMEM;
	for (size_t i = first; i < d->nunits && !err; i++) {
		struct dwarf_unit *u = &d->units[i];
		if (u->unit_type == DW_UT_compile || u->unit_type == DW_UT_partial ||
		    u->unit_type == DW_UT_skeleton)
			err = read_unit_die(d, u, die);
		else
			err = dwarf_unit_abbrevs(d, u);
	}
	free(die);
	return err;
}

static int reread_units(struct dwarf *d)
{
	free(d->units);
	d->units = NULL;
	d->nunits = 0;
	d->unsupported = NULL;
	return read_units(d);
}

static struct dwarf *dwarf_new(struct elf_file *elf)
{
	struct dwarf *d = calloc(1, sizeof(*d));
	if (d) {
		d->elf = elf;
		d->path = elf->path;
		d->big_endian = elf->big_endian;
		mutex_init_adaptive(&d->abbrev_lock);
	}
	return d;
}

/* Hands d out, or frees it when err says opening failed. */
static int finish(struct dwarf *d, int err, struct dwarf **out)
{
	if (err) {
		if (err == -ENOMEM)
			err_set(err, "%s: out of memory", d->path);
		dwarf_close(d);
		return err;
	}
	*out = d;
	return 0;
}

int dwarf_open(struct elf_file *elf, struct dwarf **out)
{
	struct dwarf *d = dwarf_new(elf);
	if (!d)
		return err_set(-ENOMEM, "%s: out of memory", elf->path);
	int err = load_sections(d);
	if (!err)
		err = read_units(d);
	if (!err && d->info.size && (elf->machine == ELF_EM_BPF || elf->machine == ELF_EM_SBPF)) {
		/* Repair works on the units' bytes, so units are read again afterwards. */
		int r = dwarf_repair_sbpf(d);
		if (r < 0)
			err = r;
		else if (r > 0)
			err = reread_units(d);
	}
	return finish(d, err, out);
}

int dwarf_open_front(struct elf_file *elf, uint64_t upto, struct dwarf **out)
{
	struct dwarf *d = dwarf_new(elf);
	if (!d)
		return err_set(-ENOMEM, "%s: out of memory", elf->path);
	d->front = true;
	d->front_upto = upto;
	int err = load_sections(d);
	if (!err)
		err = read_units(d);
	return finish(d, err, out);
}

int dwarf_front_extend(struct dwarf *d, uint64_t upto)
{
	int err = load_info_front(d, upto);
	return err ? err : read_units(d);
}

int dwarf_open_sections(struct elf_file *elf, const struct dwarf_sect *info,
			const struct dwarf_sect *abbrev, const struct dwarf_sect *str,
			const struct dwarf_sect *line, struct dwarf **out)
{
	struct dwarf *d = dwarf_new(elf);
	if (!d)
		return err_set(-ENOMEM, "%s: out of memory", elf->path);
	d->info = *info;
	d->abbrev = *abbrev;
	d->str = *str;
	d->line = *line;
	return finish(d, read_units(d), out);
}

void dwarf_close(struct dwarf *d)
{
	if (!d)
		return;
	free(d->units);
	vec_free(&d->abbrev_tables);
	arena_free(&d->arena);
	pthread_mutex_destroy(&d->abbrev_lock);
	free(d);
}

struct dwarf_unit *dwarf_unit_at(struct dwarf *d, uint64_t off)
{
	if (d->partial && off >= d->info.size && off < d->info_total)
		d->beyond = true;
	size_t lo = UPPER_BOUND(d->units, d->nunits, .end, off);
	if (lo < d->nunits && d->units[lo].first_die <= off)
		return &d->units[lo];
	return NULL;
}

const struct dwarf_value *dwarf_die_attr(const struct dwarf_die *die, uint16_t at)
{
	if (!die->abbrev)
		return NULL;
	for (uint16_t i = 0; i < die->nvals; i++)
		if (die->abbrev->attrs[i].name == at)
			return &die->vals[i];
	return NULL;
}

static int read_attrs(struct dwarf *d, struct dwarf_unit *u, struct cur *c, struct dwarf_die *die,
		      uint64_t *next);

int dwarf_die_read(struct dwarf *d, struct dwarf_unit *u, uint64_t off, struct dwarf_die *die,
		   uint64_t *next)
{
	struct cur c;
	int err = dwarf_die_begin(d, u, off, die, &c);
	if (err)
		return err;
	if (!die->abbrev) {
		*next = cur_off(&c);
		return 0;
	}
	return read_attrs(d, u, &c, die, next);
}

/* The root DIE's abbreviation: from the unit's whole table once that is loaded, else the
 * one decoded alone (root_abbrev()). */
static int root_abbrev_of(struct dwarf *d, struct dwarf_unit *u, uint64_t code,
			  const struct dwarf_abbrev **a)
{
	*a = NULL;
	if (u->abbrevs || !u->root_abbrev.code) {
		int err = dwarf_unit_abbrevs(d, u);
		if (err)
			return err;
		if (code && !(*a = dwarf_abbrev_find(u->abbrevs, code)))
			return dwarf_info_bad(d, u->first_die,
					      "DIE uses an undefined abbreviation code");
		return 0;
	}
	if (code != u->root_abbrev.code)
		return dwarf_info_bad(d, u->first_die, "truncated DIE");
	*a = &u->root_abbrev;
	return 0;
}

int dwarf_unit_root(struct dwarf *d, struct dwarf_unit *u, struct dwarf_die *die)
{
	uint64_t next, off = u->first_die;
	if (off >= u->end)
		return dwarf_info_bad(d, off, "DIE offset outside its unit");
	struct cur c = root_cursor(d, u);
	die->offset = off;
	die->nvals = 0;
	uint64_t code = cur_uleb(&c);
	if (!cur_ok(&c))
		return dwarf_info_bad(d, off, "truncated DIE");
	int err = root_abbrev_of(d, u, code, &die->abbrev);
	if (err || !die->abbrev)
		return err;
	err = read_attrs(d, u, &c, die, &next);
	if (!err && u->head)
		dwarf_head_repoint(d, u, die);
	return err;
}

/* Decodes die's attributes (die->abbrev's) at c. */
static int read_attrs(struct dwarf *d, struct dwarf_unit *u, struct cur *c, struct dwarf_die *die,
		      uint64_t *next)
{
	uint64_t off = die->offset;
	for (uint16_t i = 0; i < die->abbrev->nattrs; i++) {
		const struct dwarf_abbrev_attr *a = &die->abbrev->attrs[i];
		struct dwarf_value scratch;
		struct dwarf_value *v = i < DWARF_MAX_ATTRS ? &die->vals[i] : &scratch;
		if (dwarf_form_read(d, u, c, a->form, dwarf_attr_const(die->abbrev, a), v))
			return dwarf_info_bad(d, off, cur_ok(c) ? "DIE uses an unknown attribute form"
						     : "DIE runs past the end of its unit");
	}
	die->nvals = die->abbrev->nattrs < DWARF_MAX_ATTRS ? die->abbrev->nattrs : DWARF_MAX_ATTRS;
	*next = cur_off(c);
	return 0;
}

/* The DW_AT_sibling value of a DIE whose attributes are all of fixed size, read in place:
 * what dwarf_form_read() makes of these forms. */
static uint64_t sibling_in_place(const struct dwarf_unit *u, const struct cur *c,
				 const struct dwarf_abbrev *a)
{
	struct cur at = *c;
	at.p += a->sibling_at;
	switch (a->sibling_form) {
	case DW_FORM_ref1: return u->offset + cur_u8(&at);
	case DW_FORM_ref2: return u->offset + cur_u16(&at);
	case DW_FORM_ref4: return u->offset + cur_u32(&at);
	case DW_FORM_ref8: return u->offset + cur_u64(&at);
	}
	return cur_uN(&at, u->version <= 2 ? u->addr_size : u->offset_size); /* ref_addr */
}

/* Skips the attributes of a DIE of abbreviation a at c, noting its DW_AT_sibling. */
static int skip_attrs(struct dwarf *d, struct dwarf_unit *u, struct cur *c,
		      const struct dwarf_abbrev *a, uint64_t *sibling)
{
	bool sized = u->abbrevs_fit;
	if (sized && a->fixed && a->sibling_at == DWARF_NO_SIBLING) {
		cur_skip(c, a->fixed_size);
		return 0;
	}
	if (sized && a->fixed && a->sibling_at >= 0) {
		if (cur_left(c) < a->fixed_size) {
			cur_skip(c, a->fixed_size); /* marks c bad, as the slow path would */
			return -EINVAL;
		}
		*sibling = sibling_in_place(u, c, a);
		cur_skip(c, a->fixed_size);
		return 0;
	}
	for (uint16_t i = 0; i < a->nattrs;) {
		const struct dwarf_abbrev_attr *at = &a->attrs[i];
		int err = 0;
		if (sized && at->run) { /* a string or block among fixed ones: the rest in steps */
			cur_skip(c, at->run_size);
			i += at->run;
			continue;
		}
		if (at->name == DW_AT_sibling) {
			struct dwarf_value v;
			err = dwarf_form_read(d, u, c, at->form, dwarf_attr_const(a, at), &v);
			if (!err && v.cls == DWC_REF)
				*sibling = v.u;
		} else {
			err = dwarf_form_skip(d, u, c, at->form);
		}
		if (err)
			return err;
		i++;
	}
	return 0;
}

int dwarf_die_skip(struct dwarf *d, struct dwarf_unit *u, uint64_t off,
		   const struct dwarf_abbrev **abbrev, uint64_t *sibling, uint64_t *next)
{
	if (off < u->first_die || off >= u->end)
		return dwarf_info_bad(d, off, "DIE offset outside its unit");
	struct cur c = cur_make(d->info.data, u->end, d->big_endian);
	c.p += off; /* inside the unit: checked above */
	uint64_t code = cur_uleb(&c);
	*sibling = 0;
	*abbrev = NULL;
	if (code) {
		*abbrev = dwarf_abbrev_find(u->abbrevs, code);
		if (!*abbrev)
			return dwarf_info_bad(d, off, "DIE uses an undefined abbreviation code");
		if (skip_attrs(d, u, &c, *abbrev, sibling))
			return dwarf_info_bad(d, off, cur_ok(&c) ? "DIE uses an unknown attribute form"
						      : "DIE runs past the end of its unit");
	}
	if (!cur_ok(&c))
		return dwarf_info_bad(d, off, "truncated DIE");
	*next = cur_off(&c);
	return 0;
}

int dwarf_die_at(struct dwarf *d, uint64_t off, struct dwarf_die *die, struct dwarf_unit **u)
{
	struct dwarf_unit *unit = dwarf_unit_at(d, off);
	if (!unit)
		return dwarf_info_bad(d, off, "reference to an offset outside every unit");
	int err = dwarf_unit_abbrevs(d, unit);
	if (err)
		return err;
	uint64_t next;
	*u = unit;
	return dwarf_die_read(d, unit, off, die, &next);
}
