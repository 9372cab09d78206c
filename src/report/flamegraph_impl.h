/*
 * Inside the flame graph writer: a laid-out graph is a list of frames in pre-order (a
 * frame's subtree follows it; the script in the SVG rebuilds the tree from that order and
 * the depths). Layout (flamegraph_layout.c) turns a profile into one; the SVG writer
 * (flamegraph_svg.c) only draws it.
 */
#ifndef TALLY_REPORT_FLAMEGRAPH_IMPL_H
#define TALLY_REPORT_FLAMEGRAPH_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/vec.h"
#include "report/flamegraph.h"

/* Left and right margin of the drawing, in pixels. */
#define FG_PAD 10

enum fg_kind { FG_ROOT, FG_NATIVE, FG_INLINE, FG_KERNEL, FG_VM, FG_SYSCALL, FG_PROGRAM,
	       FG_TRUNCATED, FG_JIT, FG_PYTHON, FG_RUBY, FG_NKINDS };

/* One box. Names belong to the profile the graph was laid out from. */
struct fg_frame {
	const char *name;
	enum fg_kind kind;
	uint32_t depth;
	uint64_t start; /* weight of everything left of this frame at its depth */
	uint64_t total; /* weight of the frame and its callees: its width */
	/* Differential graphs: the same path in BEFORE (0 when absent there). */
	int64_t self_delta;
	uint64_t before_total;
	bool in_before;
};

struct fg_graph {
	VEC(struct fg_frame) frames;
	uint64_t total;       /* the root's weight */
	uint32_t max_depth;
	const char *unit;     /* what a unit of weight is: "samples", "CU", "nanoseconds" */
	bool diff;
	uint64_t before_total;
	int64_t max_abs_delta; /* the largest |self_delta|, for the colour scale */
	uint64_t gone;	       /* diff: BEFORE's weight on paths AFTER does not have */
	size_t pruned;         /* frames left out by minwidth */
	bool kinds_seen[FG_NKINDS];
};

void fg_graph_free(struct fg_graph *g);
/* Draws g as one SVG document. 0 or a negative code when writing fails. */
int fg_write_svg(FILE *out, const struct fg_graph *g, const struct rep_flame_opts *o);

/* Colours: "#rrggbb" for a frame, stable for a given name and kind. */
void fg_color(char buf[8], const char *name, enum fg_kind kind);
/* Differential colour: red for growth, blue for shrinkage, white for none. */
void fg_diff_color(char buf[8], int64_t delta, int64_t max_abs_delta);

/* The script and style sheet embedded in every SVG. */
extern const char fg_script[];
extern const char fg_style[];

#endif
