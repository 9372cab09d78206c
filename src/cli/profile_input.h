/*
 * Profile files as commands take them: the format is detected from the content (pprof,
 * folded stacks; perf.data once its reader lands: one more row in the table in
 * profile_input.c), and outputs go to stdout unless -o names a file.
 */
#ifndef TALLY_CLI_PROFILE_INPUT_H
#define TALLY_CLI_PROFILE_INPUT_H

#include <stdio.h>

struct prof;

/* Reads and detects PATH ("-" for stdin); 0 and a finished profile, or a code with the
 * message set ("PATH: not a profile (pprof, folded stacks or perf.data)"). */
int cli_read_profile(const char *path, struct prof **out);

/* stdout when path is NULL or "-", else the file, created or truncated. NULL with the
 * message set on failure. */
FILE *cli_open_output(const char *path);
/* Flushes and closes (not stdout: only flushed); reports write errors naming path. */
int cli_close_output(FILE *f, const char *path);

#endif
