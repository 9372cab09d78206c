/*
 * tally annotate: per-instruction weights of one function, with disassembly and source.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "cli/cli.h"
#include "cli/profile_input.h"
#include "profile/profile.h"
#include "report/annotate.h"

static const char help[] =
	"usage: tally annotate [options] FILE\n"
	"\n"
	"Shows where in one function the cost landed: its machine code, disassembled (x86-64,\n"
	"i386, aarch64), each instruction with its share of the function's weight, source lines\n"
	"interleaved where the debug information knows them, the hottest instructions\n"
	"highlighted. FILE is a profile (pprof, folded stacks or perf.data; '-' for stdin) whose\n"
	"frames carry addresses; the module's file must be readable (or given with --binary).\n"
	"sBPF programs are listed by address and source line until tally has an sBPF\n"
	"disassembler.\n"
	"\n"
	"options:\n"
	"  --function NAME     the function, as the report names it, or a part of its name\n"
	"                      that only one function has; default: the one with the most\n"
	"                      self weight. An inlined function shows the function it was\n"
	"                      inlined into.\n"
	"  --html              one self-contained HTML page instead of text\n"
	"  -o, --output FILE   write there instead of stdout\n"
	"  --binary FILE       read the machine code from FILE instead of the module path in\n"
	"                      the profile (its build-id is then not checked)\n"
	"  --debug-dir DIR     also look for separate debug files in DIR\n"
	"  --metric TYPE       which metric to show (e.g. samples, cpu, cu)\n"
	"  --color WHEN        auto (default: on a terminal, unless NO_COLOR is set), always,\n"
	"                      never\n"
	"  --unwind METHOD     perf.data input: how stacks are recovered: auto (DWARF CFI,\n"
	"                      frame pointers as fallback; the default), cfi or fp (frame\n"
	"                      pointers only); a function that is only ever a caller is in\n"
	"                      the profile, and --function finds it, only when stacks reach it\n";

enum { OPT_FUNCTION = 256, OPT_HTML, OPT_BINARY, OPT_DEBUG_DIR, OPT_METRIC, OPT_COLOR,
       OPT_UNWIND };

static const struct option options[] = {
	{ "function", required_argument, NULL, OPT_FUNCTION },
	{ "html", no_argument, NULL, OPT_HTML },
	{ "output", required_argument, NULL, 'o' },
	{ "binary", required_argument, NULL, OPT_BINARY },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ NULL, 0, NULL, 0 },
};

static bool colour_wanted(const char *when, const char *output)
{
	if (!strcmp(when, "always"))
		return true;
	if (!strcmp(when, "never") || (output && strcmp(output, "-")))
		return false;
	const char *term = getenv("TERM");
	return isatty(fileno(stdout)) && !getenv("NO_COLOR") && !(term && !strcmp(term, "dumb"));
}

struct annotate_job {
	struct prof *p;
	const struct rep_annot_opts *o;
};

static int write_annotation(FILE *f, void *ctx)
{
	struct annotate_job *job = ctx;
	return rep_annotate(f, job->p, job->o) ? -EINVAL : 0;
}

static int run(int argc, char **argv)
{
	struct rep_annot_opts o = { .metric = -1 };
	const char *output = NULL, *metric = NULL, *when = "auto";
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case OPT_FUNCTION: o.function = optarg; break;
		case OPT_HTML: o.html = true; break;
		case OPT_BINARY: o.binary = optarg; break;
		case OPT_DEBUG_DIR: o.debug_dir = optarg; break;
		case OPT_METRIC: metric = optarg; break;
		case OPT_UNWIND:
			if (cli_set_unwind(optarg))
				return cli_usage(&cli_cmd_annotate, "--unwind: expected auto, cfi or fp: %s",
						 optarg);
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
				return cli_usage(&cli_cmd_annotate, "--color: auto, always or never, not %s", optarg);
			when = optarg;
			break;
		default:
			return cli_usage(&cli_cmd_annotate, "unknown option: %s", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cli_usage(&cli_cmd_annotate, "expected one profile file");
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
	struct annotate_job job = { p, &o };
	o.color = !o.html && colour_wanted(when, output);
	rc = cli_write_output(output, path, write_annotation, &job) ? cli_fail_err() : CLI_OK;
out:
	prof_free(p);
	return rc;
}

const struct cli_cmd cli_cmd_annotate = {
	.name = "annotate",
	.summary = "per-instruction weights of a function, with disassembly and source",
	.help = help,
	.run = run,
};
