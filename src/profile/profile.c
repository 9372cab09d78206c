/*
 * The profile's tables: strings, metrics, modules, frames, profile-wide facts and the life
 * cycle. Interning goes through idhash: the table holds ids, the keys stay in the VECs.
 */
#include "profile/prof_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"

static int oom(void)
{
	return err_set(-ENOMEM, "out of memory building the profile");
}

/* Weights are held per calling context and metric: 2^27 of them (1 GiB) is far beyond
 * any real profile, and stops an input whose few bytes declare many metrics and deep
 * stacks from multiplying into all of memory. */
#define PROF_MAX_WEIGHTS ((size_t)1 << 27)

int prof_grow_i64(struct prof_i64v *v, size_t n)
{
	if (n > PROF_MAX_WEIGHTS)
		return err_set(-E2BIG, "profile too large: more than 2^27 weights (calling "
				       "contexts times metrics)");
	if (n <= v->cap) {
		if (n > v->n)
			memset(v->v + v->n, 0, (n - v->n) * sizeof(int64_t));
		v->n = n > v->n ? n : v->n;
		return 0;
	}
	if (!vec_reserve(v, n - v->n)) /* prof_i64v has a VEC's v, n and cap */
		return oom();
	memset(v->v + v->n, 0, (n - v->n) * sizeof(int64_t));
	v->n = n;
	return 0;
}

/* ---- strings ---- */

struct str_key {
	const struct prof *p;
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;
	const struct prof_strent *e = &k->p->strs.v[id];
	return e->len == k->len && !memcmp(e->s, k->s, k->len);
}

uint32_t prof_intern(struct prof *p, const char *s, size_t len)
{
	if (!len)
		return 0;
	if (len > UINT32_MAX / 2 || memchr(s, 0, len)) {
		err_set(-EINVAL, "string of %zu bytes is too long or holds a NUL byte", len);
		return PROF_NONE;
	}
	struct str_key k = { p, s, len };
	uint32_t h = idhash_bytes(s, len);
	uint32_t id = idhash_find(&p->str_index, h, str_eq, &k);
	if (id != PROF_NONE)
		return id;
	char *copy = arena_strndup(&p->arena, s, len);
	struct prof_strent *e = copy ? vec_push(&p->strs) : NULL;
	if (!e) {
		oom();
		return PROF_NONE;
	}
	e->s = copy;
	e->len = (uint32_t)len;
	id = (uint32_t)(p->strs.n - 1);
	if (idhash_add(&p->str_index, h, id)) {
		p->strs.n--;
		oom();
		return PROF_NONE;
	}
	return id;
}

uint32_t prof_intern_cstr(struct prof *p, const char *s)
{
	return s ? prof_intern(p, s, strlen(s)) : 0;
}

const char *prof_str(const struct prof *p, uint32_t id)
{
	return id < p->strs.n ? p->strs.v[id].s : "";
}

/* ---- metrics ---- */

/* Real profiles have a handful of metrics (pprof's sample types, tally's events); the
 * cap keeps the duplicate scan below and every per-node weight row small whatever an
 * input declares. */
enum { PROF_MAX_METRICS = 256 };

int prof_add_metric(struct prof *p, const char *type, const char *unit)
{
	uint32_t t = prof_intern_cstr(p, type), u = prof_intern_cstr(p, unit);
	if (t == PROF_NONE || u == PROF_NONE)
		return -ENOMEM;
	for (size_t i = 0; i < p->metrics.n; i++)
		if (p->metrics.v[i].type == t && p->metrics.v[i].unit == u)
			return (int)i;
	if (p->metrics.n >= PROF_MAX_METRICS)
		return err_set(-E2BIG, "more than %d metrics (sample types)", PROF_MAX_METRICS);
	if (p->nodes.n > 1 || p->has_weight)
		return err_set(-EBUSY, "metric %s/%s declared after weights were added", type,
			       unit);
	struct prof_metric *m = vec_push(&p->metrics);
	if (!m)
		return oom();
	m->type = t;
	m->unit = u;
	return prof_grow_i64(&p->self, p->nodes.n * p->metrics.n) ? -ENOMEM
								   : (int)(p->metrics.n - 1);
}

size_t prof_nmetrics(const struct prof *p)
{
	return p->metrics.n;
}

const struct prof_metric *prof_metric(const struct prof *p, size_t i)
{
	return &p->metrics.v[i];
}

int prof_find_metric(const struct prof *p, const char *type, const char *unit)
{
	for (size_t i = 0; i < p->metrics.n; i++)
		if (!strcmp(prof_str(p, p->metrics.v[i].type), type) &&
		    (!unit || !strcmp(prof_str(p, p->metrics.v[i].unit), unit)))
			return (int)i;
	return -ENOENT;
}

/* ---- modules ---- */

struct mod_key {
	const struct prof *p;
	uint32_t path, build_id;
};

static bool mod_eq(const void *ctx, uint32_t id)
{
	const struct mod_key *k = ctx;
	const struct prof_module *m = &k->p->modules.v[id];
	return m->path == k->path && m->build_id == k->build_id;
}

uint32_t prof_module(struct prof *p, const char *path, const char *build_id_hex, uint64_t base)
{
	struct mod_key k = { p, prof_intern_cstr(p, path), prof_intern_cstr(p, build_id_hex) };
	if (k.path == PROF_NONE || k.build_id == PROF_NONE)
		return PROF_NONE;
	uint32_t h = idhash_mix(k.path, k.build_id);
	uint32_t id = idhash_find(&p->module_index, h, mod_eq, &k);
	if (id != PROF_NONE)
		return id;
	struct prof_module *m = vec_push(&p->modules);
	if (!m || idhash_add(&p->module_index, h, (uint32_t)(p->modules.n - 1))) {
		if (m)
			p->modules.n--;
		oom();
		return PROF_NONE;
	}
	m->path = k.path;
	m->build_id = k.build_id;
	m->base = base;
	return (uint32_t)(p->modules.n - 1);
}

size_t prof_nmodules(const struct prof *p)
{
	return p->modules.n;
}

const struct prof_module *prof_module_at(const struct prof *p, uint32_t id)
{
	return id < p->modules.n ? &p->modules.v[id] : NULL;
}

/* ---- frames ---- */

static const char *const kind_names[PROF_NKINDS] = {
	"native", "inline", "vm", "syscall", "program", "kernel", "truncated", "jit",
	"python", "ruby",
};

const char *prof_kind_name(enum prof_kind k)
{
	return (unsigned)k < PROF_NKINDS ? kind_names[k] : "?";
}

struct frame_key {
	const struct prof *p;
	const struct prof_frame *f;
};

static bool frame_eq(const void *ctx, uint32_t id)
{
	const struct frame_key *k = ctx;
	const struct prof_frame *a = &k->p->frames.v[id], *b = k->f;
	return a->kind == b->kind && a->function == b->function && a->file == b->file &&
	       a->line == b->line && a->module == b->module && a->addr == b->addr;
}

static uint32_t frame_hash(const struct prof_frame *f)
{
	return idhash_mix((uint64_t)f->kind << 32 | f->function,
			  idhash_mix((uint64_t)f->file << 32 | f->line,
				     idhash_mix(f->module, f->addr)));
}

/* What a frame is called in outputs when its function is not known. */
static uint32_t make_label(struct prof *p, const struct prof_frame *f)
{
	if (f->function)
		return f->function;
	char buf[4200];
	const struct prof_module *m = prof_module_at(p, f->module);
	if (f->kind == PROF_TRUNCATED)
		snprintf(buf, sizeof(buf), "[truncated]");
	else if (m) {
		const char *path = prof_str(p, m->path), *base = strrchr(path, '/');
		snprintf(buf, sizeof(buf), "%.4000s+0x%" PRIx64, base ? base + 1 : path, f->addr);
	} else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, f->addr);
	return prof_intern_cstr(p, buf);
}

uint32_t prof_frame(struct prof *p, const struct prof_frame_desc *d)
{
	if ((unsigned)d->kind >= PROF_NKINDS ||
	    (d->module != PROF_NONE && d->module >= p->modules.n)) {
		err_set(-EINVAL, "frame with bad kind %d or module %u", d->kind, d->module);
		return PROF_NONE;
	}
	struct prof_frame f = {
		.kind = (uint8_t)d->kind,
		.function = prof_intern_cstr(p, d->function),
		.file = prof_intern_cstr(p, d->file),
		.line = d->line,
		.module = d->module,
		.addr = d->addr,
	};
	if (f.function == PROF_NONE || f.file == PROF_NONE)
		return PROF_NONE;
	struct frame_key k = { p, &f };
	uint32_t h = frame_hash(&f);
	uint32_t id = idhash_find(&p->frame_index, h, frame_eq, &k);
	if (id != PROF_NONE)
		return id;
	f.label = make_label(p, &f);
	if (f.label == PROF_NONE)
		return PROF_NONE;
	struct prof_frame *slot = vec_push(&p->frames);
	if (!slot || idhash_add(&p->frame_index, h, (uint32_t)(p->frames.n - 1))) {
		if (slot)
			p->frames.n--;
		oom();
		return PROF_NONE;
	}
	*slot = f;
	return (uint32_t)(p->frames.n - 1);
}

size_t prof_nframes(const struct prof *p)
{
	return p->frames.n;
}

const struct prof_frame *prof_frame_at(const struct prof *p, uint32_t id)
{
	return &p->frames.v[id];
}

const char *prof_frame_label(const struct prof *p, uint32_t id)
{
	return prof_str(p, p->frames.v[id].label);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int prof_frame_cmp(const struct prof *pa, uint32_t a, const struct prof *pb, uint32_t b)
{
	if (pa == pb && a == b)
		return 0;
	const struct prof_frame *fa = &pa->frames.v[a], *fb = &pb->frames.v[b];
	int c = strcmp(prof_str(pa, fa->label), prof_str(pb, fb->label));
	if (c)
		return c;
	const struct prof_module *ma = prof_module_at(pa, fa->module),
				 *mb = prof_module_at(pb, fb->module);
	if (!ma != !mb)
		return ma ? 1 : -1;
	if (ma && (c = strcmp(prof_str(pa, ma->path), prof_str(pb, mb->path))))
		return c;
	if ((c = strcmp(prof_str(pa, fa->file), prof_str(pb, fb->file))))
		return c;
	if ((c = cmp_u64(fa->kind, fb->kind)) || (c = cmp_u64(fa->line, fb->line)))
		return c;
	if ((c = cmp_u64(fa->addr, fb->addr)))
		return c;
	if (ma && (c = strcmp(prof_str(pa, ma->build_id), prof_str(pb, mb->build_id))))
		return c;
	/* Only a function name equal to another frame's synthesized label is left. */
	return cmp_u64(fa->function != 0, fb->function != 0);
}

/* ---- profile-wide facts ---- */

const struct prof_info *prof_info(const struct prof *p)
{
	return &p->info;
}

int prof_set_source(struct prof *p, const char *source)
{
	uint32_t id = prof_intern_cstr(p, source);
	if (id == PROF_NONE)
		return -ENOMEM;
	p->source = id;
	p->info.source = id ? prof_str(p, id) : NULL;
	return 0;
}

void prof_set_times(struct prof *p, int64_t time_ns, int64_t duration_ns)
{
	p->info.time_ns = time_ns;
	p->info.duration_ns = duration_ns;
}

int prof_set_period(struct prof *p, int64_t period, const char *type, const char *unit)
{
	uint32_t t = prof_intern_cstr(p, type), u = prof_intern_cstr(p, unit);
	if (t == PROF_NONE || u == PROF_NONE)
		return -ENOMEM;
	p->info.period = period;
	p->info.period_type.type = t;
	p->info.period_type.unit = u;
	return 0;
}

int prof_set_default_metric(struct prof *p, int metric)
{
	if (metric < 0 || (size_t)metric >= p->metrics.n)
		return err_set(-EINVAL, "no metric %d", metric);
	p->info.default_metric = metric;
	return 0;
}

int prof_set_counter(struct prof *p, const char *name, int64_t value)
{
	uint32_t id = prof_intern_cstr(p, name);
	if (id == PROF_NONE)
		return -ENOMEM;
	for (size_t i = 0; i < p->counters.n; i++)
		if (p->counters.v[i].name == id) {
			p->counters.v[i].value = value;
			return 0;
		}
	struct prof_counter *c = vec_push(&p->counters);
	if (!c)
		return oom();
	c->name = id;
	c->value = value;
	return 0;
}

size_t prof_ncounters(const struct prof *p)
{
	return p->counters.n;
}

void prof_counter_at(const struct prof *p, size_t i, const char **name, int64_t *value)
{
	*name = prof_str(p, p->counters.v[i].name);
	*value = p->counters.v[i].value;
}

/* ---- life cycle ---- */

int prof_new(struct prof **out)
{
	struct prof *p = calloc(1, sizeof(*p));
	struct prof_strent *empty = p ? vec_push(&p->strs) : NULL;
	struct prof_node *root = empty ? vec_push(&p->nodes) : NULL;
	if (!root) {
		prof_free(p);
		return oom();
	}
	empty->s = "";
	root->parent = root->frame = root->first_child = root->next_sibling = PROF_NONE;
	root->first_pc = PROF_NONE;
	p->finished = true;
	*out = p;
	return 0;
}

void prof_free(struct prof *p)
{
	if (!p)
		return;
	arena_free(&p->arena);
	vec_free(&p->strs);
	idhash_free(&p->str_index);
	vec_free(&p->metrics);
	vec_free(&p->modules);
	idhash_free(&p->module_index);
	vec_free(&p->frames);
	idhash_free(&p->frame_index);
	vec_free(&p->nodes);
	idhash_free(&p->node_index);
	idhash_free(&p->stack_index);
	vec_free(&p->stack_store);
	vec_free(&p->self);
	vec_free(&p->pcws);
	idhash_free(&p->pcw_index);
	vec_free(&p->pcw_node);
	vec_free(&p->pcw_w);
	vec_free(&p->abs_sum);
	vec_free(&p->counters);
	vec_free(&p->threads);
	idhash_free(&p->thread_index);
	vec_free(&p->samples);
	vec_free(&p->sample_w);
	free(p);
}
