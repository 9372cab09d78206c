/*
 * speedscope export (https://www.speedscope.app/file-format-schema.json): shared frames
 * and one "sampled" profile per metric, each sample a stack of frame indexes from the root
 * with its weight (a calling context with its self weight); with threads, one per thread
 * and metric instead, each sample one of the thread's logged samples, in the log's order. Call sites are merged first: speedscope has no notion of pcs. Frames are
 * numbered in order of first use during the canonical walk, so output is reproducible.
 */
#include "base/json.h"
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "profile/profile.h"
#include "tally/tally.h"

struct ss {
	FILE *f;
	uint32_t *index; /* by frame: speedscope index + 1, 0 before first use */
	uint32_t nused;
	uint32_t *order; /* speedscope index -> frame */
	int64_t *total;  /* by metric */
	int metric;
	bool first;
	size_t nprofiles; /* written so far */
	bool weights; /* second pass over the same nodes: weights instead of stacks */
};

static int number_frames(const struct prof *p, uint32_t node, void *ctx)
{
	struct ss *s = ctx;
	uint32_t fr = prof_node_at(p, node)->frame;
	if (node != PROF_ROOT && !s->index[fr]) {
		s->order[s->nused] = fr;
		s->index[fr] = ++s->nused;
	}
	return 0;
}

/* The stack of node, from the root, as speedscope frame indexes. */
static int print_stack(struct ss *s, const struct prof *p, uint32_t node)
{
	const struct prof_node *n = prof_node_at(p, node);
	uint32_t depth = n->depth, stack[256], *path = depth <= 256 ? stack : malloc(depth * sizeof(*path));
	if (!path)
		return err_set(-ENOMEM, "out of memory");
	for (uint32_t x = node, d = depth; x != PROF_ROOT; x = prof_node_at(p, x)->parent)
		path[--d] = s->index[prof_node_at(p, x)->frame] - 1;
	fputc('[', s->f);
	for (uint32_t d = 0; d < depth; d++)
		fprintf(s->f, d ? ",%" PRIu32 : "%" PRIu32, path[d]);
	fputc(']', s->f);
	if (path != stack)
		free(path);
	return 0;
}

static void separate(struct ss *s)
{
	fputs(s->first ? "\n" : ",\n", s->f);
	s->first = false;
}

static int sample(const struct prof *p, uint32_t node, void *ctx)
{
	struct ss *s = ctx;
	int64_t w = node == PROF_ROOT ? 0 : prof_self(p, node)[s->metric];
	if (w <= 0)
		return 0;
	separate(s);
	if (s->weights) {
		fprintf(s->f, "%" PRId64, w);
		return 0;
	}
	return print_stack(s, p, node);
}

static void frames(struct ss *s, const struct prof *p)
{
	fputs("\"shared\":{\"frames\":[", s->f);
	for (uint32_t i = 0; i < s->nused; i++) {
		const struct prof_frame *fr = prof_frame_at(p, s->order[i]);
		char name[4200];
		if (fr->kind != PROF_NATIVE && fr->kind != PROF_TRUNCATED)
			snprintf(name, sizeof(name), "%.4000s [%s]", prof_frame_label(p, s->order[i]),
				 prof_kind_name(fr->kind));
		else
			snprintf(name, sizeof(name), "%.4000s", prof_frame_label(p, s->order[i]));
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", s->f);
		json_print_string(s->f, name);
		if (fr->file) {
			fputs(",\"file\":", s->f);
			json_print_string(s->f, prof_str(p, fr->file));
		}
		if (fr->line)
			fprintf(s->f, ",\"line\":%" PRIu32, fr->line);
		fputc('}', s->f);
	}
	fputs("]},\n", s->f);
}

static const char *unit_of(const char *u)
{
	static const char *const known[] = { "nanoseconds", "microseconds", "milliseconds",
					     "seconds", "bytes" };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(u, known[i]))
			return known[i];
	return "none";
}

static void profile_head(struct ss *s, const struct prof *p, int metric, const char *name,
			 int64_t total)
{
	const struct prof_metric *m = prof_metric(p, (size_t)metric);
	char title[4400];
	snprintf(title, sizeof(title), "%.4000s (%.100s)", name, prof_str(p, m->type));
	fputs(s->nprofiles++ ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":",
	      s->f);
	json_print_string(s->f, title);
	fprintf(s->f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRId64 ",\"samples\":[",
		unit_of(prof_str(p, m->unit)), total);
	s->metric = metric;
	s->first = true;
}

/* The tree's self weights of one metric, a sample per calling context. */
static int profile(struct ss *s, const struct prof *p, int metric, const char *name)
{
	profile_head(s, p, metric, name, s->total[metric]);
	s->weights = false;
	int rc = prof_walk(p, sample, NULL, s);
	fputs("],\"weights\":[", s->f);
	s->first = true;
	s->weights = true;
	if (!rc)
		rc = prof_walk(p, sample, NULL, s);
	fputs("]}", s->f);
	return rc;
}

/* One thread's n logged samples (their indexes, in the log's order) in one metric: a
 * profile named after the thread, NAME-PID/TID as folded --threads spells it. */
static int thread_profile(struct ss *s, const struct prof *p, const struct prof_thread *t,
			  const uint32_t *samples, size_t n, int metric)
{
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += prof_sample_weights(p, samples[i])[metric];
	char name[200];
	snprintf(name, sizeof(name), "%.100s-%u/%u", prof_str(p, t->name), t->pid, t->tid);
	profile_head(s, p, metric, name, total);
	int rc = 0;
	for (size_t i = 0; !rc && i < n; i++)
		if (prof_sample_weights(p, samples[i])[metric] > 0) {
			separate(s);
			rc = print_stack(s, p, prof_sample_at(p, samples[i])->node);
		}
	fputs("],\"weights\":[", s->f);
	s->first = true;
	for (size_t i = 0; i < n; i++) {
		int64_t w = prof_sample_weights(p, samples[i])[metric];
		if (w > 0) {
			separate(s);
			fprintf(s->f, "%" PRId64, w);
		}
	}
	fputs("]}", s->f);
	return rc;
}

/* A profile per thread (by pid, tid) and metric: the log's samples grouped by thread. */
static int thread_profiles(struct ss *s, const struct prof *p)
{
	size_t nt = prof_nthreads(p), ns = prof_nsamples(p);
	uint32_t *order = rep_threads_sorted(p);
	size_t *start = calloc(nt + 1, sizeof(*start));
	uint32_t *rank = calloc(nt ? nt : 1, sizeof(*rank));
	uint32_t *grouped = calloc(ns ? ns : 1, sizeof(*grouped));
	int rc = order && start && rank && grouped ? 0 : err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < nt; i++)
		rank[order[i]] = (uint32_t)i;
	for (size_t i = 0; !rc && i < ns; i++)
		start[rank[prof_sample_at(p, i)->thread] + 1]++;
	for (size_t i = 0; !rc && i < nt; i++)
		start[i + 1] += start[i];
	for (size_t i = 0; !rc && i < ns; i++)
		grouped[start[rank[prof_sample_at(p, i)->thread]]++] = (uint32_t)i;
	/* start[r] is now where thread r + 1 begins: thread r's samples end there. */
	for (size_t r = 0; !rc && r < nt; r++) {
		size_t lo = r ? start[r - 1] : 0;
		for (size_t m = 0; !rc && m < prof_nmetrics(p); m++)
			rc = thread_profile(s, p, prof_thread_at(p, order[r]), grouped + lo,
					    start[r] - lo, (int)m);
	}
	free(order);
	free(start);
	free(rank);
	free(grouped);
	return rc;
}

int rep_speedscope(FILE *f, const struct prof *orig, const char *name, bool threads)
{
	if (threads && !prof_nthreads(orig))
		return rep_no_threads();
	struct prof *p;
	int rc = prof_merge_callsites(orig, &p);
	if (rc)
		return rc;
	size_t nf = prof_nframes(p) ? prof_nframes(p) : 1;
	struct ss s = { .f = f };
	s.index = calloc(nf, sizeof(*s.index));
	s.order = calloc(nf, sizeof(*s.order));
	s.total = calloc(prof_nmetrics(p) ? prof_nmetrics(p) : 1, sizeof(*s.total));
	rc = s.index && s.order && s.total ? prof_walk(p, number_frames, NULL, &s)
					   : err_set(-ENOMEM, "out of memory");
	if (!rc) {
		prof_grand_total(p, s.total);
		fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", f);
		frames(&s, p);
		fputs("\"profiles\":[", f);
		if (threads)
			rc = thread_profiles(&s, p);
		for (size_t m = 0; !threads && !rc && m < prof_nmetrics(p); m++)
			rc = profile(&s, p, (int)m, name);
		fputs("],\n\"name\":", f);
		json_print_string(f, name);
		fprintf(f, ",\n\"activeProfileIndex\":%d,\n\"exporter\":\"tally %s\"}\n",
			prof_info(p)->default_metric, TALLY_VERSION);
	}
	free(s.index);
	free(s.order);
	free(s.total);
	prof_free(p);
	if (!rc && ferror(f))
		rc = err_set(-EIO, "write error");
	return rc;
}
