/*
 * Profile files as commands take them: the format is detected from the content (pprof,
 * folded stacks, perf.data), and outputs go to stdout unless -o names a file.
 */
#ifndef TALLY_CLI_PROFILE_INPUT_H
#define TALLY_CLI_PROFILE_INPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "unwind/unwind.h"

struct prof;
struct cli_cmd;

/* --unwind METHOD: how perf.data input is unwound: "auto" (DWARF CFI, frame pointers as
 * fallback), "cfi" or "fp", in *out. 0, or CLI_USAGE after printing cmd's usage error. */
int cli_unwind_option(const struct cli_cmd *cmd, const char *method, enum unw_method *out);

/* The filters commands share (--gil STATE, --focus RE, --hide RE, --fold-recursion),
 * applied in that order. 0/NULL/false skip a filter. */
struct cli_filters {
	int gil; /* enum prof_gil: only the samples in that GIL state */
	const char *focus, *hide;
	bool fold;
};

/* Reads and detects PATH ("-" for stdin: pprof, folded stacks or perf.data, whose stacks
 * are recovered by unwind), applies the filters (NULL: none) and picks the metric of type
 * metric (NULL: *m = -1, the profile's default). 0 with a finished profile in *out, or a
 * code with the message set ("PATH: not a profile ...", "PATH: no metric 'x' (it has:
 * ...)", "no samples left after filtering") and nothing to free. */
int cli_load_profile(const char *path, enum unw_method unwind, const struct cli_filters *filters,
		     const char *metric, struct prof **out, int *m);

/* Runs write(f, ctx) into path: stdout when path is NULL or "-", else through
 * base/atomic_file.h, so the file at path is replaced only when write and the flush
 * succeed and a device or FIFO is written directly, never removed. When write fails its
 * message is prefixed with source (the input it was writing from). */
int cli_write_output(const char *path, const char *source, int (*write)(FILE *f, void *ctx),
		     void *ctx);

#endif
