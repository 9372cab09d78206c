/*
 * tally export: a profile file converted to another format (folded stacks, pprof,
 * speedscope, Firefox Profiler).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/profile_cmd.h"
#include "profile/profile.h"
#include "report/report.h"

static const char help[] =
	"usage: tally export -f FORMAT [options] [FILE]\n"
	"\n"
	"Writes the profile in FILE (pprof, folded stacks or perf.data; detected from the\n"
	"content, '-' for stdin; default perf.data) in another format. The same input gives the same bytes.\n"
	"\n"
	"formats:\n"
	"  folded      'root;caller;leaf COUNT' lines (FlameGraph's format), one metric\n"
	"  pprof       gzipped profile.proto, for go tool pprof and other pprof readers:\n"
	"              every metric, mappings with build-ids, inline frames as Line entries\n"
	"  speedscope  speedscope's JSON file format (https://www.speedscope.app), one\n"
	"              sampled profile per metric\n"
	"  firefox     the Firefox Profiler's processed format (https://profiler.firefox.com):\n"
	"              one thread per thread recorded, grouped by process, samples in time\n"
	"              order weighted by --metric, off-CPU intervals and USDT probe hits as\n"
	"              markers; profiles without threads (pprof, folded) as one thread\n"
	"\n"
	"options:\n"
	"  -f, --format FORMAT  folded, pprof, speedscope or firefox (required)\n"
	"  -o, --output FILE    write there instead of stdout\n"
	"  --kinds              folded: suffix inline frames with _[i], kernel frames with _[k],\n"
	"                       JIT frames with _[j] and Python frames with _[p] (tally reads\n"
	"                       them back)\n"
	"  --threads            perf.data input: folded: each thread's stacks below a frame\n"
	"                       NAME-PID/TID; pprof: a sample per recorded sample, labelled\n"
	"                       thread, pid and tid; speedscope: a profile per thread and\n"
	"                       metric, named NAME-PID/TID\n"
	"  --metric TYPE        folded, firefox: the metric to write (default: the profile's\n"
	"                       default)\n"
	"  --focus REGEX        keep only samples whose stack has a function matching REGEX\n"
	"  --hide REGEX         remove matching functions from stacks (cost goes to callers)\n"
	"  --fold-recursion     fold recursive calls into their first occurrence\n"
	"  --gil STATE          perf.data of Python: keep only the samples whose thread held\n"
	"                       the GIL (held) or did not (not-held) when it was sampled\n"
	"  --unwind METHOD      perf.data input: how stacks are recovered: auto (DWARF CFI,\n"
	"                       frame pointers as fallback; the default), cfi or fp (frame\n"
	"                       pointers only), for stack copies: stacks tally record\n"
	"                       unwound while recording are read as stored\n";

enum { OPT_KINDS = 256, OPT_THREADS };

#define FORMATS "folded, pprof, speedscope, firefox"

static const struct option options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "kinds", no_argument, NULL, OPT_KINDS },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ NULL, 0, NULL, 0 },
};

struct export_args {
	const char *format, *path;
	bool kinds, threads;
};

static int option(int c, const char *arg, void *ctx)
{
	struct export_args *e = ctx;
	if (c == OPT_KINDS)
		e->kinds = true;
	else if (c == OPT_THREADS)
		e->threads = true;
	else /* -f */
		e->format = arg;
	return 0;
}

static int write_format(FILE *f, const struct prof *p, int metric, void *ctx)
{
	const struct export_args *e = ctx;
	if (!strcmp(e->format, "pprof"))
		return e->threads ? rep_pprof_threads(f, p) : rep_pprof(f, p);
	const char *base = strrchr(e->path, '/');
	if (!strcmp(e->format, "speedscope"))
		return rep_speedscope(f, p, base ? base + 1 : e->path, e->threads);
	if (!strcmp(e->format, "firefox"))
		return rep_firefox(f, p, metric, base ? base + 1 : e->path);
	struct rep_folded_opts o = { metric, e->kinds, e->threads };
	return rep_folded(f, p, &o);
}

static int run(int argc, char **argv)
{
	struct export_args e = { 0 };
	const struct cli_profile_cmd pc = {
		.cmd = &cli_cmd_export, .shortopts = "f:", .options = options,
		.option = option, .ctx = &e, .filters = true,
	};
	struct cli_profile_args a;
	int rc = cli_profile_args(&pc, argc, argv, &a);
	if (rc)
		return rc;
	if (!e.format)
		return cli_usage(&cli_cmd_export, "-f FORMAT is required (" FORMATS ")");
	if (strcmp(e.format, "folded") && strcmp(e.format, "pprof") &&
	    strcmp(e.format, "speedscope") && strcmp(e.format, "firefox"))
		return cli_usage(&cli_cmd_export, "unknown format: %s (" FORMATS ")", e.format);
	if (e.threads && !strcmp(e.format, "firefox"))
		return cli_usage(&cli_cmd_export, "--threads: not with firefox (it has threads of "
						  "its own)");
	e.path = a.paths[0];
	return cli_profile_write(&a, write_format, &e);
}

const struct cli_cmd cli_cmd_export = {
	.name = "export",
	.summary = "convert a profile: folded stacks, pprof, speedscope JSON, Firefox Profiler",
	.help = help,
	.run = run,
};
