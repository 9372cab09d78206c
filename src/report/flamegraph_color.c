/*
 * Flame graph colours. A frame's colour depends only on its name and kind (FNV-1a of the
 * name picks a hue within the kind's band, and a lightness), so the same function looks the
 * same in every graph of a program. Inlined frames take the hue their name would have as a
 * native frame, paler: the border style (see the style sheet) is what sets them apart.
 */
#include "report/flamegraph_impl.h"

#include <math.h>
#include <stdio.h>

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void hsl_hex(char buf[8], double h, double s, double l)
{
	/* The standard HSL to RGB conversion; h in degrees, s and l in [0, 1]. */
	double c = (1 - fabs(2 * l - 1)) * s, hp = fmod(h, 360) / 60;
	double x = c * (1 - fabs(fmod(hp, 2) - 1)), m = l - c / 2, r = 0, g = 0, b = 0;
	if (hp < 1) r = c, g = x;
	else if (hp < 2) r = x, g = c;
	else if (hp < 3) g = c, b = x;
	else if (hp < 4) g = x, b = c;
	else if (hp < 5) r = x, b = c;
	else r = c, b = x;
	snprintf(buf, 8, "#%02x%02x%02x", (unsigned)lround((r + m) * 255),
		 (unsigned)lround((g + m) * 255), (unsigned)lround((b + m) * 255));
}

/* Hue band (start, width in degrees) and saturation per kind. */
static const struct { double hue, span, sat, light; } bands[FG_NKINDS] = {
	[FG_ROOT] = { 30, 0, 0.10, 0.78 },
	[FG_NATIVE] = { 0, 50, 0.85, 0.60 },
	[FG_INLINE] = { 0, 50, 0.55, 0.76 },
	[FG_KERNEL] = { 190, 40, 0.60, 0.62 },
	[FG_VM] = { 80, 60, 0.55, 0.55 },
	[FG_SYSCALL] = { 265, 40, 0.50, 0.66 },
	[FG_PROGRAM] = { 165, 25, 0.55, 0.55 },
	[FG_TRUNCATED] = { 0, 0, 0.0, 0.70 },
	/* green, as perf's and Brendan Gregg's flame graphs draw JIT code */
	[FG_JIT] = { 95, 40, 0.65, 0.50 },
	/* blue to teal, CPython's own blue, apart from the warm native frames */
	[FG_PYTHON] = { 205, 30, 0.60, 0.60 },
};

void fg_color(char buf[8], const char *name, enum fg_kind kind)
{
	uint32_t h = fnv1a(name);
	double hue = bands[kind].hue + bands[kind].span * ((h & 0xffff) / 65535.0);
	double light = bands[kind].light + 0.08 * (((h >> 16) & 0xff) / 255.0 - 0.5);
	hsl_hex(buf, hue, bands[kind].sat, light);
}

void fg_diff_color(char buf[8], int64_t delta, int64_t max_abs_delta)
{
	double t = max_abs_delta ? fabs((double)delta) / (double)max_abs_delta : 0;
	/* A square root spreads small changes, which are the common ones, over more shades. */
	double light = 0.97 - 0.42 * sqrt(t);
	hsl_hex(buf, delta > 0 ? 0 : 220, delta ? 0.85 : 0, delta ? light : 0.88);
}
