/*
 * tally export: a profile file converted to another format (folded stacks, pprof,
 * speedscope).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "cli/cli.h"
#include "cli/profile_input.h"
#include "profile/profile.h"
#include "report/report.h"

static const char help[] =
	"usage: tally export -f FORMAT [options] FILE\n"
	"\n"
	"Writes the profile in FILE (pprof, folded stacks or perf.data; detected from the\n"
	"content, '-' for stdin) in another format. The same input gives the same bytes.\n"
	"\n"
	"formats:\n"
	"  folded      'root;caller;leaf COUNT' lines (FlameGraph's format), one metric\n"
	"  pprof       gzipped profile.proto, for go tool pprof and other pprof readers:\n"
	"              every metric, mappings with build-ids, inline frames as Line entries\n"
	"  speedscope  speedscope's JSON file format (https://www.speedscope.app), one\n"
	"              sampled profile per metric\n"
	"\n"
	"options:\n"
	"  -f, --format FORMAT  folded, pprof or speedscope (required)\n"
	"  -o, --output FILE    write there instead of stdout\n"
	"  --kinds              folded: suffix inline frames with _[i] and kernel frames with\n"
	"                       _[k] (tally reads them back)\n"
	"  --metric TYPE        folded: the metric to write (default: the profile's default)\n"
	"  --focus REGEX        keep only samples whose stack has a function matching REGEX\n"
	"  --hide REGEX         remove matching functions from stacks (cost goes to callers)\n"
	"  --fold-recursion     fold recursive calls into their first occurrence\n"
	"  --unwind METHOD      perf.data input: how stacks are recovered: auto (DWARF CFI,\n"
	"                       frame pointers as fallback; the default), cfi or fp (frame\n"
	"                       pointers only)\n";

enum { OPT_KINDS = 256, OPT_METRIC, OPT_FOCUS, OPT_HIDE, OPT_FOLD, OPT_UNWIND };

static const struct option options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "kinds", no_argument, NULL, OPT_KINDS },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "hide", required_argument, NULL, OPT_HIDE },
	{ "fold-recursion", no_argument, NULL, OPT_FOLD },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ NULL, 0, NULL, 0 },
};

static int write_format(FILE *f, const char *format, const struct prof *p, int metric,
			bool kinds, const char *path)
{
	if (!strcmp(format, "pprof"))
		return rep_pprof(f, p);
	if (!strcmp(format, "speedscope")) {
		const char *base = strrchr(path, '/');
		return rep_speedscope(f, p, base ? base + 1 : path);
	}
	struct rep_folded_opts o = { metric, kinds };
	return rep_folded(f, p, &o);
}

static int run(int argc, char **argv)
{
	const char *output = NULL, *format = NULL, *metric = NULL, *focus = NULL, *hide = NULL;
	bool kinds = false, fold = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:", options, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case OPT_KINDS: kinds = true; break;
		case OPT_METRIC: metric = optarg; break;
		case OPT_FOCUS: focus = optarg; break;
		case OPT_HIDE: hide = optarg; break;
		case OPT_FOLD: fold = true; break;
		case OPT_UNWIND:
			if (cli_set_unwind(optarg))
				return cli_usage(&cli_cmd_export, "--unwind: expected auto, cfi or fp: %s",
						 optarg);
			break;
		default:
			return cli_usage(&cli_cmd_export, "bad option: %s", argv[optind - 1]);
		}
	}
	if (!format)
		return cli_usage(&cli_cmd_export, "-f FORMAT is required (folded, pprof, speedscope)");
	if (strcmp(format, "folded") && strcmp(format, "pprof") && strcmp(format, "speedscope"))
		return cli_usage(&cli_cmd_export, "unknown format: %s (folded, pprof, speedscope)",
				 format);
	if (optind != argc - 1)
		return cli_usage(&cli_cmd_export, "expected one profile FILE");
	const char *path = argv[optind];
	struct prof *p;
	if (cli_read_profile(path, &p))
		return cli_fail_err();
	int rc = cli_filter_profile(&p, focus, hide, fold);
	int m = rc ? -1 : cli_pick_metric(p, path, metric);
	if (m < -1)
		rc = m;
	FILE *f = rc ? NULL : cli_open_output(output);
	if (f) {
		rc = write_format(f, format, p, m, kinds, path);
		if (rc)
			err_prefix(rc, "%s", output ? output : "stdout");
		int crc = cli_close_output(f, output);
		rc = rc ? rc : crc;
	}
	prof_free(p);
	return f && !rc ? CLI_OK : cli_fail_err();
}

const struct cli_cmd cli_cmd_export = {
	.name = "export",
	.summary = "convert a profile: folded stacks, pprof, speedscope JSON",
	.help = help,
	.run = run,
};
