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
#include "cli/profile_cmd.h"
#include "profile/profile.h"
#include "report/flamegraph.h"

static const char help[] =
	"usage: tally flamegraph [options] [FILE]\n"
	"\n"
	"Draws the profile in FILE (pprof, folded stacks or perf.data; detected from the\n"
	"content, '-' for stdin; default perf.data) as one self-contained SVG flame graph.\n"
	"Open it in a browser: hover a frame for its name, weight and share; click to zoom\n"
	"into it (click an ancestor or 'Reset Zoom' to go back); 'Search' (or Ctrl-F, '/')\n"
	"highlights the functions whose name matches a regular expression and shows the share\n"
	"they cover; Escape resets.\n"
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
	"                        pointers only), for stack copies: stacks tally record\n"
	"                        unwound while recording are read as stored\n";

enum { OPT_TITLE = 256, OPT_SUBTITLE, OPT_INVERTED, OPT_MINWIDTH, OPT_WIDTH };

static const struct option options[] = {
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "width", required_argument, NULL, OPT_WIDTH },
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

static int option(int c, const char *arg, void *ctx)
{
	struct rep_flame_opts *o = ctx;
	double v;
	switch (c) {
	case OPT_TITLE: o->title = arg; return 0;
	case OPT_SUBTITLE: o->subtitle = arg; return 0;
	case OPT_INVERTED: o->inverted = true; return 0;
	case OPT_MINWIDTH:
		if (parse_number(arg, 0, 1e6, &o->minwidth))
			return cli_usage(&cli_cmd_flamegraph, "--minwidth: not a width: %s", arg);
		return 0;
	default: /* OPT_WIDTH */
		if (parse_number(arg, 200, 100000, &v))
			return cli_usage(&cli_cmd_flamegraph, "--width: not in 200..100000: %s", arg);
		o->width = (unsigned)v;
		return 0;
	}
}

static int write_flamegraph(FILE *f, const struct prof *p, int metric, void *ctx)
{
	struct rep_flame_opts o = *(const struct rep_flame_opts *)ctx;
	o.metric = metric;
	return rep_flamegraph(f, p, &o) ? -EINVAL : 0;
}

static int run(int argc, char **argv)
{
	struct rep_flame_opts o;
	rep_flame_opts_init(&o);
	const struct cli_profile_cmd pc = {
		.cmd = &cli_cmd_flamegraph, .shortopts = "", .options = options,
		.option = option, .ctx = &o,
	};
	struct cli_profile_args a;
	int rc = cli_profile_args(&pc, argc, argv, &a);
	return rc ? rc : cli_profile_write(&a, write_flamegraph, &o);
}

const struct cli_cmd cli_cmd_flamegraph = {
	.name = "flamegraph",
	.summary = "draw a profile as an interactive SVG flame graph",
	.help = help,
	.run = run,
};
