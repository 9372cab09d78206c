/*
 * Annotated disassembly: the per-instruction weights of one function, with source lines
 * interleaved and the hottest instructions highlighted, as terminal text or as one
 * self-contained HTML page. The machine code comes from the module's file on disk (or
 * --binary), disassembled by capstone (x86-64, i386, aarch64); source positions come from
 * the symbolizer (include/tally/tally.h).
 */
#ifndef TALLY_REPORT_ANNOTATE_H
#define TALLY_REPORT_ANNOTATE_H

#include <stdbool.h>
#include <stdio.h>

struct prof;

struct rep_annot_opts {
	const char *function;  /* the function's label; NULL: the one with the most self weight */
	const char *binary;    /* read this file instead of the module path in the profile */
	const char *debug_dir; /* extra directory for separate debug files; NULL: none */
	int metric;	       /* -1: the profile's default */
	bool html;	       /* one HTML page instead of text */
	bool color;	       /* text: ANSI colours (the command sets it on a tty) */
};

/* p must be finished. 0, or a negative code with the message set. */
int rep_annotate(FILE *out, const struct prof *p, const struct rep_annot_opts *o);

#endif
