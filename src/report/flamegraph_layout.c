/*
 * Lays a profile out as flame graph frames: call sites merged (prof_merge_callsites), one
 * depth-first walk in the profile's canonical order (so children sit left to right by
 * name), each frame starting where its previous sibling ended. Frames narrower than
 * minwidth pixels are left out with their whole subtree: that is what keeps the SVG of a
 * huge profile small enough for a browser to stay responsive.
 */
#include "report/flamegraph_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "profile/profile.h"
#include "report/flamegraph_xml.h"

void rep_flame_opts_init(struct rep_flame_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->minwidth = 0.1;
	o->width = 1200;
	o->metric = -1;
}

void fg_graph_free(struct fg_graph *g)
{
	vec_free(&g->frames);
}

static enum fg_kind fg_kind_of(uint8_t kind)
{
	switch (kind) {
	case PROF_INLINE: return FG_INLINE;
	case PROF_VM: return FG_VM;
	case PROF_SYSCALL: return FG_SYSCALL;
	case PROF_PROGRAM: return FG_PROGRAM;
	case PROF_KERNEL: return FG_KERNEL;
	case PROF_TRUNCATED: return FG_TRUNCATED;
	case PROF_JIT: return FG_JIT;
	case PROF_PYTHON: return FG_PYTHON;
	case PROF_RUBY: return FG_RUBY;
	default: return FG_NATIVE;
	}
}

struct walk {
	const struct prof *p;
	struct fg_graph *g;
	const int64_t *totals; /* inclusive, node-major */
	const int64_t *selfs;  /* NULL unless diff */
	size_t nmetrics;
	int metric;	       /* the weight drawn */
	int before;	       /* diff: the metric compared with, else -1 */
	double before_scale;   /* diff: BEFORE's weights are multiplied by this */
	double min_weight;     /* minwidth, in weight units */
	VEC(uint64_t) next;    /* per depth: where the next frame at that depth starts */
};

static uint64_t clamp(int64_t v)
{
	return v > 0 ? (uint64_t)v : 0;
}

static int enter(const struct prof *p, uint32_t id, void *ctx)
{
	struct walk *w = ctx;
	const struct prof_node *node = prof_node_at(p, id);
	uint64_t total = clamp(w->totals[(size_t)id * w->nmetrics + (size_t)w->metric]);
	if (id != PROF_ROOT && (total == 0 || (double)total < w->min_weight)) {
		w->g->pruned += total != 0;
		/* A path only BEFORE has cannot be drawn in AFTER's shape: say how much it was. */
		if (!total && w->before >= 0)
			w->g->gone += clamp(w->totals[(size_t)id * w->nmetrics + (size_t)w->before]);
		return 1;
	}
	while (w->next.n <= (size_t)node->depth + 1) {
		uint64_t *slot = vec_push(&w->next);
		if (!slot)
			return err_set(-ENOMEM, "flame graph: out of memory");
	}
	struct fg_frame *f = vec_push(&w->g->frames);
	if (!f)
		return err_set(-ENOMEM, "flame graph: out of memory");
	f->depth = node->depth;
	f->start = w->next.v[node->depth];
	f->total = total;
	w->next.v[node->depth] += total;
	w->next.v[node->depth + 1] = f->start;
	if (id == PROF_ROOT) {
		f->name = "all";
		f->kind = FG_ROOT;
	} else {
		f->name = prof_frame_label(p, node->frame);
		f->kind = fg_kind_of(prof_frame_at(p, node->frame)->kind);
	}
	if (node->depth > w->g->max_depth)
		w->g->max_depth = node->depth;
	w->g->kinds_seen[f->kind] = true;
	if (w->before >= 0) {
		const int64_t *self = prof_self(p, id);
		double before_self = (double)self[w->before] * w->before_scale;
		int64_t before_total = w->totals[(size_t)id * w->nmetrics + (size_t)w->before];
		f->before_total = clamp(before_total);
		f->in_before = before_total != 0;
		f->self_delta = (int64_t)((double)self[w->metric] - before_self);
		int64_t mag = f->self_delta < 0 ? -f->self_delta : f->self_delta;
		if (mag > w->g->max_abs_delta)
			w->g->max_abs_delta = mag;
	}
	return 0;
}

static int layout(FILE *out, const struct prof *p, int metric, int before, const struct rep_flame_opts *o,
		  struct fg_graph *g, char *unit, size_t unit_size)
{
	struct prof *merged = NULL;
	int64_t *totals = NULL;
	struct walk w = { .g = g, .metric = metric, .before = before, .before_scale = 1 };
	int rc = prof_merge_callsites(p, &merged);
	if (!rc)
		rc = prof_totals(merged, &totals);
	if (rc)
		goto out;
	w.p = merged;
	w.totals = totals;
	w.nmetrics = prof_nmetrics(merged);
	g->total = clamp(totals[metric]);
	if (!g->total) {
		rc = err_set(-EINVAL, "the profile is empty: no weight to draw");
		goto out;
	}
	if (before >= 0) {
		g->diff = true;
		g->before_total = clamp(totals[before]);
		if (o->normalize && g->before_total)
			w.before_scale = (double)g->total / (double)g->before_total;
	}
	w.min_weight = o->minwidth * (double)g->total / (double)(o->width - 2 * FG_PAD);
	rep_unit_word(merged, metric, unit, unit_size);
	g->unit = unit;
	rc = prof_walk(merged, enter, NULL, &w);
	if (!rc)
		rc = fg_write_svg(out, g, o);
out:
	vec_free(&w.next);
	free(totals);
	prof_free(merged);
	return rc;
}

static int check_opts(const struct rep_flame_opts *o)
{
	if (o->width < 200 || o->width > 100000)
		return err_set(-EINVAL, "flame graph width %u is outside 200..100000", o->width);
	if (!(o->minwidth >= 0))
		return err_set(-EINVAL, "flame graph minwidth must be a number >= 0");
	return 0;
}

int rep_flamegraph(FILE *out, const struct prof *p, const struct rep_flame_opts *o)
{
	int metric = o->metric >= 0 ? o->metric : prof_info(p)->default_metric;
	if (metric < 0 || (size_t)metric >= prof_nmetrics(p))
		return err_set(-EINVAL, "the profile has no metric %d", metric);
	int rc = check_opts(o);
	if (rc)
		return rc;
	struct fg_graph g = { 0 };
	char unit[32];
	rc = layout(out, p, metric, -1, o, &g, unit, sizeof(unit));
	fg_graph_free(&g);
	return rc;
}

int rep_flamegraph_diff(FILE *out, const struct prof *diff, const struct rep_flame_opts *o)
{
	if (prof_nmetrics(diff) != 2)
		return err_set(-EINVAL, "not a diff model: %zu metrics", prof_nmetrics(diff));
	int rc = check_opts(o);
	if (rc)
		return rc;
	struct fg_graph g = { 0 };
	char unit[32];
	rc = layout(out, diff, PROF_DIFF_AFTER, PROF_DIFF_BEFORE, o, &g, unit, sizeof(unit));
	fg_graph_free(&g);
	return rc;
}
