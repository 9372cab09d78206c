/*
 * Flame graph pieces that the browser tests cannot pin down exactly: text escaping of
 * hostile names, label cutting, colours, and byte-identical output whatever order the
 * samples arrived in.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/utf8.h"
#include "profile/profile.h"
#include "report/flamegraph.h"
#include "report/flamegraph_impl.h"
#include "report/flamegraph_xml.h"

/* What writing s through xml_put gives. */
static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xml_put(f, s);
	fclose(f);
	return buf;
}

static void xml_escapes_markup_and_repairs_invalid_utf8(void **state)
{
	(void)state;
	char *s = escaped("a<b>&\"'");
	assert_string_equal(s, "a&lt;b&gt;&amp;&quot;&#39;");
	free(s);
	/* An overlong NUL (c0 80), a surrogate (ed a0 80), a lone continuation byte, a
	 * truncated sequence: each bad byte becomes one U+FFFD. Control bytes go. */
	s = escaped("x\xc0\x80y\xed\xa0\x80z\x80\x01\xe2\x82");
	assert_string_equal(s, "x\xef\xbf\xbd\xef\xbf\xbdy\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz"
			       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(s);
	s = escaped("caf\xc3\xa9 \xf0\x9f\x94\xa5");
	assert_string_equal(s, "caf\xc3\xa9 \xf0\x9f\x94\xa5");
	free(s);
}

static void utf8_prefix_counts_characters_not_bytes(void **state)
{
	(void)state;
	size_t chars;
	assert_int_equal(utf8_prefix("h\xc3\xa9llo", 2, &chars), 3);
	assert_int_equal(chars, 2);
	assert_int_equal(utf8_prefix("ab\xff", 10, &chars), 3);
	assert_int_equal(chars, 3);
}

/* The colours as libm computes them (flamegraph_color.c does without libm): the standard
 * HSL to RGB conversion, and the diff shade's square root. */
static void libm_hsl(char buf[8], double h, double s, double l)
{
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

static void colours_are_libms(void **state)
{
	(void)state;
	static const struct { double hue, span, sat, light; } kinds[] = {
		{ 30, 0, 0.10, 0.78 },  { 0, 50, 0.85, 0.60 },  { 0, 50, 0.55, 0.76 },
		{ 190, 40, 0.60, 0.62 }, { 80, 60, 0.55, 0.55 }, { 265, 40, 0.50, 0.66 },
		{ 165, 25, 0.55, 0.55 }, { 0, 0, 0.0, 0.70 },   { 95, 40, 0.65, 0.50 },
		{ 205, 30, 0.60, 0.60 }, { 335, 20, 0.60, 0.70 },
	};
	assert_int_equal(sizeof(kinds) / sizeof(kinds[0]), FG_NKINDS);
	char got[8], want[8], name[32];
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "fn_%d", i * 7919);
		int k = i % FG_NKINDS;
		uint32_t h = 2166136261u; /* fg_color's FNV-1a */
		for (const char *p = name; *p; p++)
			h = (h ^ (unsigned char)*p) * 16777619u;
		fg_color(got, name, (enum fg_kind)k);
		libm_hsl(want, kinds[k].hue + kinds[k].span * ((h & 0xffff) / 65535.0),
			 kinds[k].sat, kinds[k].light + 0.08 * (((h >> 16) & 0xff) / 255.0 - 0.5));
		assert_string_equal(got, want);
	}
	for (int64_t d = -3000; d <= 3000; d++) {
		double t = fabs((double)d) / 3000.0;
		fg_diff_color(got, d, 3000);
		libm_hsl(want, d > 0 ? 0 : 220, d ? 0.85 : 0, d ? 0.97 - 0.42 * sqrt(t) : 0.88);
		assert_string_equal(got, want);
	}
}

static void colour_depends_on_name_and_kind_only(void **state)
{
	(void)state;
	char a[8], b[8], c[8], k[8];
	fg_color(a, "compute_hash", FG_NATIVE);
	fg_color(b, "compute_hash", FG_NATIVE);
	fg_color(c, "parse_input", FG_NATIVE);
	fg_color(k, "compute_hash", FG_KERNEL);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_string_not_equal(a, k);
	/* Native frames are warm: more red than blue. Kernel frames are cool. */
	unsigned r, g, bl;
	assert_int_equal(sscanf(a, "#%2x%2x%2x", &r, &g, &bl), 3);
	assert_true(r > bl);
	assert_int_equal(sscanf(k, "#%2x%2x%2x", &r, &g, &bl), 3);
	assert_true(bl > r);
}

static uint32_t frame(struct prof *p, const char *name, enum prof_kind k)
{
	struct prof_frame_desc d = { .kind = k, .function = name, .module = PROF_NONE };
	uint32_t f = prof_frame(p, &d);
	assert_int_not_equal(f, PROF_NONE);
	return f;
}

/* The profile of four stacks, added in the order given by `order`. */
static struct prof *build(const int order[4])
{
	static const char *const stacks[4][3] = {
		{ "main", "parse", "read" }, { "main", "hash", "mix" },
		{ "main", "hash", NULL }, { "idle", NULL, NULL },
	};
	static const int64_t weights[4] = { 30, 50, 15, 5 };
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	for (int i = 0; i < 4; i++) {
		int s = order[i];
		struct prof_loc st[3];
		size_t n = 0;
		for (int j = 2; j >= 0; j--)
			if (stacks[s][j])
				st[n++] = (struct prof_loc){
					frame(p, stacks[s][j], !strcmp(stacks[s][j], "mix") ? PROF_INLINE : PROF_NATIVE),
					0, 0 };
		assert_int_equal(prof_add_stack(p, st, n, &weights[s]), 0);
	}
	assert_int_equal(prof_finish(p), 0);
	return p;
}

static char *svg_of(const struct prof *p, const struct rep_flame_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(rep_flamegraph(f, p, o), 0);
	fclose(f);
	return buf;
}

static void svg_is_identical_whatever_the_sample_order(void **state)
{
	(void)state;
	static const int a[4] = { 0, 1, 2, 3 }, b[4] = { 3, 2, 1, 0 };
	struct prof *p = build(a), *q = build(b);
	struct rep_flame_opts o;
	rep_flame_opts_init(&o);
	char *x = svg_of(p, &o), *y = svg_of(q, &o);
	assert_string_equal(x, y);
	/* Children left to right by name: hash before parse, and mix is drawn inline. */
	char *hash = strstr(x, "<title>hash\n"), *parse = strstr(x, "<title>parse\n");
	assert_non_null(hash);
	assert_non_null(parse);
	assert_true(hash < parse);
	assert_non_null(strstr(x, "<g class=\"i\" data-w=\"50\"><title>mix\n50 samples, 50.00%, inlined"));
	free(x);
	free(y);
	prof_free(p);
	prof_free(q);
}

static void narrow_frames_get_cut_labels_and_tiny_ones_are_pruned(void **state)
{
	(void)state;
	static const int a[4] = { 0, 1, 2, 3 };
	struct prof *p = build(a);
	struct rep_flame_opts o;
	rep_flame_opts_init(&o);
	o.width = 200; /* 180 pixels for 100 samples: idle (5) is 9 px, read (30) 54 px */
	char *x = svg_of(p, &o);
	assert_non_null(strstr(x, "<title>idle\n"));
	assert_non_null(strstr(x, ">read</text>"));
	assert_non_null(strstr(x, "<title>idle\n5 samples, 5.00%</title><rect x=\"10.00\" y=\"84\" width=\"9.00\" height=\"15\" fill=\""));
	assert_null(strstr(x, ">idle</text>")); /* 9 px hold no 3 characters */
	free(x);
	o.minwidth = 10; /* now idle goes */
	x = svg_of(p, &o);
	assert_null(strstr(x, "<title>idle\n"));
	free(x);
	prof_free(p);
}

static void empty_profile_is_an_error(void **state)
{
	(void)state;
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	assert_int_equal(prof_finish(p), 0);
	struct rep_flame_opts o;
	rep_flame_opts_init(&o);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_true(rep_flamegraph(f, p, &o) < 0);
	fclose(f);
	free(buf);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xml_escapes_markup_and_repairs_invalid_utf8),
		cmocka_unit_test(utf8_prefix_counts_characters_not_bytes),
		cmocka_unit_test(colour_depends_on_name_and_kind_only),
		cmocka_unit_test(colours_are_libms),
		cmocka_unit_test(svg_is_identical_whatever_the_sample_order),
		cmocka_unit_test(narrow_frames_get_cut_labels_and_tiny_ones_are_pruned),
		cmocka_unit_test(empty_profile_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
