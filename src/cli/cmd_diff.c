/*
 * tally diff: what changed between two profiles, per function, and optionally as a
 * differential flame graph.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/profile_input.h"
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
	"                         pointers only)\n";

enum { OPT_METRIC = 256, OPT_TOP, OPT_FLAME, OPT_NORMALIZE, OPT_UNWIND };

static const struct option options[] = {
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "flamegraph", required_argument, NULL, OPT_FLAME },
	{ "normalize", no_argument, NULL, OPT_NORMALIZE },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

static int flamegraph(const struct prof *a, const struct prof *b, const struct rep_diff_opts *d,
		      const char *out, bool normalize)
{
	struct prof *model;
	int rc = prof_diff(a, d->metric_before, b, d->metric_after, &model);
	if (rc)
		return rc;
	FILE *f = cli_open_output(out);
	if (!f) {
		prof_free(model);
		return -1;
	}
	struct rep_flame_opts o;
	rep_flame_opts_init(&o);
	o.normalize = normalize;
	rc = rep_flamegraph_diff(f, model, &o);
	int crc = cli_close_output(f, out);
	prof_free(model);
	return rc ? rc : crc;
}

static int run(int argc, char **argv)
{
	struct rep_diff_opts o = { -1, -1, 0 };
	const char *output = NULL, *metric = NULL, *svg = NULL;
	bool normalize = false;
	char *end;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case OPT_METRIC: metric = optarg; break;
		case OPT_FLAME: svg = optarg; break;
		case OPT_NORMALIZE: normalize = true; break;
		case OPT_UNWIND:
			if (cli_set_unwind(optarg))
				return cli_usage(&cli_cmd_diff, "--unwind: expected auto, cfi or fp: %s",
						 optarg);
			break;
		case OPT_TOP:
			o.top = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !*optarg || !o.top)
				return cli_usage(&cli_cmd_diff, "--top: not a row count: %s", optarg);
			break;
		default:
			return cli_usage(&cli_cmd_diff, "bad option: %s", argv[optind - 1]);
		}
	}
	if (optind != argc - 2)
		return cli_usage(&cli_cmd_diff, "expected two profiles: BEFORE AFTER");
	struct prof *a = NULL, *b = NULL;
	int rc = cli_read_profile(argv[optind], &a);
	if (!rc)
		rc = cli_read_profile(argv[optind + 1], &b);
	if (!rc && (o.metric_before = cli_pick_metric(a, argv[optind], metric)) < -1)
		rc = o.metric_before;
	if (!rc && (o.metric_after = cli_pick_metric(b, argv[optind + 1], metric)) < -1)
		rc = o.metric_after;
	FILE *f = rc ? NULL : cli_open_output(output);
	if (f) {
		rc = rep_diff(f, a, b, &o);
		int crc = cli_close_output(f, output);
		rc = rc ? rc : crc;
		if (!rc && svg)
			rc = flamegraph(a, b, &o, svg, normalize);
	}
	prof_free(a);
	prof_free(b);
	return f && !rc ? CLI_OK : cli_fail_err();
}

const struct cli_cmd cli_cmd_diff = {
	.name = "diff",
	.summary = "compare two profiles: per-function change, differential flame graph",
	.help = help,
	.run = run,
};
