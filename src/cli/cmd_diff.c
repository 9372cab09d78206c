/*
 * tally diff: what changed between two profiles, per function, and optionally as a
 * differential flame graph.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/profile_cmd.h"
#include "profile/profile.h"
#include "report/flamegraph.h"
#include "report/report.h"

static const char help[] =
	"usage: tally diff [options] BEFORE AFTER\n"
	"\n"
	"Compares two profiles (pprof, folded stacks or perf.data; detected from the content)\n"
	"function by function: self and total weight before and after, the change and the\n"
	"relative change, biggest change of self weight first. Functions are matched by name,\n"
	"module, source file and kind, so two builds of a program compare. With deterministic\n"
	"profiles (sBPF compute units) every difference shown is real, to the unit.\n"
	"\n"
	"options:\n"
	"  --metric TYPE          compare this metric (default: each profile's default)\n"
	"  --top N                show at most N functions (default: all that changed)\n"
	"  --flamegraph OUT.svg   also write a differential flame graph: AFTER's shape, red\n"
	"                         where self weight grew, blue where it shrank\n"
	"  --normalize            flame graph: scale BEFORE to AFTER's total first (for\n"
	"                         sampled profiles of different lengths)\n"
	"  -o, --output FILE      write the table there instead of stdout\n"
	"  --unwind METHOD        perf.data inputs: how stacks are recovered: auto (DWARF CFI,\n"
	"                         frame pointers as fallback; the default), cfi or fp (frame\n"
	"                         pointers only), for stack copies: stacks tally record\n"
	"                         unwound while recording are read as stored\n";

enum { OPT_TOP = 256, OPT_FLAME, OPT_NORMALIZE };

static const struct option options[] = {
	{ "top", required_argument, NULL, OPT_TOP },
	{ "flamegraph", required_argument, NULL, OPT_FLAME },
	{ "normalize", no_argument, NULL, OPT_NORMALIZE },
	{ NULL, 0, NULL, 0 },
};

struct diff_args {
	struct rep_diff_opts o;
	const char *svg; /* --flamegraph */
	bool normalize;
};

static int option(int c, const char *arg, void *ctx)
{
	struct diff_args *d = ctx;
	char *end;
	switch (c) {
	case OPT_FLAME: d->svg = arg; return 0;
	case OPT_NORMALIZE: d->normalize = true; return 0;
	default: /* OPT_TOP */
		d->o.top = (unsigned)strtoul(arg, &end, 10);
		if (*end || !*arg || !d->o.top)
			return cli_usage(&cli_cmd_diff, "--top: not a row count: %s", arg);
		return 0;
	}
}

/* The profiles a diff writes from, for cli_write_output's one context. */
struct diff_job {
	const struct prof *a, *b;
	const struct diff_args *d;
};

static int write_table(FILE *f, void *ctx)
{
	const struct diff_job *job = ctx;
	return rep_diff(f, job->a, job->b, &job->d->o);
}

static int write_flamegraph(FILE *f, void *ctx)
{
	const struct diff_job *job = ctx;
	const struct rep_diff_opts *o = &job->d->o;
	struct prof *model;
	int rc = prof_diff(job->a, o->metric_before, job->b, o->metric_after, &model);
	if (rc)
		return rc;
	struct rep_flame_opts fo;
	rep_flame_opts_init(&fo);
	fo.normalize = job->d->normalize;
	rc = rep_flamegraph_diff(f, model, &fo);
	prof_free(model);
	return rc;
}

static int run(int argc, char **argv)
{
	struct diff_args d = { .o = { -1, -1, 0 } };
	const struct cli_profile_cmd pc = {
		.cmd = &cli_cmd_diff, .shortopts = "", .options = options,
		.option = option, .ctx = &d, .two = true,
	};
	struct cli_profile_args args;
	int rc = cli_profile_args(&pc, argc, argv, &args);
	if (rc)
		return rc;
	struct prof *a = NULL, *b = NULL;
	rc = cli_load_profile(args.paths[0], args.unwind, NULL, args.metric, &a,
			      &d.o.metric_before);
	if (!rc)
		rc = cli_load_profile(args.paths[1], args.unwind, NULL, args.metric, &b,
				      &d.o.metric_after);
	struct diff_job job = { a, b, &d };
	if (!rc)
		rc = cli_write_output(args.output, args.paths[1], write_table, &job);
	if (!rc && d.svg)
		rc = cli_write_output(d.svg, args.paths[1], write_flamegraph, &job);
	prof_free(a);
	prof_free(b);
	return rc ? cli_fail_err() : CLI_OK;
}

const struct cli_cmd cli_cmd_diff = {
	.name = "diff",
	.summary = "compare two profiles: per-function change, differential flame graph",
	.help = help,
	.run = run,
};
