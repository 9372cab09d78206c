/*
 * Folded stacks export: "root;...;leaf COUNT" per calling context with self weight, in
 * canonical order, call sites merged (folded stacks have no pcs). The format has no
 * escaping, so a ';' or a line break inside a name would split a frame or a line: those
 * bytes are written as '_' (and a name that is empty as "[unknown]"); everything else,
 * including bytes that are not UTF-8, is written as it is. With threads, each thread's
 * stacks follow a root frame "NAME-PID/TID" (stackcollapse-perf.pl --tid's spelling).
 */
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/vec.h"
#include "profile/profile.h"

struct folded {
	FILE *f;
	int metric;
	bool kinds;
	char root[64]; /* the thread's frame, "" without threads */
	VEC(uint32_t) path; /* frames from the root, by depth (its room: n stays 0) */
};

static void put_name(FILE *f, const char *s)
{
	if (!*s)
		fputs("[unknown]", f);
	for (; *s; s++)
		fputc(*s == ';' || *s == '\n' || *s == '\r' ? '_' : *s, f);
}

static int visit(const struct prof *p, uint32_t node, void *ctx)
{
	struct folded *x = ctx;
	const struct prof_node *n = prof_node_at(p, node);
	if (node == PROF_ROOT)
		return 0;
	if (!vec_reserve(&x->path, n->depth))
		return err_set(-ENOMEM, "out of memory");
	x->path.v[n->depth - 1] = n->frame;
	int64_t w = prof_self(p, node)[x->metric];
	if (!w)
		return 0;
	if (x->root[0]) {
		put_name(x->f, x->root);
		fputc(';', x->f);
	}
	for (uint32_t d = 0; d < n->depth; d++) {
		const struct prof_frame *fr = prof_frame_at(p, x->path.v[d]);
		if (d)
			fputc(';', x->f);
		put_name(x->f, prof_frame_label(p, x->path.v[d]));
		if (x->kinds && fr->kind == PROF_INLINE)
			fputs("_[i]", x->f);
		else if (x->kinds && fr->kind == PROF_KERNEL)
			fputs("_[k]", x->f);
		else if (x->kinds && fr->kind == PROF_JIT)
			fputs("_[j]", x->f);
		else if (x->kinds && fr->kind == PROF_PYTHON)
			fputs("_[p]", x->f);
		else if (x->kinds && fr->kind == PROF_RUBY)
			fputs("_[r]", x->f);
	}
	fprintf(x->f, " %" PRId64 "\n", w);
	return 0;
}

static int write_stacks(struct folded *x, const struct prof *p)
{
	struct prof *merged;
	int rc = prof_merge_callsites(p, &merged);
	if (rc)
		return rc;
	rc = prof_walk(merged, visit, NULL, x);
	prof_free(merged);
	return rc;
}

/* Each thread's stacks in turn, by pid and tid, below the thread's own frame. */
static int write_threads(struct folded *x, const struct prof *p)
{
	if (!prof_nthreads(p))
		return rep_no_threads();
	uint32_t *order = rep_threads_sorted(p);
	int rc = order ? 0 : err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < prof_nthreads(p); i++) {
		const struct prof_thread *t = prof_thread_at(p, order[i]);
		struct prof *tp;
		if ((rc = prof_thread_profile(p, order[i], &tp)))
			break;
		snprintf(x->root, sizeof(x->root), "%s-%u/%u", prof_str(p, t->name), t->pid, t->tid);
		rc = write_stacks(x, tp);
		prof_free(tp);
	}
	free(order);
	return rc;
}

int rep_folded(FILE *f, const struct prof *p, const struct rep_folded_opts *o)
{
	int metric = o->metric < 0 ? prof_info(p)->default_metric : o->metric;
	if ((size_t)metric >= prof_nmetrics(p))
		return err_set(-EINVAL, "no metric %d", metric);
	struct folded x = { .f = f, .metric = metric, .kinds = o->annotate_kinds };
	int rc = o->threads ? write_threads(&x, p) : write_stacks(&x, p);
	vec_free(&x.path);
	if (!rc && ferror(f))
		rc = err_set(-EIO, "write error");
	return rc;
}
