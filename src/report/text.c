/*
 * The text report: a header (source, metric totals, duration, the figures a source
 * attached such as unwind quality), then the top functions by self and by total weight,
 * or with --tree the call tree pruned at a threshold. Non-native frames carry their kind
 * in brackets ("[inline]"), so an inlined function never passes for a real call.
 */
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "profile/profile.h"

static double pct(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A weight as people read it: times in nanoseconds scaled to s/ms/us, counts as they are. */
static const char *value(char *buf, size_t size, int64_t v, bool ns)
{
	double a = v < 0 ? -(double)v : (double)v;
	if (!ns || a < 1000)
		snprintf(buf, size, "%" PRId64 "%s", v, ns ? "ns" : "");
	else if (a < 1e6)
		snprintf(buf, size, "%.2fus", (double)v / 1e3);
	else if (a < 1e9)
		snprintf(buf, size, "%.2fms", (double)v / 1e6);
	else
		snprintf(buf, size, "%.2fs", (double)v / 1e9);
	return buf;
}

static bool is_ns(const struct prof *p, int metric)
{
	return !strcmp(prof_str(p, prof_metric(p, (size_t)metric)->unit), "nanoseconds");
}

static void frame_name(FILE *f, const struct prof *p, uint32_t frame)
{
	const struct prof_frame *fr = prof_frame_at(p, frame);
	fputs(prof_frame_label(p, frame), f);
	if (fr->kind != PROF_NATIVE && fr->kind != PROF_TRUNCATED)
		fprintf(f, " [%s]", prof_kind_name(fr->kind));
	const struct prof_module *m = prof_module_at(p, fr->module);
	if (fr->file && fr->line)
		fprintf(f, "  (%s:%" PRIu32 ")", prof_str(p, fr->file), fr->line);
	else if (fr->file)
		fprintf(f, "  (%s)", prof_str(p, fr->file));
	else if (m && fr->function) { /* unknown source: at least say which object */
		const char *path = prof_str(p, m->path), *base = strrchr(path, '/');
		fprintf(f, "  (%s)", base ? base + 1 : path);
	}
}

static void header(FILE *f, const struct prof *p, int metric, const int64_t *total)
{
	const struct prof_info *info = prof_info(p);
	size_t nm = prof_nmetrics(p);
	fprintf(f, "source:   %s\n", info->source ? info->source : "(unknown)");
	for (size_t m = 0; m < nm; m++) {
		const struct prof_metric *pm = prof_metric(p, m);
		char b[64];
		fprintf(f, "%-9s %" PRId64 " %s/%s", m ? "" : "total:", total[m],
			prof_str(p, pm->type), prof_str(p, pm->unit));
		if (is_ns(p, (int)m) && total[m] >= 1000)
			fprintf(f, " (%s)", value(b, sizeof(b), total[m], true));
		fputs((int)m == metric && nm > 1 ? " (shown)\n" : "\n", f);
	}
	if (info->duration_ns)
		fprintf(f, "duration: %.3f s\n", (double)info->duration_ns / 1e9);
	for (size_t i = 0; i < prof_ncounters(p); i++) {
		const char *name;
		int64_t v;
		prof_counter_at(p, i, &name, &v);
		fprintf(f, "%-9s %s %" PRId64 "\n", i ? "" : "figures:", name, v);
	}
}

struct row_order {
	const int64_t *key; /* by row */
	const struct prof_funcs *fs;
};

static int by_key_desc(const void *a, const void *b, void *ctx)
{
	const struct row_order *o = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (o->key[x] != o->key[y])
		return o->key[x] > o->key[y] ? -1 : 1;
	return (x > y) - (x < y); /* rows are in canonical frame order: a stable tie-break */
}

static void table(FILE *f, const struct prof *p, const struct prof_funcs *fs, int metric,
		  bool by_self, unsigned top, int64_t total)
{
	size_t nm = prof_nmetrics(p), n = fs->n;
	size_t *rows = malloc((n ? n : 1) * sizeof(*rows));
	int64_t *key = malloc((n ? n : 1) * sizeof(*key));
	if (!rows || !key) {
		free(rows);
		free(key);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rows[i] = i;
		key[i] = (by_self ? fs->self : fs->total)[i * nm + (size_t)metric];
	}
	struct row_order o = { key, fs };
	qsort_r(rows, n, sizeof(*rows), by_key_desc, &o);
	const struct prof_metric *pm = prof_metric(p, (size_t)metric);
	fprintf(f, "\nTop functions by %s %s:\n", by_self ? "self" : "total",
		prof_str(p, pm->type));
	fprintf(f, "%8s %12s %8s %12s  %s\n", "self%", "self", "total%", "total", "function");
	bool ns = is_ns(p, metric);
	char b1[64], b2[64];
	for (size_t r = 0; r < n && r < top; r++) {
		size_t i = rows[r];
		int64_t s = fs->self[i * nm + (size_t)metric], t = fs->total[i * nm + (size_t)metric];
		if (!(by_self ? s : t))
			break;
		fprintf(f, "%7.2f%% %12s %7.2f%% %12s  ", pct(s, total),
			value(b1, sizeof(b1), s, ns), pct(t, total), value(b2, sizeof(b2), t, ns));
		frame_name(f, p, fs->frame[i]);
		fputc('\n', f);
	}
	free(rows);
	free(key);
}

struct tree {
	FILE *f;
	const int64_t *totals;
	size_t nm;
	int metric;
	int64_t total, cut;
};

static int tree_enter(const struct prof *p, uint32_t node, void *ctx)
{
	struct tree *t = ctx;
	if (node == PROF_ROOT)
		return 0;
	const struct prof_node *n = prof_node_at(p, node);
	int64_t tot = t->totals[(size_t)node * t->nm + (size_t)t->metric];
	if (tot < t->cut || !tot)
		return 1;
	int64_t self = prof_self(p, node)[t->metric];
	fprintf(t->f, "%7.2f%% %7.2f%%  %*s", pct(tot, t->total), pct(self, t->total),
		(int)(2 * (n->depth - 1)), "");
	frame_name(t->f, p, n->frame);
	fputc('\n', t->f);
	return 0;
}

static int print_tree(FILE *f, const struct prof *p, int metric, double threshold)
{
	struct prof *merged;
	int rc = prof_merge_callsites(p, &merged);
	if (rc)
		return rc;
	int64_t *totals;
	if ((rc = prof_totals(merged, &totals))) {
		prof_free(merged);
		return rc;
	}
	struct tree t = { f, totals, prof_nmetrics(merged), metric, 0, 0 };
	t.total = totals[(size_t)metric];
	t.cut = (int64_t)((double)t.total * threshold / 100.0);
	fprintf(f, "\nCall tree (%s; nodes under %.2f%% of the total hidden):\n",
		prof_str(p, prof_metric(p, (size_t)metric)->type), threshold);
	fprintf(f, "%8s %8s  %s\n", "total%", "self%", "function");
	rc = prof_walk(merged, tree_enter, NULL, &t);
	free(totals);
	prof_free(merged);
	return rc;
}

/* The body of the report for p: the call tree or the two tables. */
static int body(FILE *f, const struct prof *p, const struct rep_text_opts *o, int metric,
		const int64_t *total)
{
	if (o->tree)
		return print_tree(f, p, metric, o->threshold >= 0 ? o->threshold : 0.5);
	struct prof_funcs fs;
	int rc = prof_func_stats(p, &fs);
	if (!rc) {
		table(f, p, &fs, metric, true, o->top ? o->top : 20, total[metric]);
		table(f, p, &fs, metric, false, o->top ? o->top : 20, total[metric]);
		prof_funcs_free(&fs);
	}
	return rc;
}

/* Per thread, the total of every metric over its samples: nthreads * nmetrics values. */
static int64_t *thread_totals(const struct prof *p)
{
	size_t nm = prof_nmetrics(p);
	int64_t *t = calloc((prof_nthreads(p) ? prof_nthreads(p) : 1) * nm, sizeof(*t));
	for (size_t i = 0; t && i < prof_nsamples(p); i++) {
		const int64_t *w = prof_sample_weights(p, i);
		int64_t *row = t + (size_t)prof_sample_at(p, i)->thread * nm;
		for (size_t m = 0; m < nm; m++)
			row[m] += w[m];
	}
	return t;
}

/* Per thread, its samples whose GIL state is known and those of them that held the GIL:
 * 2 * nthreads counts. Whether any sample's is known. */
static bool thread_gil(const struct prof *p, uint64_t *g)
{
	bool any = false;
	for (size_t i = 0; i < prof_nsamples(p); i++) {
		const struct prof_sample *s = prof_sample_at(p, i);
		if (s->gil == PROF_GIL_UNKNOWN)
			continue;
		g[2 * (size_t)s->thread]++;
		g[2 * (size_t)s->thread + 1] += s->gil == PROF_GIL_HELD;
		any = true;
	}
	return any;
}

/* The summary table of threads: each metric's total, and with both CPU and off-CPU
 * nanoseconds, their sum: the thread's wall-clock time as the recording saw it; for a
 * Python recording, the share of each thread's samples that held the GIL (gil). */
static void thread_table(FILE *f, const struct prof *p, const uint32_t *order,
			 const int64_t *tt, uint64_t *gil)
{
	size_t nm = prof_nmetrics(p);
	int on = prof_find_metric(p, "cpu", "nanoseconds");
	int off = prof_find_metric(p, PROF_OFF_CPU_METRIC, "nanoseconds");
	bool any_gil = thread_gil(p, gil);
	char b[64];
	fprintf(f, "\nThreads:\n%8s %8s  %-16s", "pid", "tid", "name");
	for (size_t m = 0; m < nm; m++)
		fprintf(f, " %14s", prof_str(p, prof_metric(p, m)->type));
	if (on >= 0 && off >= 0)
		fprintf(f, " %14s", "wall-clock");
	if (any_gil)
		fprintf(f, " %14s", "GIL held");
	fputc('\n', f);
	for (size_t i = 0; i < prof_nthreads(p); i++) {
		const struct prof_thread *t = prof_thread_at(p, order[i]);
		const int64_t *row = tt + (size_t)order[i] * nm;
		fprintf(f, "%8u %8u  %-16s", t->pid, t->tid, prof_str(p, t->name));
		for (size_t m = 0; m < nm; m++)
			fprintf(f, " %14s", value(b, sizeof(b), row[m], is_ns(p, (int)m)));
		if (on >= 0 && off >= 0)
			fprintf(f, " %14s", value(b, sizeof(b), row[on] + row[off], true));
		const uint64_t *g = gil + 2 * (size_t)order[i];
		if (any_gil)
			fprintf(f, " %14s", g[0] ? rep_share(b, sizeof(b), g[1], g[0]) : "-");
		fputc('\n', f);
	}
}

/* --threads: the summary table, then the body of the report once per thread. */
static int by_thread(FILE *f, const struct prof *p, const struct rep_text_opts *o, int metric)
{
	if (!prof_nthreads(p))
		return rep_no_threads();
	uint32_t *order = rep_threads_sorted(p);
	int64_t *tt = thread_totals(p);
	uint64_t *gil = calloc(2 * prof_nthreads(p), sizeof(*gil));
	int rc = order && tt && gil ? 0 : err_set(-ENOMEM, "out of memory");
	if (!rc)
		thread_table(f, p, order, tt, gil);
	free(gil);
	for (size_t i = 0; !rc && i < prof_nthreads(p); i++) {
		const struct prof_thread *t = prof_thread_at(p, order[i]);
		struct prof *tp;
		if ((rc = prof_thread_profile(p, order[i], &tp)))
			break;
		fprintf(f, "\nThread %s (pid %u, tid %u):\n", prof_str(p, t->name), t->pid, t->tid);
		rc = body(f, tp, o, metric, tt + (size_t)order[i] * prof_nmetrics(p));
		prof_free(tp);
	}
	free(order);
	free(tt);
	return rc;
}

int rep_text(FILE *f, const struct prof *p, const struct rep_text_opts *o)
{
	rep_quality_summary(f, p);
	int metric = o->metric < 0 ? prof_info(p)->default_metric : o->metric;
	if ((size_t)metric >= prof_nmetrics(p))
		return err_set(-EINVAL, "the profile has no metric %d", metric);
	/* one per metric; their number comes from the input, so not on the stack */
	int64_t *total = calloc(prof_nmetrics(p), sizeof(*total));
	if (!total)
		return err_set(-ENOMEM, "out of memory");
	prof_grand_total(p, total);
	header(f, p, metric, total);
	int rc = o->threads ? by_thread(f, p, o, metric) : body(f, p, o, metric, total);
	free(total);
	if (!rc && ferror(f))
		rc = err_set(-EIO, "write error");
	return rc;
}
