/*
 * tally report: the text report of a profile file (tables of the top functions, or the
 * call tree).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/profile_input.h"
#include "profile/profile.h"
#include "replay/replay.h"
#include "report/report.h"

static const char help[] =
	"usage: tally report [options] [FILE]\n"
	"\n"
	"Prints a text report of the profile in FILE (pprof, folded stacks or perf.data, also\n"
	"the stream perf record -o - writes; detected from the content; '-' for stdin; default\n"
	"perf.data, as tally record names its output): where it came from, the total of each\n"
	"metric, the duration and the figures the recorder attached (unwind quality), then the\n"
	"top functions by self weight and by total weight with percentages of the whole.\n"
	"A perf.data (or a profile exported from one) starts with the unwind quality: the\n"
	"shares of complete, truncated and single-frame stacks, never rounded to 0% or 100%\n"
	"unless exact, and the average depth; the figures below it give the counts, why stacks\n"
	"were truncated and the modules where they stopped most often.\n"
	"A function's total counts each sample once even when it recurses. Frames that are\n"
	"not plain native functions carry their kind: [inline], [kernel], [vm], [syscall]...\n"
	"\n"
	"options:\n"
	"  --top N              rows per table (default 20)\n"
	"  --tree               print the call tree instead of the tables\n"
	"  --threshold PCT      --tree: hide subtrees under PCT% of the total (default 0.5)\n"
	"  --metric TYPE        report this metric (e.g. samples, cpu, cu); default: the\n"
	"                       profile's default\n"
	"  --focus REGEX        keep only samples whose stack has a function matching REGEX\n"
	"  --hide REGEX         remove matching functions from stacks (cost goes to callers)\n"
	"  --fold-recursion     fold recursive calls into their first occurrence\n"
	"  --unwind METHOD      perf.data input: how stacks are recovered: auto (DWARF CFI,\n"
	"                       frame pointers as fallback; the default), cfi or fp (frame\n"
	"                       pointers only)\n"
	"  -o, --output FILE    write there instead of stdout\n";

enum { OPT_TOP = 256, OPT_TREE, OPT_THRESHOLD, OPT_METRIC, OPT_FOCUS, OPT_HIDE, OPT_FOLD,
       OPT_UNWIND };

static const struct option options[] = {
	{ "top", required_argument, NULL, OPT_TOP },
	{ "tree", no_argument, NULL, OPT_TREE },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "hide", required_argument, NULL, OPT_HIDE },
	{ "fold-recursion", no_argument, NULL, OPT_FOLD },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

static int run(int argc, char **argv)
{
	struct rep_text_opts o = { .metric = -1, .threshold = -1 };
	const char *output = NULL, *metric = NULL;
	struct cli_filters filters = { 0 };
	char *end;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case OPT_TREE: o.tree = true; break;
		case OPT_METRIC: metric = optarg; break;
		case OPT_FOCUS: filters.focus = optarg; break;
		case OPT_HIDE: filters.hide = optarg; break;
		case OPT_FOLD: filters.fold = true; break;
		case OPT_UNWIND:
			if (cli_unwind_option(&cli_cmd_report, optarg))
				return CLI_USAGE;
			break;
		case OPT_TOP:
			o.top = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !*optarg || !o.top || o.top > 1000000)
				return cli_usage(&cli_cmd_report, "--top: not a row count: %s", optarg);
			break;
		case OPT_THRESHOLD:
			o.threshold = strtod(optarg, &end);
			if (*end || !*optarg || !(o.threshold >= 0 && o.threshold <= 100))
				return cli_usage(&cli_cmd_report, "--threshold: not a percentage: %s",
						 optarg);
			break;
		default:
			return cli_usage(&cli_cmd_report, "bad option: %s", argv[optind - 1]);
		}
	}
	if (optind < argc - 1)
		return cli_usage(&cli_cmd_report, "expected one profile FILE");
	const char *path = optind < argc ? argv[optind] : "perf.data";
	struct prof *p;
	if (cli_load_profile(path, &filters, metric, &p, &o.metric))
		return cli_fail_err();
	int rc = 0;
	FILE *f = cli_open_output(output);
	if (f) {
		replay_quality_summary(f, p);
		rc = rep_text(f, p, &o);
		int crc = cli_close_output(f, output);
		rc = rc ? rc : crc;
	}
	prof_free(p);
	return f && !rc ? CLI_OK : cli_fail_err();
}

const struct cli_cmd cli_cmd_report = {
	.name = "report",
	.summary = "text report of a profile: top functions, call tree, unwind quality",
	.help = help,
	.run = run,
};
