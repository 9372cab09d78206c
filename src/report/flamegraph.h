/*
 * SVG flame graphs: one self-contained, interactive SVG file (hover details, click to zoom,
 * regular-expression search with the matched share), drawn from a profile, or from a
 * BEFORE/AFTER pair as a differential graph (AFTER's shape, coloured by change).
 */
#ifndef TALLY_REPORT_FLAMEGRAPH_H
#define TALLY_REPORT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct prof;

struct rep_flame_opts {
	const char *title;    /* NULL: "Flame Graph" (or "Icicle Graph", "Differential ...") */
	const char *subtitle; /* NULL: none */
	bool inverted;        /* icicle: roots at the top */
	double minwidth;      /* frames narrower than this many pixels are left out */
	unsigned width;       /* of the image, in pixels */
	int metric;           /* which of the profile's metrics gives the widths; -1: default */
	/* Differential graphs: scale BEFORE to AFTER's total before comparing, for sampled
	 * profiles of different lengths. Off for exact profiles (sBPF CU). */
	bool normalize;
};

/* The defaults: 1200 pixels wide, minwidth 0.1 pixel, the first metric. */
void rep_flame_opts_init(struct rep_flame_opts *o);

/* p must be finished (prof_finish). Call sites are merged: one box per function per path.
 * Returns 0, or a negative code with the message set (an empty profile is an error). */
int rep_flamegraph(FILE *out, const struct prof *p, const struct rep_flame_opts *o);
/* The differential graph of a diff model (prof_diff()): the shape of AFTER, each frame
 * coloured by how its self weight changed from BEFORE; o->metric is ignored. */
int rep_flamegraph_diff(FILE *out, const struct prof *diff, const struct rep_flame_opts *o);

#endif
