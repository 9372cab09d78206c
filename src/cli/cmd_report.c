/*
 * tally report: the text report of a profile file (tables of the top functions, or the
 * call tree).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/profile_cmd.h"
#include "profile/profile.h"
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
	"JIT-compiled code (Node's --perf-basic-prof, a JVM's -XX:+DumpPerfMapAtExit) is named\n"
	"from the process's perf map, the copy tally record kept in FILE.jit/ or else\n"
	"/tmp/perf-PID.map, as [jit] frames (see docs/jit.md).\n"
	"\n"
	"options:\n"
	"  --top N              rows per table (default 20)\n"
	"  --tree               print the call tree instead of the tables\n"
	"  --threshold PCT      --tree: hide subtrees under PCT% of the total (default 0.5)\n"
	"  --threads            a table of the threads (pid, tid, name, each metric's total;\n"
	"                       with off-CPU time, wall-clock = cpu + off-cpu), then the\n"
	"                       tables (or --tree) of each thread, by pid and tid\n"
	"  --metric TYPE        report this metric (e.g. samples, cpu, cu); default: the\n"
	"                       profile's default\n"
	"  --focus REGEX        keep only samples whose stack has a function matching REGEX\n"
	"  --hide REGEX         remove matching functions from stacks (cost goes to callers)\n"
	"  --fold-recursion     fold recursive calls into their first occurrence\n"
	"  --gil STATE          perf.data of Python: keep only the samples whose thread held\n"
	"                       the GIL (held) or did not (not-held) when it was sampled\n"
	"  --unwind METHOD      perf.data input: how stacks are recovered: auto (DWARF CFI,\n"
	"                       frame pointers as fallback; the default), cfi or fp (frame\n"
	"                       pointers only), for stack copies: stacks tally record\n"
	"                       unwound while recording are read as stored\n"
	"  -o, --output FILE    write there instead of stdout\n";

enum { OPT_TOP = 256, OPT_TREE, OPT_THRESHOLD, OPT_THREADS };

static const struct option options[] = {
	{ "top", required_argument, NULL, OPT_TOP },
	{ "tree", no_argument, NULL, OPT_TREE },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ NULL, 0, NULL, 0 },
};

static int option(int c, const char *arg, void *ctx)
{
	struct rep_text_opts *o = ctx;
	char *end;
	switch (c) {
	case OPT_TREE: o->tree = true; return 0;
	case OPT_THREADS: o->threads = true; return 0;
	case OPT_TOP:
		o->top = (unsigned)strtoul(arg, &end, 10);
		if (*end || !*arg || !o->top || o->top > 1000000)
			return cli_usage(&cli_cmd_report, "--top: not a row count: %s", arg);
		return 0;
	default: /* OPT_THRESHOLD */
		o->threshold = strtod(arg, &end);
		if (*end || !*arg || !(o->threshold >= 0 && o->threshold <= 100))
			return cli_usage(&cli_cmd_report, "--threshold: not a percentage: %s", arg);
		return 0;
	}
}

static int write_report(FILE *f, const struct prof *p, int metric, void *ctx)
{
	struct rep_text_opts o = *(const struct rep_text_opts *)ctx;
	o.metric = metric;
	return rep_text(f, p, &o);
}

static int run(int argc, char **argv)
{
	struct rep_text_opts o = { .metric = -1, .threshold = -1 };
	const struct cli_profile_cmd pc = {
		.cmd = &cli_cmd_report, .shortopts = "", .options = options,
		.option = option, .ctx = &o, .filters = true,
	};
	struct cli_profile_args a;
	int rc = cli_profile_args(&pc, argc, argv, &a);
	return rc ? rc : cli_profile_write(&a, write_report, &o);
}

const struct cli_cmd cli_cmd_report = {
	.name = "report",
	.summary = "text report of a profile: top functions, call tree, unwind quality",
	.help = help,
	.run = run,
};
