/*
 * Flame graph colours. A frame's colour depends only on its name and kind (FNV-1a of the
 * name picks a hue within the kind's band, and a lightness), so the same function looks the
 * same in every graph of a program. Inlined frames take the hue their name would have as a
 * native frame, paler: the border style (see the style sheet) is what sets them apart.
 */
#include "report/flamegraph_impl.h"

#include <stdio.h>

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* No libm here: the tally command then need not load it, which took 0.4 ms of every start
 * on the virtual machines of bench/. Each function below gives exactly what libm's would
 * for the arguments it gets. */
static double magnitude(double x)
{
	return x < 0 ? -x : x;
}

/* fmod(x, 2) for x >= 0 below 2^52: x - 2k is exact (Sterbenz: 2k <= x <= 4k when k >= 1). */
static double mod2(double x)
{
	return x - 2 * (double)(uint64_t)(x / 2);
}

/* lround(x) for x in [0, 2^32): x minus its integer part is exact. */
static unsigned round_half_up(double x)
{
	unsigned n = (unsigned)x;
	return n + (x - n >= 0.5);
}

/* sqrt(t) for t in [0, 1], to within an ulp: Newton's iteration from 1 descends to the
 * root, and stops where it no longer does. */
static double root(double t)
{
	double r = 1;
	for (int i = 0; t > 0 && i < 80; i++) {
		double next = (r + t / r) / 2;
		if (next >= r)
			break;
		r = next;
	}
	return t > 0 ? r : 0;
}

static void hsl_hex(char buf[8], double h, double s, double l)
{
	/* The standard HSL to RGB conversion; h in degrees within [0, 360), s and l in
	 * [0, 1]. */
	double c = (1 - magnitude(2 * l - 1)) * s, hp = h / 60;
	double x = c * (1 - magnitude(mod2(hp) - 1)), m = l - c / 2, r = 0, g = 0, b = 0;
	if (hp < 1) r = c, g = x;
	else if (hp < 2) r = x, g = c;
	else if (hp < 3) g = c, b = x;
	else if (hp < 4) g = x, b = c;
	else if (hp < 5) r = x, b = c;
	else r = c, b = x;
	snprintf(buf, 8, "#%02x%02x%02x", round_half_up((r + m) * 255),
		 round_half_up((g + m) * 255), round_half_up((b + m) * 255));
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
	/* red to pink, Ruby's own red, lighter than the kernel's band */
	[FG_RUBY] = { 335, 20, 0.60, 0.70 },
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
	double t = max_abs_delta ? magnitude((double)delta) / (double)max_abs_delta : 0;
	/* A square root spreads small changes, which are the common ones, over more shades. */
	double light = 0.97 - 0.42 * root(t);
	hsl_hex(buf, delta > 0 ? 0 : 220, delta ? 0.85 : 0, delta ? light : 0.88);
}
