/*
 * Interpreted frames (kinds python and ruby) in every output: the text report's [KIND]
 * mark with the function's file and first line, the flame graph's class, colour family and
 * legend, pprof's Function (name, filename, start_line, system_name NAME [KIND]) with the
 * frame's line in its Line and no mapping, speedscope, folded with --kinds, the readers
 * taking the kind back, and annotate refusing such a function cleanly. Each case is the
 * same profile: the interpreter's main code (first line 1) at line 9, calling f (first
 * line 3) at its line 4, which calls the C function math_factorial: 3 samples. Expected
 * text by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "profile/profile.h"
#include "profile/read.h"
#include "report/annotate.h"
#include "report/flamegraph.h"
#include "report/flamegraph_impl.h"
#include "report/report.h"
#include "memout.h"

struct kind_case {
	enum prof_kind kind;
	const char *file, *interp, *c_module; /* the script, the interpreter, math's module */
	const char *main_name;                /* the outermost interpreted frame */
	const char *text_f, *text_main;       /* the text report's lines */
	const char *svg_f, *svg_legend, *legend_text; /* the flame graph's */
	enum fg_kind fg;
	int channel; /* the colour family's strongest channel: 0 red, 2 blue */
	const char *pprof_f, *speedscope_f, *folded, *annotate;
	const char *kind_name;
};

static const struct kind_case python_case = {
	PROF_PYTHON, "/app/work.py", "/usr/bin/python3.11",
	"/usr/lib/python3.11/lib-dynload/math.so", "<module>",
	"  f [python]  (/app/work.py:3)\n", "  <module> [python]  (/app/work.py:1)\n",
	"<g class=\"y\" data-w=\"3\"><title>f\n3 samples, 100.00%, Python", "<g class=\"legend y\">",
	">Python</text>", FG_PYTHON, 2, "f [python]",
	"{\"name\":\"f [python]\",\"file\":\"/app/work.py\",\"line\":3}",
	"main;<module>_[p];f_[p];math_factorial 3\n",
	"'f' is a Python function: it has no machine code", "python",
};

static const struct kind_case ruby_case = {
	PROF_RUBY, "/app/work.rb", "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2",
	"/usr/lib/ruby/math.so", "<main>",
	"  f [ruby]  (/app/work.rb:3)\n", "  <main> [ruby]  (/app/work.rb:1)\n",
	"<g class=\"b\" data-w=\"3\"><title>f\n3 samples, 100.00%, Ruby", "<g class=\"legend b\">",
	">Ruby</text>", FG_RUBY, 0, "f [ruby]",
	"{\"name\":\"f [ruby]\",\"file\":\"/app/work.rb\",\"line\":3}",
	"main;<main>_[r];f_[r];math_factorial 3\n",
	"'f' is a Ruby function: it has no machine code", "ruby",
};

static struct prof *case_profile(const struct kind_case *k)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	uint32_t interp = prof_module(p, k->interp, "", 0);
	uint32_t math = prof_module(p, k->c_module, "", 0);
	struct prof_frame_desc dm = { PROF_NATIVE, "main", NULL, 0, interp, 0x60a880 };
	struct prof_frame_desc dmain = { k->kind, k->main_name, k->file, 1, interp, 0 };
	struct prof_frame_desc df = { k->kind, "f", k->file, 3, interp, 0 };
	struct prof_frame_desc dc = { PROF_NATIVE, "math_factorial", NULL, 0, math, 0x4000 };
	struct prof_loc st[] = { { prof_frame(p, &dc), 0, 0x4010 },
				 { prof_frame(p, &df), 4, 0 },
				 { prof_frame(p, &dmain), 9, 0 },
				 { prof_frame(p, &dm), 0, 0x60a884 } };
	int64_t w = 3;
	assert_int_equal(prof_add_stack(p, st, 4, &w), 0);
	assert_int_equal(prof_finish(p), 0);
	return p;
}

static uint32_t frame_named(const struct prof *p, const char *name)
{
	for (uint32_t i = 0; i < prof_nframes(p); i++)
		if (!strcmp(prof_frame_label(p, i), name))
			return i;
	fail_msg("no frame %s", name);
	return PROF_NONE;
}

static void text_report_marks_frames_with_file_and_first_line(void **state)
{
	const struct kind_case *k = *state;
	struct prof *p = case_profile(k);
	struct out o;
	struct rep_text_opts to = { .metric = 0, .top = 4 };
	assert_int_equal(rep_text(out_open(&o), p, &to), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, k->text_f));
	assert_non_null(strstr(s, k->text_main));
	assert_non_null(strstr(s, "  math_factorial  (math.so)\n"));
	free(s);
	prof_free(p);
}

static void flame_graph_draws_frames_in_their_own_class_and_colour(void **state)
{
	const struct kind_case *k = *state;
	struct prof *p = case_profile(k);
	struct out o;
	struct rep_flame_opts fo;
	rep_flame_opts_init(&fo);
	assert_int_equal(rep_flamegraph(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, k->svg_f));
	assert_non_null(strstr(s, k->svg_legend));
	assert_non_null(strstr(s, k->legend_text));
	/* the family's channel above the other two, for any name */
	const char *names[] = { "f", k->main_name, "Sorter.run", "a_much_longer_qualified.name" };
	for (size_t i = 0; i < 4; i++) {
		char c[8];
		unsigned rgb[3];
		fg_color(c, names[i], k->fg);
		assert_int_equal(sscanf(c, "#%2x%2x%2x", &rgb[0], &rgb[1], &rgb[2]), 3);
		for (int ch = 0; ch < 3; ch++)
			if (ch != k->channel)
				assert_true(rgb[k->channel] > rgb[ch]);
	}
	free(s);
	prof_free(p);
}

static void pprof_gives_frames_their_function_line_and_start_line(void **state)
{
	const struct kind_case *k = *state;
	struct prof *p = case_profile(k), *q;
	uint8_t *buf;
	size_t len;
	assert_int_equal(rep_pprof_encode(p, &buf, &len), 0);
	assert_non_null(memmem(buf, len, k->pprof_f, strlen(k->pprof_f)));
	assert_int_equal(prof_read_pprof("x.pb", buf, len, &q), 0);
	const struct prof_frame *f = prof_frame_at(q, frame_named(q, "f"));
	assert_int_equal(f->kind, k->kind);
	assert_string_equal(prof_str(q, f->file), k->file);
	assert_int_equal(f->line, 3);
	assert_int_equal(f->module, PROF_NONE); /* no machine code: no mapping */
	/* math_factorial was called from f's line 4, f from the main code's line 9 */
	uint32_t fid = frame_named(q, "f"), cid = frame_named(q, "math_factorial");
	bool at4 = false, at9 = false;
	for (uint32_t n = 1; n < prof_nnodes(q); n++) {
		const struct prof_node *x = prof_node_at(q, n);
		at4 |= x->frame == cid && prof_node_at(q, x->parent)->frame == fid && x->call_line == 4;
		at9 |= x->frame == fid && x->call_line == 9;
	}
	assert_true(at4);
	assert_true(at9);
	free(buf);
	prof_free(q);
	prof_free(p);
}

static void speedscope_names_frames_with_their_kind(void **state)
{
	const struct kind_case *k = *state;
	struct prof *p = case_profile(k);
	struct out o;
	assert_int_equal(rep_speedscope(out_open(&o), p, "t", false), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, k->speedscope_f));
	free(s);
	prof_free(p);
}

static void folded_kinds_suffix_frames_and_reads_them_back(void **state)
{
	const struct kind_case *k = *state;
	struct prof *p = case_profile(k), *q;
	struct out o;
	struct rep_folded_opts fo = { .metric = 0, .annotate_kinds = true };
	assert_int_equal(rep_folded(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_string_equal(s, k->folded);
	assert_int_equal(prof_read_folded("x.folded", s, strlen(s), &q), 0);
	assert_int_equal(prof_frame_at(q, frame_named(q, "f"))->kind, k->kind);
	free(s);
	prof_free(q);
	prof_free(p);
}

static void annotate_says_the_function_has_no_machine_code(void **state)
{
	const struct kind_case *k = *state;
	struct prof *p = case_profile(k);
	struct out o;
	struct rep_annot_opts ao = { .function = "f", .metric = -1 };
	assert_int_not_equal(rep_annotate(out_open(&o), p, &ao), 0);
	free(out_close(&o));
	assert_non_null(strstr(err_msg(), k->annotate));
	err_clear();
	prof_free(p);
}

static void kind_is_named(void **state)
{
	const struct kind_case *k = *state;
	assert_string_equal(prof_kind_name(k->kind), k->kind_name);
}

/* The kinds' numbers are in recordings' profiles: new ones come last. */
static void kinds_come_after_the_older_ones(void **state)
{
	(void)state;
	assert_int_equal(PROF_PYTHON, PROF_JIT + 1);
	assert_int_equal(PROF_RUBY, PROF_PYTHON + 1);
	assert_int_equal(PROF_NKINDS, PROF_RUBY + 1);
}

#define EACH_CASE(fn)                                                   \
	cmocka_unit_test_prestate(fn, (void *)&python_case),            \
		cmocka_unit_test_prestate(fn, (void *)&ruby_case)

int main(void)
{
	const struct CMUnitTest tests[] = {
		EACH_CASE(text_report_marks_frames_with_file_and_first_line),
		EACH_CASE(flame_graph_draws_frames_in_their_own_class_and_colour),
		EACH_CASE(pprof_gives_frames_their_function_line_and_start_line),
		EACH_CASE(speedscope_names_frames_with_their_kind),
		EACH_CASE(folded_kinds_suffix_frames_and_reads_them_back),
		EACH_CASE(annotate_says_the_function_has_no_machine_code),
		EACH_CASE(kind_is_named),
		cmocka_unit_test(kinds_come_after_the_older_ones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
