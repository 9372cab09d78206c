/*
 * pprof input: profile.proto, gzipped (as pprof writes it) or plain. The file is read in
 * two passes because profile.proto allows its tables in any order: the first records where
 * each message is, the second resolves ids (mappings, functions, locations) and strings
 * and adds the samples. A location's Line entries are innermost first; all but the last
 * become inline frames. Mappings named "[kernel..." give kernel frames, a function named
 * "[truncated]" the truncated kind, a system_name "NAME [vm]" (or syscall, program; tally's
 * export writes those) that kind. Addresses become module-relative ELF vaddrs (see
 * pprof_addr.h): by the vaddr tally's export recorded for the mapping, else through the
 * PT_LOAD segments of the mapping's file when the caller's lookup finds it
 * (prof_read_pprof_files), else they stay file offsets (address - memory_start +
 * file_offset). Comments "tally.source=..." and "tally.counter.NAME=VALUE" (written by
 * tally's pprof export) restore those facts.
 */
#include "profile/read.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/err.h"
#include "base/vec.h"
#include "profile/pb.h"
#include "profile/pprof_addr.h"
#include "profile/profile.h"

/* A decompressed profile larger than this is refused (a gzip bomb is tiny on disk; 1 GiB
 * of protobuf is far beyond any real profile, and is read in seconds). */
#define PPROF_MAX_SIZE (1ull << 30)

struct pstr {
	const char *s;
	size_t len;
};

/* How a mapping's addresses become module-relative ones. */
enum xlate {
	XL_OFFSET,   /* address - start + offset: the file offset (no file to translate it) */
	XL_VADDR,    /* address - start + vaddr: tally's export said where start is */
	XL_SEGMENTS, /* the file offset through the PT_LOAD segments of the mapping's file */
};

struct pmapping {
	uint64_t id, start, offset, file, build_id;
	uint32_t module; /* prof module, made on first use, with what follows */
	bool kernel;
	uint8_t xlate;	 /* enum xlate */
	uint64_t vaddr;	 /* XL_VADDR: the vaddr at start */
	size_t elf;	 /* XL_SEGMENTS: into elfs */
};

/* The segments of a mapping's file, looked up once per (filename, build_id). */
struct pelf {
	uint64_t file, build_id;
	struct pprof_seg *segs;
	size_t n;
	bool found;
};

/* A PPROF_MAPPING_COMMENT. */
struct pnote {
	uint64_t start, offset, vaddr;
	const char *file;
	size_t file_len;
};

struct pfunction {
	uint64_t id, name, system_name, file, start_line;
};

struct pline {
	uint64_t function;
	int64_t line;
};

struct plocation {
	uint64_t id, mapping, address;
	size_t first_line, nlines; /* into lines */
	/* Its frames once made (locations are shared by many samples): into loc_frames. */
	size_t frames_at, nframes;
	bool made;
};

struct pprof {
	const char *name;
	prof_pprof_segments_fn segments; /* NULL: no mapping's file is looked at */
	struct prof *p;
	VEC(struct pstr) strs;
	VEC(struct pmapping) mappings;
	VEC(struct pfunction) functions;
	VEC(struct plocation) locations;
	VEC(struct pline) lines;
	VEC(struct cur) samples;
	VEC(uint64_t) sample_types; /* type, unit string ids, pairwise */
	VEC(uint64_t) comments;
	VEC(struct pelf) elfs;
	VEC(struct pnote) notes;
	VEC(uint64_t) tmp;
	VEC(int64_t) values; /* one sample's, as many as the sample types (input decides) */
	VEC(struct prof_loc) stack;
	VEC(struct prof_loc) loc_frames;
	uint64_t period_type[2];
	int64_t period, time_ns, duration_ns, default_type;
};

static int bad(const char *what, size_t off)
{
	return err_set(-EINVAL, "at 0x%zx: %s", off, what);
}

static int push_u64(uint64_t v, void *vec)
{
	VEC(uint64_t) *t = vec;
	uint64_t *slot = vec_push(t);
	if (!slot)
		return err_set(-ENOMEM, "out of memory");
	*slot = v;
	return 0;
}

static int read_value_type(struct cur c, uint64_t out[2])
{
	struct pb_field f;
	int rc;
	out[0] = out[1] = 0;
	while ((rc = pb_next(&c, &f)) > 0)
		if ((f.num == 1 || f.num == 2) && f.wire == PB_VARINT)
			out[f.num - 1] = f.v;
	return rc;
}

static int read_mapping(struct pprof *x, struct cur c)
{
	struct pmapping *m = vec_push(&x->mappings);
	struct pb_field f;
	int rc;
	if (!m)
		return err_set(-ENOMEM, "out of memory");
	m->module = PROF_NONE;
	while ((rc = pb_next(&c, &f)) > 0) {
		if (f.wire != PB_VARINT)
			continue;
		switch (f.num) {
		case 1: m->id = f.v; break;
		case 2: m->start = f.v; break;
		case 4: m->offset = f.v; break;
		case 5: m->file = f.v; break;
		case 6: m->build_id = f.v; break;
		}
	}
	return rc;
}

static int read_function(struct pprof *x, struct cur c)
{
	struct pfunction *fn = vec_push(&x->functions);
	struct pb_field f;
	int rc;
	if (!fn)
		return err_set(-ENOMEM, "out of memory");
	while ((rc = pb_next(&c, &f)) > 0) {
		if (f.wire != PB_VARINT)
			continue;
		switch (f.num) {
		case 1: fn->id = f.v; break;
		case 2: fn->name = f.v; break;
		case 3: fn->system_name = f.v; break;
		case 4: fn->file = f.v; break;
		case 5: fn->start_line = f.v; break;
		}
	}
	return rc;
}

static int read_line(struct pprof *x, struct cur c)
{
	struct pline *l = vec_push(&x->lines);
	struct pb_field f;
	int rc;
	if (!l)
		return err_set(-ENOMEM, "out of memory");
	while ((rc = pb_next(&c, &f)) > 0) {
		if (f.wire == PB_VARINT && f.num == 1)
			l->function = f.v;
		else if (f.wire == PB_VARINT && f.num == 2)
			l->line = (int64_t)f.v;
	}
	return rc;
}

static int read_location(struct pprof *x, struct cur c)
{
	struct plocation loc = { .first_line = x->lines.n };
	struct pb_field f;
	int rc;
	while ((rc = pb_next(&c, &f)) > 0) {
		if (f.num == 4 && f.wire == PB_LEN)
			rc = read_line(x, f.sub);
		else if (f.wire == PB_VARINT && f.num == 1)
			loc.id = f.v;
		else if (f.wire == PB_VARINT && f.num == 2)
			loc.mapping = f.v;
		else if (f.wire == PB_VARINT && f.num == 3)
			loc.address = f.v;
		if (rc < 0)
			return rc;
	}
	loc.nlines = x->lines.n - loc.first_line;
	struct plocation *slot = rc ? NULL : vec_push(&x->locations);
	if (slot)
		*slot = loc;
	return rc ? rc : slot ? 0 : err_set(-ENOMEM, "out of memory");
}

/* First pass: the top-level fields of Profile. */
static int read_top(struct pprof *x, struct cur c)
{
	struct pb_field f;
	int rc;
	while ((rc = pb_next(&c, &f)) > 0) {
		bool len = f.wire == PB_LEN, var = f.wire == PB_VARINT;
		uint64_t vt[2];
		struct pstr *s;
		struct cur *sc;
		switch (f.num) {
		case 1:
			if (!len)
				return bad("sample_type is not a message", f.off);
			rc = read_value_type(f.sub, vt);
			if (!rc && (push_u64(vt[0], &x->sample_types) ||
				    push_u64(vt[1], &x->sample_types)))
				rc = -ENOMEM;
			break;
		case 2:
			if (!len)
				return bad("sample is not a message", f.off);
			if (!(sc = vec_push(&x->samples)))
				return err_set(-ENOMEM, "out of memory");
			*sc = f.sub;
			break;
		case 3: rc = len ? read_mapping(x, f.sub) : bad("mapping is not a message", f.off); break;
		case 4: rc = len ? read_location(x, f.sub) : bad("location is not a message", f.off); break;
		case 5: rc = len ? read_function(x, f.sub) : bad("function is not a message", f.off); break;
		case 6:
			if (!len)
				return bad("string_table entry is not a string", f.off);
			if (!(s = vec_push(&x->strs)))
				return err_set(-ENOMEM, "out of memory");
			s->len = f.v;
			s->s = (const char *)cur_bytes(&f.sub, f.v);
			break;
		case 9: if (var) x->time_ns = (int64_t)f.v; break;
		case 10: if (var) x->duration_ns = (int64_t)f.v; break;
		case 11: rc = len ? read_value_type(f.sub, x->period_type) : 0; break;
		case 12: if (var) x->period = (int64_t)f.v; break;
		case 13: rc = pb_each_varint(&f, push_u64, &x->comments); break;
		case 14: if (var) x->default_type = (int64_t)f.v; break;
		}
		if (rc < 0)
			return rc;
	}
	return rc;
}

/* String i of the table, interned; PROF_NONE (message set) when out of range. */
static const char *str(struct pprof *x, uint64_t i, const char *what)
{
	if (i >= x->strs.n) {
		err_set(-EINVAL, "%s refers to string %" PRIu64 " of %zu", what, i, x->strs.n);
		return NULL;
	}
	uint32_t id = prof_intern(x->p, x->strs.v[i].s, x->strs.v[i].len);
	return id == PROF_NONE ? NULL : prof_str(x->p, id);
}

#define BY_ID_CMP(T)                                                              \
	static int cmp_##T(const void *a, const void *b)                          \
	{                                                                         \
		uint64_t x = ((const struct T *)a)->id, y = ((const struct T *)b)->id; \
		return (x > y) - (x < y);                                         \
	}
BY_ID_CMP(pmapping)
BY_ID_CMP(pfunction)
BY_ID_CMP(plocation)

/* Sorts a table by id and rejects id 0 and duplicates (ids are how samples refer to it). */
#define SORT_BY_ID(vec, T, what)                                                            \
	do {                                                                                \
		if ((vec).n)                                                                \
			qsort((vec).v, (vec).n, sizeof(*(vec).v), cmp_##T);                 \
		for (size_t i_ = 0; i_ < (vec).n; i_++)                                     \
			if (!(vec).v[i_].id || (i_ && (vec).v[i_].id == (vec).v[i_ - 1].id)) \
				return err_set(-EINVAL, "%s id %" PRIu64 " is 0 or repeated", \
					       what, (vec).v[i_].id);                       \
	} while (0)

#define FIND_BY_ID(vec, T, key)                                                              \
	((vec).n ? (struct T *)bsearch(&(struct T){ .id = (key) }, (vec).v, (vec).n,            \
				       sizeof(*(vec).v), cmp_##T)                               \
		 : NULL)

static int index_tables(struct pprof *x)
{
	SORT_BY_ID(x->mappings, pmapping, "mapping");
	SORT_BY_ID(x->functions, pfunction, "function");
	SORT_BY_ID(x->locations, plocation, "location");
	return 0;
}

/* "0xHEX," at *p (before end), moving *p past it. */
static bool hex_field(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	*out = 0;
	if (end - s < 4 || s[0] != '0' || s[1] != 'x')
		return false;
	for (s += 2; s < end && *s != ','; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
		if (d < 0 || *out >> 60)
			return false;
		*out = *out << 4 | (uint64_t)d;
	}
	if (s == end || s == *p + 2)
		return false;
	*p = s + 1;
	return true;
}

/* Reads the PPROF_MAPPING_COMMENTs. Comments are free text: one that does not parse is
 * someone else's and is left alone. */
static int read_notes(struct pprof *x)
{
	static const char tag[] = PPROF_MAPPING_COMMENT;
	for (size_t i = 0; i < x->comments.n; i++) {
		const struct pstr *c = x->comments.v[i] < x->strs.n ? &x->strs.v[x->comments.v[i]] : NULL;
		if (!c || c->len < sizeof(tag) - 1 || memcmp(c->s, tag, sizeof(tag) - 1))
			continue;
		const char *at = c->s + sizeof(tag) - 1, *end = c->s + c->len;
		struct pnote note;
		if (!hex_field(&at, end, &note.start) || !hex_field(&at, end, &note.offset) ||
		    !hex_field(&at, end, &note.vaddr))
			continue;
		note.file = at;
		note.file_len = (size_t)(end - at);
		struct pnote *slot = vec_push(&x->notes);
		if (!slot)
			return err_set(-ENOMEM, "out of memory");
		*slot = note;
	}
	return 0;
}

static int find_elf(struct pprof *x, const struct pmapping *m, const char *path,
		    const char *bid, size_t *out)
{
	for (*out = 0; *out < x->elfs.n; (*out)++)
		if (x->elfs.v[*out].file == m->file && x->elfs.v[*out].build_id == m->build_id)
			return 0;
	struct pelf *e = vec_push(&x->elfs);
	if (!e)
		return err_set(-ENOMEM, "out of memory");
	e->file = m->file;
	e->build_id = m->build_id;
	int rc = x->segments ? x->segments(path, bid, &e->segs, &e->n) : -ENOENT;
	e->found = !rc;
	return rc == -ENOENT ? 0 : rc;
}

/* Decides how the mapping's addresses are translated. */
static int set_xlate(struct pprof *x, struct pmapping *m, const char *path, const char *bid)
{
	m->xlate = XL_OFFSET;
	if (m->kernel)
		return 0;
	size_t plen = strlen(path);
	for (size_t i = 0; i < x->notes.n; i++) {
		const struct pnote *n = &x->notes.v[i];
		if (n->start == m->start && n->offset == m->offset && n->file_len == plen &&
		    !memcmp(n->file, path, plen)) {
			m->xlate = XL_VADDR;
			m->vaddr = n->vaddr;
			return 0;
		}
	}
	int rc = find_elf(x, m, path, bid, &m->elf);
	if (!rc && x->elfs.v[m->elf].found && x->elfs.v[m->elf].n)
		m->xlate = XL_SEGMENTS;
	return rc;
}

/* The module-relative address of runtime address a in mapping m. */
static uint64_t rel_address(const struct pprof *x, const struct pmapping *m, uint64_t a)
{
	uint64_t off = a - m->start + m->offset;
	if (m->xlate == XL_VADDR)
		return a - m->start + m->vaddr;
	if (m->xlate != XL_SEGMENTS)
		return off;
	const struct pelf *e = &x->elfs.v[m->elf];
	const struct pprof_seg *near = NULL; /* the segment the mapping itself starts in */
	for (size_t i = 0; i < e->n; i++) {
		const struct pprof_seg *s = &e->segs[i];
		if (off >= s->offset && off - s->offset < s->filesz)
			return s->vaddr + (off - s->offset);
		if (!near && m->offset <= s->offset + s->filesz - 1 &&
		    m->offset >= (s->offset & ~(uint64_t)0xfff))
			near = s;
	}
	/* Not in the file (an address past a segment's bytes): the mapping's own segment. */
	return near ? near->vaddr + (off - near->offset) : off;
}

/* The mapping's module, made on first use, with a as the first address seen in it. */
static uint32_t module_of(struct pprof *x, struct pmapping *m, uint64_t a)
{
	if (m->module != PROF_NONE)
		return m->module;
	const char *path = str(x, m->file, "mapping filename");
	const char *bid = path ? str(x, m->build_id, "mapping build_id") : NULL;
	if (!bid)
		return PROF_NONE;
	m->kernel = !strncmp(path, "[kernel", 7);
	if (set_xlate(x, m, path, bid))
		return PROF_NONE;
	m->module = prof_module(x->p, path, bid, a - rel_address(x, m, a));
	return m->module;
}

static int make_location(struct pprof *x, struct plocation *loc, uint64_t id);

/* tally's pprof export writes vm, syscall, program and JIT frames' system_name as
 * "NAME [KIND]"; anything else is a native frame. */
static enum prof_kind kind_from_system_name(const char *name, const char *sys)
{
	static const enum prof_kind kinds[] = { PROF_VM, PROF_SYSCALL, PROF_PROGRAM, PROF_JIT,
						PROF_PYTHON, PROF_RUBY };
	size_t n = strlen(name);
	if (strncmp(sys, name, n) || strncmp(sys + n, " [", 2))
		return PROF_NATIVE;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const char *k = prof_kind_name(kinds[i]);
		size_t kl = strlen(k);
		if (!strncmp(sys + n + 2, k, kl) && !strcmp(sys + n + 2 + kl, "]"))
			return kinds[i];
	}
	return PROF_NATIVE;
}

/* The frames of one location, innermost first, appended to x->stack. */
static int add_location(struct pprof *x, uint64_t id)
{
	struct plocation *loc = FIND_BY_ID(x->locations, plocation, id);
	if (!loc)
		return err_set(-EINVAL, "sample refers to missing location %" PRIu64, id);
	if (!loc->made) {
		size_t start = x->stack.n;
		int rc = make_location(x, loc, id);
		if (rc)
			return rc;
		loc->frames_at = x->loc_frames.n;
		loc->nframes = x->stack.n - start;
		for (size_t i = start; i < x->stack.n; i++) {
			struct prof_loc *l = vec_push(&x->loc_frames);
			if (!l)
				return err_set(-ENOMEM, "out of memory");
			*l = x->stack.v[i];
		}
		loc->made = true;
		return 0;
	}
	for (size_t i = 0; i < loc->nframes; i++) {
		struct prof_loc *l = vec_push(&x->stack);
		if (!l)
			return err_set(-ENOMEM, "out of memory");
		*l = x->loc_frames.v[loc->frames_at + i];
	}
	return 0;
}

/* Makes the frames of a location seen for the first time, appended to x->stack. */
static int make_location(struct pprof *x, struct plocation *loc, uint64_t id)
{
	struct pmapping *m = NULL;
	uint32_t module = PROF_NONE;
	if (loc->mapping) {
		m = FIND_BY_ID(x->mappings, pmapping, loc->mapping);
		if (!m)
			return err_set(-EINVAL, "location %" PRIu64 " refers to missing mapping %" PRIu64,
				       id, loc->mapping);
		if ((module = module_of(x, m, loc->address)) == PROF_NONE)
			return -EINVAL;
	}
	uint64_t pc = m ? rel_address(x, m, loc->address) : loc->address;
	struct prof_frame_desc d = { .kind = m && m->kernel ? PROF_KERNEL : PROF_NATIVE,
				     .module = module };
	if (!loc->nlines) {
		struct prof_loc *l = vec_push(&x->stack);
		if (!l)
			return err_set(-ENOMEM, "out of memory");
		d.addr = pc;
		l->frame = prof_frame(x->p, &d);
		l->pc = pc;
		return l->frame == PROF_NONE ? -EINVAL : 0;
	}
	for (size_t i = 0; i < loc->nlines; i++) {
		const struct pline *ln = &x->lines.v[loc->first_line + i];
		if (!ln->function) { /* profile.proto: 0 means the function is not known */
			struct prof_loc *l = vec_push(&x->stack);
			if (!l)
				return err_set(-ENOMEM, "out of memory");
			struct prof_frame_desc ud = d;
			ud.kind = i + 1 < loc->nlines ? PROF_INLINE : d.kind;
			ud.addr = pc;
			l->frame = prof_frame(x->p, &ud);
			l->pc = pc;
			l->line = ln->line > 0 && ln->line <= UINT32_MAX ? (uint32_t)ln->line : 0;
			if (l->frame == PROF_NONE)
				return -EINVAL;
			continue;
		}
		const struct pfunction *fn = FIND_BY_ID(x->functions, pfunction, ln->function);
		if (!fn)
			return err_set(-EINVAL, "location %" PRIu64 " refers to missing function %" PRIu64,
				       id, ln->function);
		struct prof_frame_desc fd = d;
		fd.function = str(x, fn->name, "function name");
		fd.file = fd.function ? str(x, fn->file, "function filename") : NULL;
		if (!fd.file)
			return -EINVAL;
		fd.line = fn->start_line <= UINT32_MAX ? (uint32_t)fn->start_line : 0;
		const char *sys = str(x, fn->system_name, "function system_name");
		if (!sys)
			return -EINVAL;
		if (i + 1 < loc->nlines)
			fd.kind = PROF_INLINE;
		else if (!strcmp(fd.function, "[truncated]") && !m)
			fd.kind = PROF_TRUNCATED, fd.function = NULL, fd.file = NULL;
		else if (fd.kind == PROF_NATIVE)
			fd.kind = kind_from_system_name(fd.function, sys);
		struct prof_loc *l = vec_push(&x->stack);
		if (!l)
			return err_set(-ENOMEM, "out of memory");
		l->frame = prof_frame(x->p, &fd);
		l->pc = pc;
		l->line = ln->line > 0 && ln->line <= UINT32_MAX ? (uint32_t)ln->line : 0;
		if (l->frame == PROF_NONE)
			return -EINVAL;
	}
	return 0;
}

static int read_sample(struct pprof *x, struct cur c)
{
	struct pb_field f;
	size_t nm = prof_nmetrics(x->p), nv = 0;
	if (!vec_reserve(&x->values, nm ? nm : 1))
		return err_set(-ENOMEM, "out of memory");
	int64_t *w = x->values.v;
	int rc;
	x->stack.n = 0;
	memset(w, 0, nm * sizeof(*w));
	while ((rc = pb_next(&c, &f)) > 0) {
		x->tmp.n = 0;
		if (f.num != 1 && f.num != 2)
			continue;
		if ((rc = pb_each_varint(&f, push_u64, &x->tmp)) < 0)
			return rc;
		for (size_t i = 0; i < x->tmp.n; i++) {
			if (f.num == 1 && (rc = add_location(x, x->tmp.v[i])) < 0)
				return rc;
			if (f.num == 2 && nv >= nm)
				return err_set(-EINVAL, "at 0x%zx: sample has more values than the %zu sample types",
					       f.off, nm);
			if (f.num == 2)
				w[nv++] = (int64_t)x->tmp.v[i];
		}
	}
	if (rc < 0)
		return rc;
	if (nv != nm)
		return err_set(-EINVAL, "sample has %zu values for %zu sample types", nv, nm);
	return prof_add_stack(x->p, x->stack.v, x->stack.n, w);
}

static int read_comments(struct pprof *x)
{
	static const char src[] = "tally.source=", ctr[] = "tally.counter.";
	for (size_t i = 0; i < x->comments.n; i++) {
		const char *c = str(x, x->comments.v[i], "comment");
		if (!c)
			return -EINVAL;
		const char *eq = strrchr(c, '=');
		int rc = 0;
		if (!strncmp(c, src, sizeof(src) - 1))
			rc = prof_set_source(x->p, c + sizeof(src) - 1);
		else if (!strncmp(c, ctr, sizeof(ctr) - 1) && eq) {
			char name[256];
			snprintf(name, sizeof(name), "%.*s", (int)(eq - c - (sizeof(ctr) - 1)),
				 c + sizeof(ctr) - 1);
			rc = prof_set_counter(x->p, name, strtoll(eq + 1, NULL, 10));
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int build(struct pprof *x)
{
	int rc = index_tables(x);
	if (rc)
		return rc;
	if (!x->sample_types.n)
		return err_set(-EINVAL, "no sample types");
	for (size_t i = 0; i < x->sample_types.n; i += 2) {
		const char *t = str(x, x->sample_types.v[i], "sample type");
		const char *u = t ? str(x, x->sample_types.v[i + 1], "sample unit") : NULL;
		if (!u)
			return -EINVAL;
		if ((rc = prof_add_metric(x->p, t, u)) != (int)(i / 2))
			return rc < 0 ? rc : err_set(-EINVAL, "sample type %s/%s appears twice", t, u);
	}
	/* profile.proto: without default_sample_type, the last sample type is the default. */
	int def = (int)(x->sample_types.n / 2 - 1);
	for (size_t i = 0; x->default_type && i < x->sample_types.n; i += 2)
		if ((int64_t)x->sample_types.v[i] == x->default_type)
			def = (int)(i / 2);
	prof_set_default_metric(x->p, def);
	if ((rc = read_notes(x)))
		return rc;
	for (size_t i = 0; i < x->samples.n; i++)
		if ((rc = read_sample(x, x->samples.v[i])) < 0)
			return err_prefix(rc, "sample %zu", i);
	const char *pt = str(x, x->period_type[0], "period type");
	const char *pu = pt ? str(x, x->period_type[1], "period unit") : NULL;
	if (!pu)
		return -EINVAL;
	rc = prof_set_period(x->p, x->period, pt, pu);
	prof_set_times(x->p, x->time_ns, x->duration_ns);
	if (!rc)
		rc = prof_set_source(x->p, x->name);
	return rc ? rc : read_comments(x);
}

/* Inflates gzip or zlib data into a malloc'd buffer. */
static int gunzip(const uint8_t *in, size_t size, uint8_t **out, size_t *out_size)
{
	z_stream z = { 0 };
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return err_set(-ENOMEM, "cannot start gzip decompression");
	size_t cap = size < PPROF_MAX_SIZE / 4 ? size * 4 + 4096 : PPROF_MAX_SIZE, n = 0;
	uint8_t *buf = malloc(cap);
	int zr = Z_OK;
	z.next_in = (uint8_t *)in;
	z.avail_in = size > UINT32_MAX ? UINT32_MAX : (uInt)size;
	while (buf && zr == Z_OK) {
		if (n == cap) {
			size_t grown = cap * 2 < PPROF_MAX_SIZE ? cap * 2 : PPROF_MAX_SIZE;
			uint8_t *nb = cap >= PPROF_MAX_SIZE ? NULL : realloc(buf, grown);
			if (!nb) {
				free(buf);
				inflateEnd(&z);
				return err_set(-EFBIG, "decompressed profile is larger than %llu bytes or memory",
					       PPROF_MAX_SIZE);
			}
			buf = nb;
			cap = grown;
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
		zr = inflate(&z, Z_NO_FLUSH);
		n = (size_t)(z.next_out - buf);
	}
	inflateEnd(&z);
	if (!buf)
		return err_set(-ENOMEM, "out of memory decompressing");
	if (zr != Z_STREAM_END) {
		free(buf);
		return err_set(-EINVAL, "gzip data is %s", zr == Z_BUF_ERROR ? "truncated" : "corrupt");
	}
	*out = buf;
	*out_size = n;
	return 0;
}

bool prof_sniff_pprof(const void *data, size_t size)
{
	const uint8_t *b = data;
	if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return true;
	/* Plain protobuf: a Profile starts with its first sample_type, a small message of
	 * varint fields 1 and 2. */
	struct cur c = cur_make(data, size, false);
	struct pb_field f, g;
	if (pb_next(&c, &f) <= 0 || f.num != 1 || f.wire != PB_LEN)
		return false;
	int rc;
	while ((rc = pb_next(&f.sub, &g)) > 0)
		if (g.wire != PB_VARINT || g.num > 2)
			return false;
	err_clear();
	return rc == 0;
}

static void pprof_free(struct pprof *x)
{
	vec_free(&x->strs);
	vec_free(&x->mappings);
	vec_free(&x->functions);
	vec_free(&x->locations);
	vec_free(&x->lines);
	vec_free(&x->samples);
	vec_free(&x->sample_types);
	vec_free(&x->comments);
	for (size_t i = 0; i < x->elfs.n; i++)
		free(x->elfs.v[i].segs);
	vec_free(&x->elfs);
	vec_free(&x->notes);
	vec_free(&x->tmp);
	vec_free(&x->values);
	vec_free(&x->stack);
	vec_free(&x->loc_frames);
}

int prof_read_pprof_files(const char *name, const void *data, size_t size,
			  prof_pprof_segments_fn segments, struct prof **out)
{
	const uint8_t *b = data;
	uint8_t *plain = NULL;
	int rc = 0;
	if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		rc = gunzip(data, size, &plain, &size);
		data = plain;
	}
	struct pprof x = { .name = name, .segments = segments };
	if (!rc)
		rc = prof_new(&x.p);
	if (!rc)
		rc = read_top(&x, cur_make(data, size, false));
	if (!rc)
		rc = build(&x);
	if (!rc && prof_is_empty(x.p))
		rc = err_set(-EINVAL, "no samples (empty profile)");
	if (!rc)
		rc = prof_finish(x.p);
	pprof_free(&x);
	free(plain);
	if (rc) {
		prof_free(x.p);
		return err_prefix(rc, "%s", name);
	}
	*out = x.p;
	return 0;
}

int prof_read_pprof(const char *name, const void *data, size_t size, struct prof **out)
{
	return prof_read_pprof_files(name, data, size, NULL, out);
}
