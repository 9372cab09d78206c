/*
 * The command line of the commands that read profiles (report, flamegraph, annotate,
 * export, diff): the options they share, one default input (./perf.data, the file tally
 * record and perf record write), one wording for usage errors, and the load-then-write tail
 * of those that read one profile.
 */
#ifndef TALLY_CLI_PROFILE_CMD_H
#define TALLY_CLI_PROFILE_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/profile_input.h"

struct option;
struct prof;
struct cli_cmd;

/* A command that reads profiles, as cli_profile_args parses its command line: its own
 * options, and which of the shared ones it takes. Every such command takes -o/--output,
 * --metric and --unwind. */
struct cli_profile_cmd {
	const struct cli_cmd *cmd;
	const char *shortopts;        /* its own short options ("f:"), or "" */
	const struct option *options; /* its own long options, ending in a zero entry */
	/* Its own option c with argument arg (NULL without one): 0, or CLI_USAGE after
	 * cli_usage. */
	int (*option)(int c, const char *arg, void *ctx);
	void *ctx;
	bool filters; /* takes --gil, --focus, --hide and --fold-recursion */
	bool two;     /* takes BEFORE AFTER, not one FILE (default perf.data) */
};

/* What a profile command was given besides its own options. Strings point into argv. */
struct cli_profile_args {
	const char *output, *metric; /* NULL: stdout, the profile's default metric */
	enum unw_method unwind;      /* --unwind: how perf.data input is unwound */
	struct cli_filters filters;
	const char *paths[2];
};

/* Parses argv as pc describes: 0, or CLI_USAGE after printing "tally: ..." (an unknown
 * option, an option without its value, a bad --unwind, a wrong number of files). */
int cli_profile_args(const struct cli_profile_cmd *pc, int argc, char **argv,
		     struct cli_profile_args *out);

/* The tail of the one-profile commands: loads a->paths[0] with a's filters and metric,
 * runs write(f, profile, metric, ctx) into a->output (as cli_write_output does), frees the
 * profile and returns the exit status (CLI_FAIL after printing the error). */
int cli_profile_write(const struct cli_profile_args *a,
		      int (*write)(FILE *f, const struct prof *p, int metric, void *ctx), void *ctx);

#endif
