/*
 * tally flamegraph: a profile file (pprof, folded stacks, perf.data) as an interactive SVG
 * flame graph.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/profile_input.h"
#include "base/err.h"
#include "profile/profile.h"
#include "report/flamegraph.h"

static const char help[] =
	"usage: tally flamegraph [options] FILE\n"
	"\n"
	"Draws the profile in FILE (pprof, folded stacks or perf.data; detected from the\n"
	"content, '-' for stdin) as one self-contained SVG flame graph. Open it in a browser:\n"
	"hover a frame for its name, weight and share; click to zoom into it (click an ancestor\n"
	"or 'Reset Zoom' to go back); 'Search' (or Ctrl-F, '/') highlights the functions whose\n"
	"name matches a regular expression and shows the share they cover; Escape resets.\n"
	"Inlined frames have a dashed border; colours depend only on the function's name.\n"
	"\n"
	"options:\n"
	"  -o, --output OUT.svg  write there instead of stdout\n"
	"  --title TEXT          the title (default: Flame Graph)\n"
	"  --subtitle TEXT       a second line under the title\n"
	"  --inverted            icicle graph: callers at the top, callees below\n"
	"  --minwidth PX         leave out frames narrower than PX pixels (default 0.1; 0 keeps\n"
	"                        all, which can make huge profiles slow in a browser)\n"
	"  --width PX            image width (default 1200)\n"
	"  --metric TYPE         which metric gives the widths (e.g. samples, cpu, cu);\n"
	"                        default: the profile's default\n"
	"  --unwind METHOD       perf.data input: how stacks are recovered: auto (DWARF CFI,\n"
	"                        frame pointers as fallback; the default), cfi or fp (frame\n"
	"                        pointers only)\n";

enum { OPT_TITLE = 256, OPT_SUBTITLE, OPT_INVERTED, OPT_MINWIDTH, OPT_WIDTH, OPT_METRIC,
       OPT_UNWIND };

static const struct option options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ NULL, 0, NULL, 0 },
};

static int parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

struct flame_job {
	struct prof *p;
	const struct rep_flame_opts *o;
};

static int write_flamegraph(FILE *f, void *ctx)
{
	struct flame_job *job = ctx;
	return rep_flamegraph(f, job->p, job->o) ? -EINVAL : 0;
}

static int run(int argc, char **argv)
{
	struct rep_flame_opts o;
	rep_flame_opts_init(&o);
	const char *output = NULL, *metric = NULL;
	double v;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case OPT_TITLE: o.title = optarg; break;
		case OPT_SUBTITLE: o.subtitle = optarg; break;
		case OPT_INVERTED: o.inverted = true; break;
		case OPT_METRIC: metric = optarg; break;
		case OPT_UNWIND:
			if (cli_set_unwind(optarg))
				return cli_usage(&cli_cmd_flamegraph, "--unwind: expected auto, cfi or fp: %s",
						 optarg);
			break;
		case OPT_MINWIDTH:
			if (parse_number(optarg, 0, 1e6, &o.minwidth))
				return cli_usage(&cli_cmd_flamegraph, "--minwidth: not a width: %s", optarg);
			break;
		case OPT_WIDTH:
			if (parse_number(optarg, 200, 100000, &v))
				return cli_usage(&cli_cmd_flamegraph, "--width: not in 200..100000: %s", optarg);
			o.width = (unsigned)v;
			break;
		default:
			return cli_usage(&cli_cmd_flamegraph, "unknown option: %s", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cli_usage(&cli_cmd_flamegraph, "expected one profile file");
	const char *path = argv[optind];
	struct prof *p;
	if (cli_read_profile(path, &p))
		return cli_fail_err();
	int rc = CLI_FAIL;
	int m = cli_pick_metric(p, path, metric);
	if (m < -1) {
		cli_fail_err();
		goto out;
	}
	if (metric)
		o.metric = m;
	struct flame_job job = { p, &o };
	rc = cli_write_output(output, path, write_flamegraph, &job) ? cli_fail_err() : CLI_OK;
out:
	prof_free(p);
	return rc;
}

const struct cli_cmd cli_cmd_flamegraph = {
	.name = "flamegraph",
	.summary = "draw a profile as an interactive SVG flame graph",
	.help = help,
	.run = run,
};
