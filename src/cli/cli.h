/*
 * The command line: one struct cli_cmd per subcommand, each in src/cli/cmd_NAME.c, listed in
 * main.c. Commands return the process exit status: 0, 1 for a failure, 2 for bad usage.
 */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include <stdio.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

struct cli_cmd {
	const char *name;
	const char *summary; /* one line for `tally --help` */
	const char *help;    /* the whole text for `tally help NAME` and `NAME --help` */
	int (*run)(int argc, char **argv);
};

/* Prints "tally: MESSAGE" (with the base/err message when msg is NULL) and returns CLI_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "tally: MESSAGE" and a pointer to the help, returns CLI_USAGE. */
int cli_usage(const struct cli_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The usage error for getopt_long's answer c after argv's options: '?' is "unknown option:
 * X", ':' (shortopts starting with ':') "X needs a value". Needs opterr = 0. */
int cli_bad_option(const struct cli_cmd *cmd, int c, char **argv);
/* Prints the error recorded through base/err.h and returns CLI_FAIL. */
int cli_fail_err(void);
/* Ends tally quietly, as SIGPIPE's default action does (status 141), when a write to f
 * (a stream on fd) failed because its reader is gone (`| head`), also when SIGPIPE is
 * ignored; else returns. */
void cli_end_if_reader_gone(FILE *f, int fd);
/* True when argv holds -h or --help before any "--": the command then prints its help. */
int cli_wants_help(int argc, char **argv);

/* The commands, one per src/cli/cmd_NAME.c. */
extern const struct cli_cmd cli_cmd_record;
extern const struct cli_cmd cli_cmd_flamegraph;
extern const struct cli_cmd cli_cmd_annotate;
extern const struct cli_cmd cli_cmd_report;
extern const struct cli_cmd cli_cmd_export;
extern const struct cli_cmd cli_cmd_diff;
extern const struct cli_cmd cli_cmd_sbpf;
extern const struct cli_cmd cli_cmd_symbolize;
extern const struct cli_cmd cli_cmd_probes;

#endif
