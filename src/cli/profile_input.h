/*
 * Profile files as commands take them: the format is detected from the content (pprof,
 * folded stacks, perf.data), and outputs go to stdout unless -o names a file.
 */
#ifndef TALLY_CLI_PROFILE_INPUT_H
#define TALLY_CLI_PROFILE_INPUT_H

#include <stdbool.h>
#include <stdio.h>

struct prof;

/* How perf.data input is unwound: "auto" (DWARF CFI, frame pointers as fallback), "cfi"
 * or "fp" (--unwind). -EINVAL for another name. */
int cli_set_unwind(const char *method);

/* Reads and detects PATH ("-" for stdin); 0 and a finished profile, or a code with the
 * message set ("PATH: not a profile (pprof, folded stacks or perf.data)"). */
int cli_read_profile(const char *path, struct prof **out);

/* stdout when path is NULL or "-", else the file, created or truncated. NULL with the
 * message set on failure. */
FILE *cli_open_output(const char *path);
/* Flushes and closes (not stdout: only flushed); reports write errors naming path. */
int cli_close_output(FILE *f, const char *path);
/* Opens path (as cli_open_output), runs write(f, ctx) and closes. When write fails its
 * message is prefixed with source (the input it was writing from) and a partial output
 * file is removed, so a failed run leaves no broken file behind. */
int cli_write_output(const char *path, const char *source, int (*write)(FILE *f, void *ctx),
		     void *ctx);

/* The filters commands share (--focus RE, --hide RE, --fold-recursion), applied in that
 * order; *p is replaced by the filtered profile. NULL/false skip a filter. */
int cli_filter_profile(struct prof **p, const char *focus, const char *hide, bool fold);

/* The metric named by --metric TYPE (NULL: -1, the profile's default); -ENOENT with a
 * message listing the metrics when there is none of that type. */
int cli_pick_metric(const struct prof *p, const char *path, const char *type);

#endif
