/*
 * The shared command line of the profile commands. A command lists only its own options;
 * the shared ones are appended to a copy of its table here, so getopt_long sees one table
 * and the shared options are spelled, checked and reported the same way in every command.
 */
#include "cli/profile_cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "profile/profile.h"

/* Far from the commands' own codes (256 and up) and from any short option. */
enum { OPT_OUTPUT = 'o', OPT_METRIC = 0x1000, OPT_UNWIND, OPT_FOCUS, OPT_HIDE, OPT_FOLD,
       OPT_GIL };

static const struct option shared[] = {
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
};

static const struct option filter_options[] = {
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "hide", required_argument, NULL, OPT_HIDE },
	{ "fold-recursion", no_argument, NULL, OPT_FOLD },
	{ "gil", required_argument, NULL, OPT_GIL },
};

#define NSHARED (sizeof(shared) / sizeof(shared[0]))
#define NFILTER (sizeof(filter_options) / sizeof(filter_options[0]))
/* Room for the largest command's own options (annotate: 5) and the shared ones. */
enum { MAX_OPTIONS = 16, MAX_SHORTOPTS = 16 };

static size_t add(struct option *to, size_t n, const struct option *from, size_t count)
{
	memcpy(to + n, from, count * sizeof(*from));
	return n + count;
}

/* pc's table with the shared options after its own, ending in a zero entry; 0 when it does
 * not fit (a command grew: raise MAX_OPTIONS). */
static size_t table_of(const struct cli_profile_cmd *pc, struct option *all)
{
	size_t own = 0;
	while (pc->options[own].name)
		own++;
	if (own + NSHARED + NFILTER + 1 > MAX_OPTIONS)
		return 0;
	size_t n = add(all, 0, pc->options, own);
	n = add(all, n, shared, NSHARED);
	if (pc->filters)
		n = add(all, n, filter_options, NFILTER);
	memset(all + n, 0, sizeof(*all));
	return n;
}

/* --gil STATE: held or not-held. */
static int gil_option(const struct cli_profile_cmd *pc, const char *arg, int *gil)
{
	if (!strcmp(arg, "held"))
		*gil = PROF_GIL_HELD;
	else if (!strcmp(arg, "not-held"))
		*gil = PROF_GIL_NOT_HELD;
	else
		return cli_usage(pc->cmd, "--gil: held or not-held, not %s", arg);
	return 0;
}

static int shared_option(const struct cli_profile_cmd *pc, int c, char **argv,
			 struct cli_profile_args *a)
{
	switch (c) {
	case OPT_OUTPUT: a->output = optarg; return 0;
	case OPT_METRIC: a->metric = optarg; return 0;
	case OPT_UNWIND: return cli_unwind_option(pc->cmd, optarg, &a->unwind) ? CLI_USAGE : 0;
	case OPT_FOCUS: a->filters.focus = optarg; return 0;
	case OPT_HIDE: a->filters.hide = optarg; return 0;
	case OPT_FOLD: a->filters.fold = true; return 0;
	case OPT_GIL: return gil_option(pc, optarg, &a->filters.gil);
	case '?':
	case ':': return cli_bad_option(pc->cmd, c, argv);
	default: return pc->option(c, optarg, pc->ctx);
	}
}

static int files(const struct cli_profile_cmd *pc, int argc, char **argv,
		 struct cli_profile_args *a)
{
	int n = argc - optind;
	if (pc->two) {
		if (n != 2)
			return cli_usage(pc->cmd, "expected two profiles: BEFORE AFTER");
		a->paths[0] = argv[optind];
		a->paths[1] = argv[optind + 1];
		return 0;
	}
	if (n > 1)
		return cli_usage(pc->cmd, "expected one profile FILE (default perf.data)");
	a->paths[0] = n ? argv[optind] : "perf.data";
	return 0;
}

int cli_profile_args(const struct cli_profile_cmd *pc, int argc, char **argv,
		     struct cli_profile_args *out)
{
	struct option all[MAX_OPTIONS];
	char shortopts[MAX_SHORTOPTS];
	int len = snprintf(shortopts, sizeof(shortopts), ":%so:", pc->shortopts);
	if (!table_of(pc, all) || len < 0 || (size_t)len >= sizeof(shortopts))
		return cli_fail("%s: too many options for the shared option table", pc->cmd->name);
	*out = (struct cli_profile_args){ 0 };
	optind = 1;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, shortopts, all, NULL)) != -1;) {
		int rc = shared_option(pc, c, argv, out);
		if (rc)
			return rc;
	}
	return files(pc, argc, argv, out);
}

/* A one-profile command's writer and what it writes, for cli_write_output's one context. */
struct profile_job {
	const struct prof *p;
	int metric;
	int (*write)(FILE *f, const struct prof *p, int metric, void *ctx);
	void *ctx;
};

static int write_job(FILE *f, void *ctx)
{
	struct profile_job *job = ctx;
	return job->write(f, job->p, job->metric, job->ctx);
}

int cli_profile_write(const struct cli_profile_args *a,
		      int (*write)(FILE *f, const struct prof *p, int metric, void *ctx), void *ctx)
{
	struct prof *p;
	struct profile_job job = { .write = write, .ctx = ctx };
	if (cli_load_profile(a->paths[0], a->unwind, &a->filters, a->metric, &p, &job.metric))
		return cli_fail_err();
	job.p = p;
	int rc = cli_write_output(a->output, a->paths[0], write_job, &job);
	prof_free(p);
	return rc ? cli_fail_err() : CLI_OK;
}
