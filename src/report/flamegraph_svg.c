/*
 * Draws a laid-out flame graph as SVG. Every frame is a static <rect> and <text>, so the
 * picture shows even where scripts do not run (an <img> tag, an image viewer); the embedded
 * script adds hover details, zoom and search on top of those elements. Labels are cut to
 * fit using a fixed advance per character (the style sheet asks for a monospace font), the
 * same rule the script applies after a zoom. Nothing depends on the clock or on addresses,
 * so the same profile always gives the same bytes.
 */
#include "report/flamegraph_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "report/flamegraph_xml.h"

enum {
	FRAME_H = 16,   /* one row; the rect is one pixel less, leaving a gap */
	FONT = 12,
	TEXT_PAD = 3,   /* from a rect's left edge to its label */
};
#define CHAR_W (0.6 * FONT) /* advance of a monospace glyph */

static const char *const kind_class[FG_NKINDS] = {
	[FG_ROOT] = "r", [FG_NATIVE] = "n", [FG_INLINE] = "i", [FG_KERNEL] = "k",
	[FG_VM] = "v", [FG_SYSCALL] = "s", [FG_PROGRAM] = "p", [FG_TRUNCATED] = "t",
	[FG_JIT] = "j", [FG_PYTHON] = "y", [FG_RUBY] = "b",
};
static const char *const kind_label[FG_NKINDS] = {
	[FG_ROOT] = "all", [FG_NATIVE] = "function", [FG_INLINE] = "inlined",
	[FG_KERNEL] = "kernel", [FG_VM] = "interpreted", [FG_SYSCALL] = "syscall",
	[FG_PROGRAM] = "program", [FG_TRUNCATED] = "truncated stack", [FG_JIT] = "JIT",
	[FG_PYTHON] = "Python", [FG_RUBY] = "Ruby",
};

/* What the tooltip says of a frame that is not a plain function. */
static const char *const kind_word[FG_NKINDS] = {
	[FG_INLINE] = "inlined", [FG_KERNEL] = "kernel", [FG_VM] = "interpreted",
	[FG_SYSCALL] = "syscall", [FG_PROGRAM] = "program", [FG_TRUNCATED] = "stack not recovered",
	[FG_JIT] = "JIT", [FG_PYTHON] = "Python", [FG_RUBY] = "Ruby",
};

struct geom {
	unsigned width;
	unsigned top;    /* y of the first row of frames */
	unsigned bottom; /* y just below the last row */
	double scale;    /* pixels per unit of weight */
};

/* 1234567 -> "1,234,567" */
static void put_count(FILE *out, uint64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			fputc(',', out);
		fputc(digits[i], out);
	}
}

static void put_signed(FILE *out, int64_t v)
{
	fputc(v < 0 ? '-' : '+', out);
	put_count(out, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The label that fits in width pixels: the whole name, a prefix and "..", or nothing. */
static void put_label(FILE *out, const char *name, double width)
{
	double room = (width - 2 * TEXT_PAD) / CHAR_W;
	if (room < 3)
		return;
	size_t fit = (size_t)room, chars, all;
	utf8_prefix(name, SIZE_MAX, &all);
	if (all <= fit) {
		xml_put(out, name);
		return;
	}
	size_t bytes = utf8_prefix(name, fit - 2, &chars);
	xml_putn(out, name, bytes);
	fputs("..", out);
}

/* The tooltip: the name on the first line (the script reads it back from there). */
static void put_info(FILE *out, const struct fg_graph *g, const struct fg_frame *f)
{
	xml_put(out, f->name);
	fputc('\n', out);
	put_count(out, f->total);
	fprintf(out, " %s, %.2f%%", g->unit, pct(f->total, g->total));
	if (f->kind != FG_NATIVE && f->kind != FG_ROOT)
		fprintf(out, ", %s", kind_word[f->kind]);
	if (!g->diff)
		return;
	if (!f->in_before) {
		fputs("\nnot in before", out);
	} else {
		fputs("\nbefore: ", out);
		put_count(out, f->before_total);
		fprintf(out, " %s, %.2f%%", g->unit, pct(f->before_total, g->before_total));
	}
	fputs("\nself change: ", out);
	put_signed(out, f->self_delta);
	fprintf(out, " %s", g->unit);
}

static void put_frame(FILE *out, const struct fg_graph *g, const struct fg_frame *f,
		      const struct geom *m, bool inverted)
{
	unsigned row = inverted ? f->depth : g->max_depth - f->depth;
	unsigned y = m->top + row * FRAME_H;
	double x = FG_PAD + (double)f->start * m->scale, w = (double)f->total * m->scale;
	char fill[8];
	if (g->diff && f->kind != FG_ROOT)
		fg_diff_color(fill, f->self_delta, g->max_abs_delta);
	else
		fg_color(fill, f->name, f->kind);
	fprintf(out, "<g class=\"%s\" data-w=\"%" PRIu64 "\"><title>", kind_class[f->kind],
		f->total);
	put_info(out, g, f);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
		x, y, w, FRAME_H - 1, fill);
	fprintf(out, "<text x=\"%.2f\" y=\"%u\">", x + TEXT_PAD, y + FRAME_H - 4);
	put_label(out, f->name, w);
	fputs("</text></g>\n", out);
}

/* The legend: one swatch per kind of frame present, or the growth colours of a diff. */
static void put_legend(FILE *out, const struct fg_graph *g, unsigned y)
{
	double x = g->diff ? 380 : 300;
	char fill[8];
	if (g->diff) {
		fg_diff_color(fill, 1, 1);
		fprintf(out, "<g class=\"legend\"><rect x=\"%.0f\" y=\"%u\" width=\"12\" height=\"11\" fill=\"%s\"/><text x=\"%.0f\" y=\"%u\">grew</text>",
			x, y - 10, fill, x + 16, y);
		fg_diff_color(fill, -1, 1);
		fprintf(out, "<rect x=\"%.0f\" y=\"%u\" width=\"12\" height=\"11\" fill=\"%s\"/><text x=\"%.0f\" y=\"%u\">shrank</text></g>\n",
			x + 60, y - 10, fill, x + 76, y);
		x += 140;
		if (g->gone) {
			fprintf(out, "<text id=\"gone\" x=\"%.0f\" y=\"%u\">not drawn, only in before: ", x, y);
			put_count(out, g->gone);
			fprintf(out, " %s</text>\n", g->unit);
			x += 40 + CHAR_W * 40;
		}
	}
	for (int k = FG_NATIVE; k < FG_NKINDS; k++) {
		if (!g->kinds_seen[k] || (g->diff && k != FG_INLINE))
			continue;
		fg_color(fill, kind_label[k], k);
		fprintf(out, "<g class=\"legend %s\"><rect x=\"%.0f\" y=\"%u\" width=\"12\" height=\"11\" fill=\"%s\"/><text x=\"%.0f\" y=\"%u\">%s</text></g>\n",
			kind_class[k], x, y - 10, fill, x + 16, y, kind_label[k]);
		x += 30 + CHAR_W * (double)strlen(kind_label[k]);
	}
}

static const char *default_title(const struct fg_graph *g, bool inverted)
{
	if (g->diff)
		return inverted ? "Differential Icicle Graph" : "Differential Flame Graph";
	return inverted ? "Icicle Graph" : "Flame Graph";
}

static void put_header(FILE *out, const struct fg_graph *g, const struct rep_flame_opts *o,
		       const struct geom *m)
{
	unsigned height = m->bottom + 30;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n",
		m->width, height, m->width, height);
	fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", fg_style);
	fprintf(out, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%u\" height=\"%u\"/>\n",
		m->width, height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", m->width / 2);
	xml_put(out, o->title ? o->title : default_title(g, o->inverted));
	fputs("</text>\n", out);
	if (o->subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%u\" y=\"42\">", m->width / 2);
		xml_put(out, o->subtitle);
		fputs("</text>\n", out);
	}
	unsigned y = m->top - 8;
	fprintf(out, "<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"%u\" style=\"display:none\">Reset Zoom</text>\n",
		FG_PAD, y);
	fprintf(out, "<text id=\"search\" class=\"btn\" x=\"%u\" y=\"%u\">Search</text>\n",
		m->width - FG_PAD, y);
	put_legend(out, g, y);
}

static void put_footer(FILE *out, const struct fg_graph *g, const struct geom *m,
		       bool inverted)
{
	unsigned y = m->bottom + 18;
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", FG_PAD, y);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\"></text>\n", m->width - FG_PAD, y);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\nvar TALLY_FG = {"
		     "top: %u, fh: %d, maxdepth: %u, inverted: %s, width: %u, pad: %d, "
		     "charw: %.2f, textpad: %d, total: %" PRIu64 ", unit: \"%s\", "
		     "matchfill: \"#e535d0\"};\n%s]]></script>\n</svg>\n",
		m->top, FRAME_H, g->max_depth, inverted ? "true" : "false", m->width, FG_PAD,
		CHAR_W, TEXT_PAD, g->total, g->unit, fg_script);
}

int fg_write_svg(FILE *out, const struct fg_graph *g, const struct rep_flame_opts *o)
{
	struct geom m;
	m.width = o->width;
	m.top = o->subtitle ? 68 : 52;
	m.bottom = m.top + (g->max_depth + 1) * FRAME_H;
	m.scale = g->total ? (double)(m.width - 2 * FG_PAD) / (double)g->total : 0;
	put_header(out, g, o, &m);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < g->frames.n; i++)
		put_frame(out, g, &g->frames.v[i], &m, o->inverted);
	fputs("</g>\n", out);
	put_footer(out, g, &m, o->inverted);
	/* Not flushed here: stdio drops what a failed flush could not write, and with it the
	 * reason, which the caller's flush gives the user. */
	return ferror(out) ? err_set(-EIO, "write error") : 0;
}
