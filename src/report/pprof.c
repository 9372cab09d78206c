/*
 * pprof export: profile.proto, gzipped. One Sample per (node, pc) of the calling-context
 * tree; its locations run from that pc outwards, each node above contributing the call
 * site its child recorded. A run of inline frames and the frame they were inlined into
 * share one Location whose Line entries are innermost first, as pprof expects. Tables are
 * numbered in order of first use during the canonical walk, so the bytes depend only on the
 * profile's content. gzip is written with no mtime and no file name, for the same reason.
 *
 * Mappings are what /proc/PID/maps would have shown: one per PT_LOAD segment of a module's
 * file that holds sampled pcs, page-aligned, so that address - memory_start + file_offset
 * is a file offset as profile.proto means it (go tool pprof finds instructions by it). A
 * comment per mapping (pprof_addr.h) keeps the vaddr for tally's reader, which may not
 * have the file. Without the file, a module gets one mapping at its base, file offset 0.
 */
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/err.h"
#include "base/vec.h"
#include "profile/idhash.h"
#include "profile/pb.h"
#include "profile/profile.h"
#include "report/pprof_segments.h"

struct wstr {
	const char *s;
	size_t len;
};

struct enc {
	const struct prof *p;
	VEC(struct wstr) strs;
	struct idhash str_index;
	uint32_t *func_of;    /* by frame: pprof function id, 0 when not yet written */
	uint32_t nfuncs;
	/* By module, plus one slot (nmodules) for kernel frames that have no module: */
	struct wmod *mods;
	size_t nmods;
	uint32_t nranked;
	VEC(struct wmap) maps; /* in order of first use; key.v[0] is an index + 1 */
	uint32_t *map_order;   /* indexes into maps, in Mapping id order */
	VEC(uint64_t) loc_keys; /* concatenated location keys */
	VEC(size_t) loc_key_at; /* start of each location's key in loc_keys; n + 1 entries */
	struct idhash loc_index;
	VEC(uint64_t) key;	/* the key being built */
	VEC(uint64_t) sample_locs;
	struct pb_buf samples, locations, functions, sub, sub2;
	VEC(char *) owned; /* strings made by the encoder */
	int rc;
};

/* A module slot as the mappings see it. */
struct wmod {
	uint32_t rank;	/* order of first use in the walk, 0 when not seen yet */
	uint8_t flags;	/* MF_* */
	bool looked;	/* segs read (or found missing) */
	struct pprof_seg *segs;
	size_t nsegs;
	uint32_t *map_of; /* by segment, then one for "none": maps index + 1, 0 unused */
};

/* One Mapping: a slot and a segment of its file (or none). */
struct wmap {
	uint32_t slot, seg; /* seg PROF_NONE: no segment */
	uint64_t start, limit, offset, vaddr;
	uint32_t id;	    /* the Mapping id, given once all are known */
};

struct str_key {
	const struct enc *e;
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;
	const struct wstr *w = &k->e->strs.v[id];
	return w->len == k->len && !memcmp(w->s, k->s, k->len);
}

/* The string's index in string_table, adding it on first use. */
static uint64_t str_id(struct enc *e, const char *s)
{
	struct str_key k = { e, s, strlen(s) };
	uint32_t h = idhash_bytes(s, k.len);
	uint32_t id = idhash_find(&e->str_index, h, str_eq, &k);
	if (id != UINT32_MAX)
		return id;
	struct wstr *w = vec_push(&e->strs);
	if (!w || idhash_add(&e->str_index, h, (uint32_t)(e->strs.n - 1))) {
		e->rc = -ENOMEM;
		return 0;
	}
	w->s = s;
	w->len = k.len;
	return e->strs.n - 1;
}


enum { MF_FUNCTIONS = 1, MF_FILENAMES = 2, MF_LINES = 4, MF_INLINE = 8 };

/* A string made here (not the profile's), kept until the encoder is done. */
static uint64_t own_str_id(struct enc *e, const char *s)
{
	char *copy = strdup(s);
	char **slot = copy ? vec_push(&e->owned) : NULL;
	if (!slot) {
		free(copy);
		e->rc = -ENOMEM;
		return 0;
	}
	*slot = copy;
	return str_id(e, copy);
}

static uint64_t function_id(struct enc *e, uint32_t frame)
{
	if (e->func_of[frame])
		return e->func_of[frame];
	const struct prof_frame *f = prof_frame_at(e->p, frame);
	uint32_t id = ++e->nfuncs;
	uint64_t name = str_id(e, prof_frame_label(e->p, frame)), sys = name;
	/* pprof has no frame kinds beyond inline (Line order) and kernel (the mapping): the
	 * others ride in system_name as "NAME [KIND]", which pprof shows only in -raw (a JIT
	 * frame's mapping also names the file that named it). */
	if (f->kind == PROF_VM || f->kind == PROF_SYSCALL || f->kind == PROF_PROGRAM ||
	    f->kind == PROF_JIT || f->kind == PROF_PYTHON || f->kind == PROF_RUBY) {
		char buf[4200];
		snprintf(buf, sizeof(buf), "%.4000s [%s]", prof_frame_label(e->p, frame),
			 prof_kind_name(f->kind));
		sys = own_str_id(e, buf);
	}
	e->sub.n = 0;
	pb_uint(&e->sub, 1, id);
	pb_uint(&e->sub, 2, name);
	pb_uint(&e->sub, 3, sys);
	pb_uint(&e->sub, 4, str_id(e, prof_str(e->p, f->file)));
	pb_uint(&e->sub, 5, f->line);
	pb_sub(&e->functions, 5, &e->sub);
	return e->func_of[frame] = id;
}

/* The module slot of a frame: its module, the kernel slot, or PROF_NONE. */
static uint32_t slot_of(const struct enc *e, uint32_t frame)
{
	const struct prof_frame *f = prof_frame_at(e->p, frame);
	if (f->kind == PROF_PYTHON || f->kind == PROF_RUBY)
		return PROF_NONE; /* no machine code: a Location of its function and line alone */
	if (f->module != PROF_NONE)
		return f->module;
	return f->kind == PROF_KERNEL ? (uint32_t)prof_nmodules(e->p) : PROF_NONE;
}

static uint64_t base_of(const struct enc *e, uint32_t slot)
{
	const struct prof_module *m = prof_module_at(e->p, slot);
	return m ? m->base : 0;
}

/* The loadable segments of the slot's file, read on first use. */
static struct wmod *mod_of(struct enc *e, uint32_t slot)
{
	struct wmod *w = &e->mods[slot];
	if (w->looked)
		return w;
	w->looked = true;
	const struct prof_module *m = prof_module_at(e->p, slot);
	int rc = m ? rep_pprof_segments(prof_str(e->p, m->path), prof_str(e->p, m->build_id),
					&w->segs, &w->nsegs)
		   : -ENOENT;
	if (rc && rc != -ENOENT)
		e->rc = rc;
	if (!(w->map_of = calloc(w->nsegs + 1, sizeof(*w->map_of))))
		e->rc = -ENOMEM;
	return w;
}

/* The mapping (index + 1 into e->maps) of pc in slot; 0 on failure (e->rc set). */
static uint64_t mapping_of(struct enc *e, uint32_t slot, uint64_t pc)
{
	struct wmod *w = mod_of(e, slot);
	if (e->rc)
		return 0;
	size_t seg = 0;
	while (seg < w->nsegs &&
	       !(pc >= w->segs[seg].vaddr && pc - w->segs[seg].vaddr < w->segs[seg].memsz))
		seg++;
	if (w->map_of[seg])
		return w->map_of[seg];
	struct wmap *m = vec_push(&e->maps);
	if (!m)
		return e->rc = -ENOMEM, 0;
	uint64_t base = base_of(e, slot);
	m->slot = slot;
	m->seg = seg < w->nsegs ? (uint32_t)seg : PROF_NONE;
	m->start = base;
	if (seg < w->nsegs) {
		/* As the loader maps it: whole pages, when the segment's vaddr and offset agree
		 * modulo the page (4 KiB, as pprof assumes; larger p_align keeps that true). */
		const struct pprof_seg *s = &w->segs[seg];
		uint64_t page = (s->vaddr - s->offset) & 0xfff ? 1 : 0x1000;
		m->vaddr = s->vaddr & ~(page - 1);
		m->offset = s->offset & ~(page - 1);
		m->start = base + m->vaddr;
		m->limit = base + ((s->vaddr + s->memsz + page - 1) & ~(page - 1));
	}
	return w->map_of[seg] = (uint32_t)e->maps.n;
}

/* Orders modules by first use in the walk: pprof takes the first mapping for the main
 * binary. */
static void rank_module(struct enc *e, uint32_t slot)
{
	if (!e->mods[slot].rank)
		e->mods[slot].rank = ++e->nranked;
}

static bool key_eq(const void *ctx, uint32_t id)
{
	const struct enc *e = ctx;
	size_t a = e->loc_key_at.v[id], n = e->loc_key_at.v[id + 1] - a;
	return n == e->key.n && !memcmp(e->loc_keys.v + a, e->key.v, n * sizeof(uint64_t));
}

static int push64(struct enc *e, void *vec, uint64_t v)
{
	VEC(uint64_t) *t = vec;
	uint64_t *s = vec_push(t);
	if (!s)
		return e->rc = -ENOMEM;
	*s = v;
	return 0;
}

/* The Location for the key in e->key (mapping, address, then function/line pairs). */
static uint64_t location_id(struct enc *e)
{
	uint32_t h = idhash_bytes(e->key.v, e->key.n * sizeof(uint64_t));
	uint32_t id = idhash_find(&e->loc_index, h, key_eq, e);
	if (id != UINT32_MAX)
		return id + 1;
	id = (uint32_t)(e->loc_key_at.n - 1);
	for (size_t i = 0; i < e->key.n; i++)
		push64(e, &e->loc_keys, e->key.v[i]);
	size_t *end = vec_push(&e->loc_key_at);
	if (!end || e->rc || idhash_add(&e->loc_index, h, id))
		return e->rc = -ENOMEM, 0;
	*end = e->loc_keys.n;
	return id + 1;
}

/* Every Location, once the Mapping ids are known. */
static void encode_locations(struct enc *e)
{
	for (size_t id = 0; id + 1 < e->loc_key_at.n; id++) {
		const uint64_t *k = e->loc_keys.v + e->loc_key_at.v[id];
		size_t n = e->loc_key_at.v[id + 1] - e->loc_key_at.v[id];
		e->sub.n = 0;
		pb_uint(&e->sub, 1, id + 1);
		pb_uint(&e->sub, 2, k[0] ? e->maps.v[k[0] - 1].id : 0);
		pb_uint(&e->sub, 3, k[1]);
		for (size_t i = 2; i < n; i += 2) {
			e->sub2.n = 0;
			pb_uint(&e->sub2, 1, k[i]);
			pb_uint(&e->sub2, 2, k[i + 1]);
			pb_sub(&e->sub, 4, &e->sub2);
		}
		pb_sub(&e->locations, 4, &e->sub);
	}
}

/* Location ids of the stack ending at node, at pc/line, into e->sample_locs. */
static void stack_locations(struct enc *e, uint32_t node, uint64_t pc, uint32_t line)
{
	e->sample_locs.n = 0;
	while (node != PROF_ROOT && !e->rc) {
		e->key.n = 0;
		push64(e, &e->key, 0); /* mapping id, filled below */
		push64(e, &e->key, 0); /* address */
		uint32_t slot = PROF_NONE;
		uint64_t call_pc;
		bool inlined;
		do { /* inline frames share the location of the frame they were inlined into */
			const struct prof_node *n = prof_node_at(e->p, node);
			const struct prof_frame *f = prof_frame_at(e->p, n->frame);
			inlined = f->kind == PROF_INLINE && n->parent != PROF_ROOT;
			/* A frame whose function is unknown is an address-only Location, which
			 * pprof can symbolize later; it becomes such a frame again on reading. */
			bool unnamed = !f->function && f->kind != PROF_TRUNCATED && !inlined &&
				       e->key.n == 2 && f->addr == pc;
			if (!unnamed) {
				push64(e, &e->key, function_id(e, n->frame));
				push64(e, &e->key, line);
			}
			if (slot == PROF_NONE)
				slot = slot_of(e, n->frame);
			if (slot != PROF_NONE)
				e->mods[slot].flags |= (f->function ? MF_FUNCTIONS : 0) |
						   (f->file ? MF_FILENAMES : 0) | (line ? MF_LINES : 0) |
						   (f->kind == PROF_INLINE ? MF_INLINE : 0);
			line = n->call_line;
			call_pc = n->call_pc;
			node = n->parent;
		} while (inlined);
		e->key.v[1] = pc;
		if (slot != PROF_NONE && (e->key.v[0] = mapping_of(e, slot, pc))) {
			struct wmap *m = &e->maps.v[e->key.v[0] - 1];
			e->key.v[1] = base_of(e, slot) + pc;
			if (m->seg == PROF_NONE && e->key.v[1] + 1 > m->limit)
				m->limit = e->key.v[1] + 1;
		}
		push64(e, &e->sample_locs, location_id(e));
		pc = call_pc;
	}
}

static void packed(struct enc *e, struct pb_buf *b, unsigned field, const uint64_t *v, size_t n)
{
	e->sub2.n = 0;
	for (size_t i = 0; i < n; i++)
		pb_varint(&e->sub2, v[i]);
	pb_sub(b, field, &e->sub2);
}

/* One Sample: the stack ending at node, at pc entry pcw, with weights w. */
static void sample_at(struct enc *e, uint32_t node, uint32_t pcw, const int64_t *w)
{
	stack_locations(e, node, prof_pcw_at(e->p, pcw)->pc, prof_pcw_at(e->p, pcw)->line);
	e->sub.n = 0;
	packed(e, &e->sub, 1, e->sample_locs.v, e->sample_locs.n);
	/* pprof's values are the varints of their two's complement: the weights read as
	 * uint64_t, which C11 6.5p7 allows for an int64_t object */
	packed(e, &e->sub, 2, (const uint64_t *)w, prof_nmetrics(e->p));
}

static int sample_node(const struct prof *p, uint32_t node, void *ctx)
{
	struct enc *e = ctx;
	size_t nm = prof_nmetrics(p);
	for (uint32_t i = prof_node_at(p, node)->first_pc; i != PROF_NONE && !e->rc;
	     i = prof_pcw_at(p, i)->next) {
		const int64_t *w = prof_pcw_weights(p, i);
		bool any = false;
		for (size_t m = 0; m < nm; m++)
			any |= w[m] != 0;
		if (!any)
			continue;
		sample_at(e, node, i, w);
		pb_sub(&e->samples, 2, &e->sub);
	}
	return e->rc;
}

/* A Label of the Sample in e->sub: a string (str) or a number. */
static void label(struct enc *e, const char *key, const char *str, uint64_t num)
{
	e->sub2.n = 0;
	pb_uint(&e->sub2, 1, str_id(e, key));
	if (str)
		pb_uint(&e->sub2, 2, str_id(e, str));
	else
		pb_uint(&e->sub2, 3, num);
	pb_sub(&e->sub, 3, &e->sub2);
}

/* A Sample per logged sample, in the log's order, labelled with its thread: "thread" its
 * name, "pid" and "tid" its ids, and "gil" (held, not held) where the GIL state is known
 * (go tool pprof -tags lists them, -tagfocus selects). */
static int sample_log(struct enc *e)
{
	const struct prof *p = e->p;
	for (size_t i = 0; i < prof_nsamples(p) && !e->rc; i++) {
		const struct prof_sample *s = prof_sample_at(p, i);
		const struct prof_thread *t = prof_thread_at(p, s->thread);
		sample_at(e, s->node, s->pcw, prof_sample_weights(p, i));
		label(e, "thread", prof_str(p, t->name), 0);
		label(e, "pid", NULL, t->pid);
		label(e, "tid", NULL, t->tid);
		const char *gil = prof_gil_name((enum prof_gil)s->gil);
		if (gil)
			label(e, "gil", gil, 0);
		pb_sub(&e->samples, 2, &e->sub);
	}
	return e->rc;
}

static void value_type(struct enc *e, struct pb_buf *out, unsigned field,
		       const struct prof_metric *m)
{
	e->sub.n = 0;
	pb_uint(&e->sub, 1, str_id(e, prof_str(e->p, m->type)));
	pb_uint(&e->sub, 2, str_id(e, prof_str(e->p, m->unit)));
	pb_sub(out, field, &e->sub);
}

/* Mapping order: modules by rank (the kernel's slot, never ranked, last), segments in file
 * order, the segment-less mapping last. */
static int cmp_map(const void *a, const void *b, void *ctx)
{
	const struct enc *e = ctx;
	const struct wmap *x = &e->maps.v[*(const uint32_t *)a];
	const struct wmap *y = &e->maps.v[*(const uint32_t *)b];
	uint32_t rx = e->mods[x->slot].rank - 1, ry = e->mods[y->slot].rank - 1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->seg < y->seg ? -1 : x->seg > y->seg;
}

/* Gives the mappings their ids; e->map_order lists them in id order. */
static void number_mappings(struct enc *e)
{
	if (!e->maps.n)
		return;
	if (!(e->map_order = malloc(e->maps.n * sizeof(*e->map_order)))) {
		e->rc = -ENOMEM;
		return;
	}
	for (uint32_t i = 0; i < e->maps.n; i++)
		e->map_order[i] = i;
	qsort_r(e->map_order, e->maps.n, sizeof(*e->map_order), cmp_map, e);
	for (uint32_t i = 0; i < e->maps.n; i++)
		e->maps.v[e->map_order[i]].id = i + 1;
}

static void mappings(struct enc *e, struct pb_buf *out)
{
	for (size_t i = 0; i < e->maps.n; i++) {
		const struct wmap *w = &e->maps.v[e->map_order[i]];
		const struct prof_module *m = prof_module_at(e->p, w->slot);
		uint8_t fl = e->mods[w->slot].flags;
		e->sub.n = 0;
		pb_uint(&e->sub, 1, w->id);
		pb_uint(&e->sub, 2, w->start);
		pb_uint(&e->sub, 3, w->limit);
		pb_uint(&e->sub, 4, w->offset);
		pb_uint(&e->sub, 5, str_id(e, m ? prof_str(e->p, m->path) : "[kernel]"));
		pb_uint(&e->sub, 6, m ? str_id(e, prof_str(e->p, m->build_id)) : 0);
		pb_uint(&e->sub, 7, !!(fl & MF_FUNCTIONS));
		pb_uint(&e->sub, 8, !!(fl & MF_FILENAMES));
		pb_uint(&e->sub, 9, !!(fl & MF_LINES));
		pb_uint(&e->sub, 10, !!(fl & MF_INLINE));
		pb_sub(out, 3, &e->sub);
	}
}

/* Profile-wide facts as comments, which pprof shows and our reader turns back. */
static void comments(struct enc *e, struct pb_buf *out)
{
	const struct prof_info *info = prof_info(e->p);
	char buf[4200];
	e->sub2.n = 0;
	if (info->source) {
		snprintf(buf, sizeof(buf), "tally.source=%.4000s", info->source);
		pb_varint(&e->sub2, own_str_id(e, buf));
	}
	for (size_t i = 0; i < prof_ncounters(e->p); i++) {
		const char *name;
		int64_t v;
		prof_counter_at(e->p, i, &name, &v);
		snprintf(buf, sizeof(buf), "tally.counter.%.200s=%" PRId64, name, v);
		pb_varint(&e->sub2, own_str_id(e, buf));
	}
	for (size_t i = 0; i < e->maps.n; i++) {
		const struct wmap *w = &e->maps.v[e->map_order[i]];
		const struct prof_module *m = prof_module_at(e->p, w->slot);
		const char *path = m ? prof_str(e->p, m->path) : "[";
		/* Pseudo-files ([kernel], [vdso]) have no file to disagree with; a name too long
		 * to repeat whole is left to the reader's other means. */
		int n = path[0] == '[' ? -1
				       : snprintf(buf, sizeof(buf), PPROF_MAPPING_COMMENT "0x%" PRIx64
						  ",0x%" PRIx64 ",0x%" PRIx64 ",%s", w->start,
						  w->offset, w->vaddr, path);
		if (n > 0 && (size_t)n < sizeof(buf))
			pb_varint(&e->sub2, own_str_id(e, buf));
	}
	if (e->sub2.n)
		pb_sub(out, 13, &e->sub2);
}

static int number_modules(const struct prof *p, uint32_t node, void *ctx)
{
	struct enc *e = ctx;
	if (node != PROF_ROOT) {
		uint32_t slot = slot_of(e, prof_node_at(p, node)->frame);
		if (slot != PROF_NONE && slot != prof_nmodules(p))
			rank_module(e, slot);
	}
	return e->rc;
}

static int encode(struct enc *e, bool threads, struct pb_buf *out)
{
	const struct prof *p = e->p;
	const struct prof_info *info = prof_info(p);
	str_id(e, "");
	int rc = prof_walk(p, number_modules, NULL, e);
	if (rc)
		return rc;
	for (size_t m = 0; m < prof_nmetrics(p); m++)
		value_type(e, out, 1, prof_metric(p, m));
	rc = threads ? sample_log(e) : prof_walk(p, sample_node, NULL, e);
	if (rc)
		return rc;
	number_mappings(e);
	encode_locations(e);
	mappings(e, out);
	pb_raw(out, e->samples.v, e->samples.n);
	pb_raw(out, e->locations.v, e->locations.n);
	pb_raw(out, e->functions.v, e->functions.n);
	if (info->period_type.type || info->period_type.unit) {
		struct pb_buf pt = { 0 };
		pb_uint(&pt, 1, str_id(e, prof_str(p, info->period_type.type)));
		pb_uint(&pt, 2, str_id(e, prof_str(p, info->period_type.unit)));
		pb_sub(out, 11, &pt);
		pb_free(&pt);
	}
	comments(e, out);
	uint64_t def = prof_nmetrics(p) ? str_id(e, prof_str(p, prof_metric(p, (size_t)info->default_metric)->type)) : 0;
	/* The string table last: everything above has added to it. */
	for (size_t i = 0; i < e->strs.n; i++)
		pb_bytes(out, 6, e->strs.v[i].s, e->strs.v[i].len);
	pb_uint(out, 9, (uint64_t)info->time_ns);
	pb_uint(out, 10, (uint64_t)info->duration_ns);
	pb_uint(out, 12, (uint64_t)info->period);
	pb_uint(out, 14, def);
	if (e->rc)
		return e->rc;
	return out->oom || e->samples.oom || e->locations.oom || e->functions.oom
		       ? err_set(-ENOMEM, "out of memory writing pprof")
		       : 0;
}

static void enc_free(struct enc *e)
{
	vec_free(&e->strs);
	idhash_free(&e->str_index);
	free(e->func_of);
	for (size_t i = 0; e->mods && i < e->nmods; i++) {
		free(e->mods[i].segs);
		free(e->mods[i].map_of);
	}
	free(e->mods);
	vec_free(&e->maps);
	free(e->map_order);
	vec_free(&e->loc_keys);
	vec_free(&e->loc_key_at);
	idhash_free(&e->loc_index);
	vec_free(&e->key);
	vec_free(&e->sample_locs);
	pb_free(&e->samples);
	pb_free(&e->locations);
	pb_free(&e->functions);
	pb_free(&e->sub);
	pb_free(&e->sub2);
	for (size_t i = 0; i < e->owned.n; i++)
		free(e->owned.v[i]);
	vec_free(&e->owned);
}

static int encode_pprof(const struct prof *p, bool threads, uint8_t **buf, size_t *len)
{
	size_t nf = prof_nframes(p) + 1, nmod = prof_nmodules(p) + 1;
	struct enc e = { .p = p };
	struct pb_buf out = { 0 };
	e.func_of = calloc(nf, sizeof(*e.func_of));
	e.mods = calloc(nmod, sizeof(*e.mods));
	e.nmods = nmod;
	size_t *start = vec_push(&e.loc_key_at);
	int rc = e.func_of && e.mods && start
			 ? encode(&e, threads, &out)
			 : err_set(-ENOMEM, "out of memory writing pprof");
	enc_free(&e);
	if (rc) {
		pb_free(&out);
		return rc;
	}
	*buf = out.v;
	*len = out.n;
	return 0;
}

int rep_pprof_encode(const struct prof *p, uint8_t **buf, size_t *len)
{
	return encode_pprof(p, false, buf, len);
}

/* gzip with a fixed header (zlib's default: mtime 0, no name), so output is reproducible. */
static int gzip_write(FILE *f, const uint8_t *data, size_t n)
{
	z_stream z = { 0 };
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return err_set(-ENOMEM, "cannot start gzip compression");
	uint8_t out[1 << 16];
	int zr;
	z.next_in = (uint8_t *)data;
	size_t left = n;
	do {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		z.avail_in = chunk;
		left -= chunk;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			zr = deflate(&z, left ? Z_NO_FLUSH : Z_FINISH);
			size_t have = sizeof(out) - z.avail_out;
			if (have && fwrite(out, 1, have, f) != have) {
				deflateEnd(&z);
				return err_set(-EIO, "write error");
			}
		} while (z.avail_out == 0);
	} while (left);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : err_set(-EIO, "gzip compression failed");
}

static int write_pprof(FILE *f, const struct prof *p, bool threads)
{
	uint8_t *buf;
	size_t len;
	int rc = encode_pprof(p, threads, &buf, &len);
	if (rc)
		return rc;
	rc = gzip_write(f, buf, len);
	free(buf);
	return rc;
}

int rep_pprof(FILE *f, const struct prof *p)
{
	return write_pprof(f, p, false);
}

int rep_pprof_threads(FILE *f, const struct prof *p)
{
	if (!prof_nthreads(p))
		return rep_no_threads();
	return write_pprof(f, p, true);
}
