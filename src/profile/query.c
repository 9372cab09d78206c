/*
 * Reading a finished profile: the depth-first walk, inclusive totals, per-function figures
 * and the stack of a node. Totals rely on parents having smaller ids than their children.
 */
#include "profile/prof_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

int prof_walk(const struct prof *p, prof_visit_fn enter, prof_visit_fn leave, void *ctx)
{
	if (!p->finished)
		return err_set(-EINVAL, "profile walked before prof_finish()");
	uint32_t n = PROF_ROOT;
	int rc = enter(p, n, ctx);
	for (;;) {
		if (rc < 0)
			return rc;
		const struct prof_node *node = &p->nodes.v[n];
		if (rc == 0 && node->first_child != PROF_NONE) {
			n = node->first_child;
			rc = enter(p, n, ctx);
			continue;
		}
		for (;;) {
			if (leave && (rc = leave(p, n, ctx)) < 0)
				return rc;
			if (n == PROF_ROOT)
				return 0;
			if (p->nodes.v[n].next_sibling != PROF_NONE) {
				n = p->nodes.v[n].next_sibling;
				rc = enter(p, n, ctx);
				break;
			}
			n = p->nodes.v[n].parent;
		}
	}
}

int prof_totals(const struct prof *p, int64_t **out)
{
	size_t nm = p->metrics.n, nn = p->nodes.n;
	size_t cells = nn * nm;
	int64_t *t = malloc((cells ? cells : 1) * sizeof(*t));
	if (!t)
		return err_set(-ENOMEM, "out of memory summing the profile");
	if (nm)
		memcpy(t, p->self.v, nn * nm * sizeof(*t));
	for (size_t i = nn; i-- > 1;) {
		int64_t *mine = t + i * nm, *par = t + (size_t)p->nodes.v[i].parent * nm;
		for (size_t m = 0; m < nm; m++)
			par[m] += mine[m];
	}
	*out = t;
	return 0;
}

void prof_grand_total(const struct prof *p, int64_t *out)
{
	size_t nm = p->metrics.n;
	memset(out, 0, nm * sizeof(*out));
	for (size_t i = 1; i < p->nodes.n; i++)
		for (size_t m = 0; m < nm; m++)
			out[m] += p->self.v[i * nm + m];
}

struct fstat_ctx {
	const int64_t *totals;
	uint32_t *on_path; /* by frame: how many times on the current path */
	int64_t *total;	   /* by frame */
};

static int fstat_enter(const struct prof *p, uint32_t n, void *vctx)
{
	struct fstat_ctx *c = vctx;
	uint32_t f = p->nodes.v[n].frame;
	if (n == PROF_ROOT)
		return 0;
	size_t nm = p->metrics.n;
	if (!c->on_path[f]++)
		for (size_t m = 0; m < nm; m++)
			c->total[(size_t)f * nm + m] += c->totals[(size_t)n * nm + m];
	return 0;
}

static int fstat_leave(const struct prof *p, uint32_t n, void *vctx)
{
	struct fstat_ctx *c = vctx;
	if (n != PROF_ROOT)
		c->on_path[p->nodes.v[n].frame]--;
	return 0;
}

static int rank_cmp(const void *a, const void *b, void *ctx)
{
	const struct prof *p = ctx;
	return prof_frame_cmp(p, *(const uint32_t *)a, p, *(const uint32_t *)b);
}

int prof_func_stats(const struct prof *p, struct prof_funcs *out)
{
	memset(out, 0, sizeof(*out));
	size_t nf = p->frames.n ? p->frames.n : 1, nm = p->metrics.n ? p->metrics.n : 1;
	struct fstat_ctx c = { 0 };
	int64_t *self = calloc(nf * nm, sizeof(*self));
	c.total = calloc(nf * nm, sizeof(*c.total));
	c.on_path = calloc(nf, sizeof(*c.on_path));
	bool *used = calloc(nf, sizeof(*used));
	int rc = self && c.total && c.on_path && used ? prof_totals(p, (int64_t **)&c.totals)
						      : err_set(-ENOMEM, "out of memory");
	if (!rc)
		rc = prof_walk(p, fstat_enter, fstat_leave, &c);
	if (!rc) {
		for (size_t i = 1; i < p->nodes.n; i++) {
			uint32_t f = p->nodes.v[i].frame;
			used[f] = true;
			for (size_t m = 0; m < p->metrics.n; m++)
				self[f * nm + m] += p->self.v[i * p->metrics.n + m];
		}
		out->frame = malloc(nf * sizeof(*out->frame));
		out->self = malloc(nf * nm * sizeof(*out->self));
		out->total = malloc(nf * nm * sizeof(*out->total));
		if (!out->frame || !out->self || !out->total)
			rc = err_set(-ENOMEM, "out of memory");
	}
	if (!rc) {
		for (size_t f = 0; f < p->frames.n; f++)
			if (used[f])
				out->frame[out->n++] = (uint32_t)f;
		qsort_r(out->frame, out->n, sizeof(*out->frame), rank_cmp, (void *)p);
		for (size_t i = 0; i < out->n; i++) {
			memcpy(out->self + i * nm, self + (size_t)out->frame[i] * nm,
			       nm * sizeof(int64_t));
			memcpy(out->total + i * nm, c.total + (size_t)out->frame[i] * nm,
			       nm * sizeof(int64_t));
		}
	}
	free(self);
	free(c.total);
	free(c.on_path);
	free(used);
	free((void *)c.totals);
	if (rc)
		prof_funcs_free(out);
	return rc;
}

void prof_funcs_free(struct prof_funcs *f)
{
	free(f->frame);
	free(f->self);
	free(f->total);
	memset(f, 0, sizeof(*f));
}

