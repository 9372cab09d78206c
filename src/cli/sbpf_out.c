/*
 * Writing the sBPF profile outputs (see sbpf_out.h). Every writer is deterministic, so two
 * runs of the same input give byte-identical files.
 */
#include "cli/sbpf_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "cli/profile_input.h"
#include "profile/profile.h"
#include "report/annotate.h"
#include "report/flamegraph.h"
#include "report/report.h"
#include "sbpf/vm.h"

bool cli_sbpf_outputs_any(const struct cli_sbpf_outputs *o)
{
	return o->pprof || o->flamegraph || o->folded || o->annotate || o->report;
}

bool cli_sbpf_outputs_option(struct cli_sbpf_outputs *o, int c, const char *arg)
{
	switch (c) {
	case 'o': o->pprof = arg; return true;
	case 'F': o->flamegraph = arg; return true;
	case 'f': o->folded = arg; return true;
	case 'A': o->annotate = arg; return true;
	default: return false;
	}
}

enum kind { PPROF, FLAME, FOLDED, ANNOTATE, REPORT };

/* The named function with the most self CU (annotate needs a symbol to find the code: an
 * unnamed function of a stripped program cannot be listed), first in frame order on ties;
 * NULL when there is none. */
static const char *hottest_named(const struct prof *p)
{
	struct prof_funcs f;
	if (prof_func_stats(p, &f))
		return NULL;
	const char *best = NULL;
	int64_t most = 0;
	size_t nm = prof_nmetrics(p);
	for (size_t i = 0; i < f.n; i++) {
		const struct prof_frame *fr = prof_frame_at(p, f.frame[i]);
		if (fr->module == PROF_NONE || !fr->function || f.self[i * nm] <= most)
			continue;
		most = f.self[i * nm];
		best = prof_str(p, fr->label);
	}
	prof_funcs_free(&f);
	return best;
}

static int write_one(FILE *f, enum kind k, const struct cli_sbpf_outputs *o, const struct prof *p)
{
	switch (k) {
	case PPROF: return rep_pprof(f, p);
	case FLAME: {
		struct rep_flame_opts fo;
		rep_flame_opts_init(&fo);
		fo.title = o->title;
		fo.subtitle = prof_str(p, prof_metric(p, 0)->type);
		return rep_flamegraph(f, p, &fo);
	}
	case FOLDED: {
		struct rep_folded_opts fo = { .metric = -1, .annotate_kinds = false };
		return rep_folded(f, p, &fo);
	}
	case ANNOTATE: {
		struct rep_annot_opts ao = { .metric = -1, .html = true, .function = hottest_named(p) };
		if (!ao.function)
			return err_set(-ENOENT, "no named function to annotate in the profile");
		return rep_annotate(f, p, &ao);
	}
	case REPORT: {
		struct rep_text_opts to = { .metric = -1 };
		return rep_text(f, p, &to);
	}
	}
	return 0;
}

/* One output of one run, for cli_write_output's one context. */
struct job {
	enum kind k;
	const struct cli_sbpf_outputs *o;
	const struct prof *p;
};

static int write_job(FILE *f, void *ctx)
{
	const struct job *j = ctx;
	return write_one(f, j->k, j->o, j->p);
}

int cli_sbpf_outputs_write(const struct cli_sbpf_outputs *o, const struct prof *p)
{
	const char *paths[] = { o->pprof, o->flamegraph, o->folded, o->annotate, o->report };
	for (int k = PPROF; k <= REPORT; k++) {
		struct job j = { (enum kind)k, o, p };
		int rc = paths[k] ? cli_write_output(paths[k], paths[k], write_job, &j) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

void cli_sbpf_log_print(FILE *f, const char *line, bool json)
{
	char *bytes = malloc(strlen(line) + 1);
	size_t n = bytes ? sbpf_log_decode(line, bytes) : 0;
	if (!bytes) /* out of memory: the line as stored, a NUL shown as U+FFFD */
		json ? json_print_string(f, line) : (void)fputs(line, f);
	else if (json)
		json_print_bytes(f, bytes, n);
	else
		fwrite(bytes, 1, n, f);
	free(bytes);
}
