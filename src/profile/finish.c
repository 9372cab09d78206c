/*
 * Canonical order: children sorted by frame (prof_frame_cmp), then call site; pc entries by
 * pc and line. Frames are ranked once, so sorting children compares integers, not strings.
 */
#include "profile/prof_internal.h"

#include <errno.h>
#include <stdlib.h>

#include "base/err.h"

struct sort_ctx {
	const struct prof *p;
	const uint32_t *rank; /* by frame id */
};

static int frame_rank_cmp(const void *a, const void *b, void *ctx)
{
	const struct prof *p = ctx;
	return prof_frame_cmp(p, *(const uint32_t *)a, p, *(const uint32_t *)b);
}

static int child_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_ctx *c = ctx;
	const struct prof_node *x = &c->p->nodes.v[*(const uint32_t *)a],
			       *y = &c->p->nodes.v[*(const uint32_t *)b];
	uint32_t rx = c->rank[x->frame], ry = c->rank[y->frame];
	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->call_pc != y->call_pc)
		return x->call_pc < y->call_pc ? -1 : 1;
	return (x->call_line > y->call_line) - (x->call_line < y->call_line);
}

static int pcw_cmp(const void *a, const void *b, void *ctx)
{
	const struct prof *p = ctx;
	const struct prof_pcw *x = &p->pcws.v[*(const uint32_t *)a],
			      *y = &p->pcws.v[*(const uint32_t *)b];
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* Frame id -> position in canonical frame order; malloc'd. */
static uint32_t *rank_frames(const struct prof *p)
{
	size_t n = p->frames.n;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));
	if (!order || !rank) {
		free(order);
		free(rank);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), frame_rank_cmp, (void *)p);
	for (size_t i = 0; i < n; i++)
		rank[order[i]] = (uint32_t)i;
	free(order);
	return rank;
}

/* Sorts one linked list (head, next field chosen by is_pc) through buf. */
static uint32_t sort_list(struct prof *p, uint32_t head, bool is_pc, uint32_t *buf,
			  struct sort_ctx *sc)
{
	size_t n = 0;
	for (uint32_t i = head; i != PROF_NONE;
	     i = is_pc ? p->pcws.v[i].next : p->nodes.v[i].next_sibling)
		buf[n++] = i;
	if (n < 2)
		return head;
	if (is_pc)
		qsort_r(buf, n, sizeof(*buf), pcw_cmp, p);
	else
		qsort_r(buf, n, sizeof(*buf), child_cmp, sc);
	for (size_t i = 0; i < n; i++) {
		uint32_t next = i + 1 < n ? buf[i + 1] : PROF_NONE;
		if (is_pc)
			p->pcws.v[buf[i]].next = next;
		else
			p->nodes.v[buf[i]].next_sibling = next;
	}
	return buf[0];
}

int prof_finish(struct prof *p)
{
	if (p->finished)
		return 0;
	uint32_t *rank = rank_frames(p);
	size_t max = p->nodes.n > p->pcws.n ? p->nodes.n : p->pcws.n;
	uint32_t *buf = malloc((max ? max : 1) * sizeof(*buf));
	if (!rank || !buf) {
		free(rank);
		free(buf);
		return err_set(-ENOMEM, "out of memory sorting the profile");
	}
	struct sort_ctx sc = { p, rank };
	for (size_t i = 0; i < p->nodes.n; i++) {
		struct prof_node *n = &p->nodes.v[i];
		n->first_child = sort_list(p, n->first_child, false, buf, &sc);
		n->first_pc = sort_list(p, n->first_pc, true, buf, &sc);
	}
	free(rank);
	free(buf);
	p->finished = true;
	return 0;
}

bool prof_is_empty(const struct prof *p)
{
	return !p->has_weight;
}
