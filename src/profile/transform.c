/*
 * New profiles from old: merge, focus, hide, fold recursion, call-site removal and the
 * diff model. All replay the source tree node by node into a destination profile: a rule
 * maps each source node (given its parent's image) to a destination node, and self weights
 * are then added, per pc entry, to the image. Images are made lazily, only for nodes that
 * carry kept weight, so filtered-out branches leave no empty nodes behind.
 */
#include "profile/prof_internal.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

struct replay;
typedef uint32_t (*replay_rule)(struct replay *r, uint32_t dparent, uint32_t n);

struct replay {
	const struct prof *src;
	struct prof *dst;
	uint32_t *fmap; /* src frame -> dst frame, PROF_NONE until needed */
	uint32_t *memo; /* src node -> dst node, PROF_NONE until needed */
	const int *mmap; /* src metric -> dst metric, -1 to drop */
	bool by_content; /* frames reduced to what a diff compares */
	replay_rule rule;
	const bool *keep; /* per src node: whether its self weight is kept; NULL: all */
	/* Only the samples of src thread thread, or (thread PROF_NONE) of GIL state gil, and
	 * nothing else: the tree is made of the log's samples alone. */
	bool from_log;
	uint32_t thread;
	uint8_t gil;
	bool drop_log;    /* the sample log is not carried over (the diff model) */
	prof_frame_pred pred;
	void *pred_ctx;
	uint32_t hidden; /* dst frame for weight whose whole stack was hidden */
	VEC(uint32_t) path; /* scratch for image() */
};

static uint32_t copy_frame(struct replay *r, uint32_t f)
{
	if (r->fmap[f] != PROF_NONE)
		return r->fmap[f];
	const struct prof *s = r->src;
	const struct prof_frame *sf = &s->frames.v[f];
	const struct prof_module *sm = prof_module_at(s, sf->module);
	struct prof_frame_desc d = {
		.kind = sf->kind,
		.function = sf->function ? prof_str(s, sf->function) : NULL,
		.file = prof_str(s, sf->file),
		.line = sf->line,
		.module = PROF_NONE,
		.addr = sf->addr,
	};
	if (sm) {
		d.module = prof_module(r->dst, prof_str(s, sm->path),
				       r->by_content ? "" : prof_str(s, sm->build_id),
				       r->by_content ? 0 : sm->base);
		if (d.module == PROF_NONE)
			return PROF_NONE;
	}
	if (r->by_content) {
		d.function = prof_str(s, sf->label);
		d.line = 0;
		d.addr = 0;
	}
	return r->fmap[f] = prof_frame(r->dst, &d);
}

/* The image of node n, making those of its ancestors first. */
static uint32_t image(struct replay *r, uint32_t n)
{
	r->path.n = 0;
	for (uint32_t x = n; r->memo[x] == PROF_NONE; x = r->src->nodes.v[x].parent) {
		uint32_t *slot = vec_push(&r->path);
		if (!slot) {
			err_set(-ENOMEM, "out of memory");
			return PROF_NONE;
		}
		*slot = x;
	}
	while (r->path.n > 0) {
		uint32_t m = r->path.v[--r->path.n];
		uint32_t dp = r->memo[r->src->nodes.v[m].parent];
		if (copy_frame(r, r->src->nodes.v[m].frame) == PROF_NONE)
			return PROF_NONE;
		if ((r->memo[m] = r->rule(r, dp, m)) == PROF_NONE)
			return PROF_NONE;
	}
	return r->memo[n];
}

/* Where weight meant for dst node dn goes: dn, or the "[hidden]" frame for the root (a
 * stack whose frames were all hidden). */
static uint32_t weight_node(struct replay *r, uint32_t dn)
{
	if (dn != PROF_ROOT)
		return dn;
	if (r->hidden == PROF_NONE) {
		struct prof_frame_desc d = { PROF_NATIVE, "[hidden]", NULL, 0, PROF_NONE, 0 };
		r->hidden = prof_frame(r->dst, &d);
	}
	return r->hidden == PROF_NONE ? PROF_NONE : prof_child(r->dst, PROF_ROOT, r->hidden, 0, 0);
}

static int add_weights(struct replay *r, uint32_t n, uint32_t dn)
{
	const struct prof *s = r->src;
	size_t snm = s->metrics.n, dnm = r->dst->metrics.n;
	int64_t w[64];
	if (dnm > 64)
		return err_set(-E2BIG, "more than 64 metrics");
	if ((dn = weight_node(r, dn)) == PROF_NONE)
		return -ENOMEM;
	for (uint32_t e = s->nodes.v[n].first_pc; e != PROF_NONE; e = s->pcws.v[e].next) {
		memset(w, 0, dnm * sizeof(*w));
		const int64_t *sw = s->pcw_w.v + (size_t)e * snm;
		bool any = false;
		for (size_t m = 0; m < snm; m++)
			if (r->mmap[m] >= 0 && sw[m]) {
				w[r->mmap[m]] += sw[m];
				any = true;
			}
		if (!any)
			continue;
		int rc = prof_add_self(r->dst, dn, s->pcws.v[e].pc, s->pcws.v[e].line, w);
		if (rc)
			return rc;
	}
	return 0;
}

/* The sample log, carried over: each kept sample's weight (metrics mapped) at the image
 * of its node and pc entry, its thread interned in dst. With a thread chosen, only that
 * thread's samples, and their weight is added to dst's tree too (the tree pass skips). */
static int replay_samples(struct replay *r)
{
	const struct prof *s = r->src;
	size_t snm = s->metrics.n, dnm = r->dst->metrics.n;
	int64_t w[64];
	uint32_t *tmap = malloc((s->threads.n ? s->threads.n : 1) * sizeof(*tmap));
	if (!tmap)
		return err_set(-ENOMEM, "out of memory");
	memset(tmap, 0xff, (s->threads.n ? s->threads.n : 1) * sizeof(*tmap));
	int rc = 0;
	for (size_t i = 0; !rc && i < s->samples.n; i++) {
		const struct prof_sample *e = &s->samples.v[i];
		if ((r->keep && !r->keep[e->node]) ||
		    (r->from_log && r->thread != PROF_NONE && e->thread != r->thread) ||
		    (r->from_log && r->thread == PROF_NONE && e->gil != r->gil))
			continue;
		memset(w, 0, dnm * sizeof(*w));
		const int64_t *sw = s->sample_w.v + i * snm;
		for (size_t m = 0; m < snm; m++)
			if (r->mmap[m] >= 0)
				w[r->mmap[m]] += sw[m];
		const struct prof_thread *t = &s->threads.v[e->thread];
		if (tmap[e->thread] == PROF_NONE)
			tmap[e->thread] = prof_thread(r->dst, t->pid, t->tid, prof_str(s, t->name));
		uint32_t dn = image(r, e->node);
		struct prof_sample d = { e->time, tmap[e->thread], PROF_NONE, PROF_NONE, e->gil };
		if (d.thread == PROF_NONE || dn == PROF_NONE ||
		    (d.node = weight_node(r, dn)) == PROF_NONE) {
			rc = -ENOMEM;
			break;
		}
		const struct prof_pcw *pc = &s->pcws.v[e->pcw];
		d.pcw = prof_pcw_get(r->dst, d.node, pc->pc, pc->line);
		if (d.pcw == PROF_NONE)
			rc = -ENOMEM;
		else if (r->from_log)
			rc = prof_add_self(r->dst, d.node, pc->pc, pc->line, w);
		if (!rc)
			rc = prof_log_sample(r->dst, &d, w);
	}
	free(tmap);
	return rc;
}

static int replay(struct replay *r)
{
	const struct prof *s = r->src;
	int rc = 0;
	r->fmap = malloc((s->frames.n ? s->frames.n : 1) * sizeof(*r->fmap));
	r->memo = malloc(s->nodes.n * sizeof(*r->memo));
	r->hidden = PROF_NONE;
	if (!r->fmap || !r->memo)
		rc = err_set(-ENOMEM, "out of memory");
	else {
		memset(r->fmap, 0xff, (s->frames.n ? s->frames.n : 1) * sizeof(*r->fmap));
		memset(r->memo, 0xff, s->nodes.n * sizeof(*r->memo));
		r->memo[PROF_ROOT] = PROF_ROOT;
	}
	for (uint32_t n = 1; !rc && !r->from_log && n < s->nodes.n; n++) {
		if (s->nodes.v[n].first_pc == PROF_NONE || (r->keep && !r->keep[n]))
			continue;
		uint32_t dn = image(r, n);
		rc = dn == PROF_NONE ? -ENOMEM : add_weights(r, n, dn);
	}
	if (!rc && !r->drop_log)
		rc = replay_samples(r);
	free(r->fmap);
	free(r->memo);
	vec_free(&r->path);
	return rc;
}

static uint32_t rule_same(struct replay *r, uint32_t dp, uint32_t n)
{
	const struct prof_node *x = &r->src->nodes.v[n];
	return prof_child(r->dst, dp, r->fmap[x->frame], x->call_pc, x->call_line);
}

static uint32_t rule_no_callsite(struct replay *r, uint32_t dp, uint32_t n)
{
	return prof_child(r->dst, dp, r->fmap[r->src->nodes.v[n].frame], 0, 0);
}

static uint32_t rule_hide(struct replay *r, uint32_t dp, uint32_t n)
{
	uint32_t f = r->src->nodes.v[n].frame;
	return r->pred(r->src, f, r->pred_ctx) ? dp : rule_same(r, dp, n);
}

static uint32_t rule_fold(struct replay *r, uint32_t dp, uint32_t n)
{
	uint32_t f = r->fmap[r->src->nodes.v[n].frame];
	for (uint32_t a = dp; a != PROF_ROOT; a = r->dst->nodes.v[a].parent)
		if (r->dst->nodes.v[a].frame == f)
			return a;
	return rule_same(r, dp, n);
}

/* Copies the metrics of src into dst (same order); identity metric map into mmap. */
static int copy_metrics(struct prof *dst, const struct prof *src, int *mmap)
{
	for (size_t m = 0; m < src->metrics.n; m++) {
		int i = prof_add_metric(dst, prof_str(src, src->metrics.v[m].type),
					prof_str(src, src->metrics.v[m].unit));
		if (i < 0)
			return err_prefix(i, "merging profiles");
		mmap[m] = i;
	}
	return 0;
}

static int copy_facts(struct prof *dst, const struct prof *src)
{
	const struct prof_info *i = &src->info;
	int rc = 0;
	if (!dst->info.source && i->source)
		rc = prof_set_source(dst, i->source);
	if (!rc && !dst->info.period && i->period)
		rc = prof_set_period(dst, i->period, prof_str(src, i->period_type.type),
				     prof_str(src, i->period_type.unit));
	int64_t start = dst->info.time_ns, end = start + dst->info.duration_ns;
	int64_t s2 = i->time_ns, e2 = s2 + i->duration_ns;
	if (!dst->has_weight || (s2 && s2 < start) || !start)
		start = s2 ? s2 : start;
	if (e2 > end)
		end = e2;
	prof_set_times(dst, start, end - start);
	if (!dst->has_weight)
		dst->info.default_metric = i->default_metric;
	for (size_t c = 0; !rc && c < src->counters.n; c++) {
		const char *name = prof_str(src, src->counters.v[c].name);
		int64_t v = src->counters.v[c].value;
		for (size_t d = 0; d < dst->counters.n; d++)
			if (!strcmp(prof_str(dst, dst->counters.v[d].name), name))
				v += dst->counters.v[d].value;
		rc = prof_set_counter(dst, name, v);
	}
	return rc;
}

int prof_merge(struct prof *dst, const struct prof *src)
{
	int mmap[64];
	if (src->metrics.n > 64)
		return err_set(-E2BIG, "more than 64 metrics");
	for (size_t m = 0; m < src->metrics.n; m++) {
		const char *t = prof_str(src, src->metrics.v[m].type),
			   *u = prof_str(src, src->metrics.v[m].unit);
		mmap[m] = prof_find_metric(dst, t, u);
		if (mmap[m] < 0 && (dst->has_weight || dst->nodes.n > 1))
			return err_set(-EINVAL, "cannot merge: metric %s/%s is not in both profiles",
				       t, u);
		if (mmap[m] < 0 && (mmap[m] = prof_add_metric(dst, t, u)) < 0)
			return mmap[m];
	}
	int rc = copy_facts(dst, src);
	struct replay r = { .src = src, .dst = dst, .mmap = mmap, .rule = rule_same };
	return rc ? rc : replay(&r);
}

/* The end of every transform: a finished copy in *out, or nothing and the first error. */
static int finish_into(struct prof *d, int rc, struct prof **out)
{
	if (!rc)
		rc = prof_finish(d);
	if (rc) {
		prof_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

/* Runs one replay from p into a fresh profile with the same metrics and facts. */
static int transformed(const struct prof *p, struct replay *r, struct prof **out)
{
	int mmap[64];
	struct prof *d;
	if (p->metrics.n > 64)
		return err_set(-E2BIG, "more than 64 metrics");
	int rc = prof_new(&d);
	if (!rc)
		rc = copy_metrics(d, p, mmap);
	if (!rc)
		rc = copy_facts(d, p);
	r->src = p;
	r->dst = d;
	r->mmap = mmap;
	if (!rc)
		rc = replay(r);
	r->mmap = NULL;
	return finish_into(d, rc, out);
}

int prof_focus(const struct prof *p, prof_frame_pred match, void *ctx, struct prof **out)
{
	bool *keep = malloc(p->nodes.n * sizeof(*keep));
	if (!keep)
		return err_set(-ENOMEM, "out of memory");
	keep[PROF_ROOT] = false;
	for (uint32_t n = 1; n < p->nodes.n; n++)
		keep[n] = keep[p->nodes.v[n].parent] || match(p, p->nodes.v[n].frame, ctx);
	struct replay r = { .rule = rule_same, .keep = keep };
	int rc = transformed(p, &r, out);
	free(keep);
	return rc;
}

int prof_hide(const struct prof *p, prof_frame_pred match, void *ctx, struct prof **out)
{
	struct replay r = { .rule = rule_hide, .pred = match, .pred_ctx = ctx };
	return transformed(p, &r, out);
}

int prof_fold_recursion(const struct prof *p, struct prof **out)
{
	struct replay r = { .rule = rule_fold };
	return transformed(p, &r, out);
}

int prof_merge_callsites(const struct prof *p, struct prof **out)
{
	struct replay r = { .rule = rule_no_callsite };
	return transformed(p, &r, out);
}

int prof_thread_profile(const struct prof *p, uint32_t thread, struct prof **out)
{
	if (thread >= p->threads.n)
		return err_set(-EINVAL, "thread %u does not exist", thread);
	struct replay r = { .rule = rule_same, .from_log = true, .thread = thread };
	return transformed(p, &r, out);
}

int prof_gil_profile(const struct prof *p, enum prof_gil gil, struct prof **out)
{
	struct replay r = { .rule = rule_same, .from_log = true, .thread = PROF_NONE,
			    .gil = (uint8_t)gil };
	return transformed(p, &r, out);
}

static int pick_metric(const struct prof *p, int m, const char *which)
{
	if (m < 0)
		m = p->info.default_metric;
	if ((size_t)m >= p->metrics.n)
		return err_set(-EINVAL, "%s profile has no metric %d", which, m);
	return m;
}

int prof_diff(const struct prof *before, int metric_before, const struct prof *after,
	      int metric_after, struct prof **out)
{
	int mb = pick_metric(before, metric_before, "before");
	int ma = pick_metric(after, metric_after, "after");
	if (mb < 0 || ma < 0)
		return mb < 0 ? mb : ma;
	if (before->metrics.n > 64 || after->metrics.n > 64)
		return err_set(-E2BIG, "more than 64 metrics");
	struct prof *d;
	int rc = prof_new(&d);
	if (rc)
		return rc;
	const struct prof_metric *m = &after->metrics.v[ma];
	char tb[300], ta[300];
	snprintf(tb, sizeof(tb), "before:%.280s", prof_str(before, before->metrics.v[mb].type));
	snprintf(ta, sizeof(ta), "after:%.280s", prof_str(after, m->type));
	if (prof_add_metric(d, tb, prof_str(before, before->metrics.v[mb].unit)) != PROF_DIFF_BEFORE ||
	    prof_add_metric(d, ta, prof_str(after, m->unit)) != PROF_DIFF_AFTER)
		rc = err_set(-EINVAL, "diff: cannot declare metrics");
	int mmap[64];
	for (int pass = 0; !rc && pass < 2; pass++) {
		const struct prof *s = pass ? after : before;
		for (size_t i = 0; i < s->metrics.n; i++)
			mmap[i] = (int)i == (pass ? ma : mb) ? pass : -1;
		struct replay r = { .src = s, .dst = d, .mmap = mmap, .by_content = true, .drop_log = true,
				    .rule = rule_no_callsite };
		rc = replay(&r);
	}
	if (!rc) {
		d->info.default_metric = PROF_DIFF_AFTER;
		rc = prof_set_source(d, after->info.source);
	}
	return finish_into(d, rc, out);
}

struct prof_regex {
	regex_t re;
};

int prof_regex_compile(const char *pattern, struct prof_regex **out)
{
	struct prof_regex *r = malloc(sizeof(*r));
	if (!r)
		return err_set(-ENOMEM, "out of memory");
	int rc = regcomp(&r->re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[200];
		regerror(rc, &r->re, msg, sizeof(msg));
		free(r);
		return err_set(-EINVAL, "bad regular expression '%s': %s", pattern, msg);
	}
	*out = r;
	return 0;
}

bool prof_regex_match_frame(const struct prof *p, uint32_t frame, void *regex)
{
	struct prof_regex *r = regex;
	return !regexec(&r->re, prof_frame_label(p, frame), 0, NULL, 0);
}

void prof_regex_free(struct prof_regex *r)
{
	if (r) {
		regfree(&r->re);
		free(r);
	}
}
