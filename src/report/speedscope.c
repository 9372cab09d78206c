/*
 * speedscope export (https://www.speedscope.app/file-format-schema.json): shared frames
 * and one "sampled" profile per metric, each sample a stack of frame indexes from the root
 * with its weight. Call sites are merged first: speedscope has no notion of pcs. Frames are
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

static int sample(const struct prof *p, uint32_t node, void *ctx)
{
	struct ss *s = ctx;
	int64_t w = node == PROF_ROOT ? 0 : prof_self(p, node)[s->metric];
	if (w <= 0)
		return 0;
	fputs(s->first ? "\n" : ",\n", s->f);
	s->first = false;
	if (s->weights) {
		fprintf(s->f, "%" PRId64, w);
		return 0;
	}
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

static int profile(struct ss *s, const struct prof *p, int metric, const char *name)
{
	const struct prof_metric *m = prof_metric(p, (size_t)metric);
	char title[4400];
	snprintf(title, sizeof(title), "%.4000s (%.100s)", name, prof_str(p, m->type));
	fputs(metric ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":",
	      s->f);
	json_print_string(s->f, title);
	fprintf(s->f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRId64 ",\"samples\":[",
		unit_of(prof_str(p, m->unit)), s->total[metric]);
	s->metric = metric;
	s->first = true;
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

int rep_speedscope(FILE *f, const struct prof *orig, const char *name)
{
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
		for (size_t m = 0; !rc && m < prof_nmetrics(p); m++)
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
