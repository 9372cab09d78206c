/*
 * Ruby frames in every output, as Python's (test_python_kind.c): the text report's [ruby]
 * mark with the method's file and first line, the flame graph's class, colour family (red)
 * and legend, pprof's Function (system_name NAME [ruby]) with the frame's line in its Line
 * and no mapping, speedscope, folded with --kinds (_[r]), the readers taking the kind back.
 * Expected text by hand.
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

#define PY_FILE "/app/work.rb"
#define INTERP "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"

/* ruby's main running <main> (first line 1) at line 9, which calls f (first line 3) at
 * its line 4, which calls the C function math_factorial: 3 samples. */
static struct prof *ruby_profile(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	uint32_t py = prof_module(p, INTERP, "", 0);
	uint32_t math = prof_module(p, "/usr/lib/ruby/math.so", "", 0);
	struct prof_frame_desc dm = { PROF_NATIVE, "main", NULL, 0, py, 0x60a880 };
	struct prof_frame_desc dmod = { PROF_RUBY, "<main>", PY_FILE, 1, py, 0 };
	struct prof_frame_desc df = { PROF_RUBY, "f", PY_FILE, 3, py, 0 };
	struct prof_frame_desc dc = { PROF_NATIVE, "math_factorial", NULL, 0, math, 0x4000 };
	struct prof_loc st[] = { { prof_frame(p, &dc), 0, 0x4010 },
				 { prof_frame(p, &df), 4, 0 },
				 { prof_frame(p, &dmod), 9, 0 },
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

static void text_report_marks_ruby_frames_with_file_and_first_line(void **state)
{
	(void)state;
	struct prof *p = ruby_profile();
	struct out o;
	struct rep_text_opts to = { .metric = 0, .top = 4 };
	assert_int_equal(rep_text(out_open(&o), p, &to), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "  f [ruby]  (" PY_FILE ":3)\n"));
	assert_non_null(strstr(s, "  <main> [ruby]  (" PY_FILE ":1)\n"));
	assert_non_null(strstr(s, "  math_factorial  (math.so)\n"));
	free(s);
	prof_free(p);
}

static void flame_graph_draws_ruby_frames_in_their_own_class_and_colour(void **state)
{
	(void)state;
	struct prof *p = ruby_profile();
	struct out o;
	struct rep_flame_opts fo;
	rep_flame_opts_init(&fo);
	assert_int_equal(rep_flamegraph(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "<g class=\"b\" data-w=\"3\"><title>f\n3 samples, 100.00%, Ruby"));
	assert_non_null(strstr(s, "<g class=\"legend b\">"));
	assert_non_null(strstr(s, ">Ruby</text>"));
	/* red: more red than green or blue, for any name */
	const char *names[] = { "f", "<main>", "block in run", "a_much_longer_qualified.name" };
	for (size_t i = 0; i < 4; i++) {
		char c[8];
		unsigned r, g, b;
		fg_color(c, names[i], FG_RUBY);
		assert_int_equal(sscanf(c, "#%2x%2x%2x", &r, &g, &b), 3);
		assert_true(r > g && r > b);
	}
	free(s);
	prof_free(p);
}

static void pprof_gives_ruby_frames_their_function_line_and_start_line(void **state)
{
	(void)state;
	struct prof *p = ruby_profile(), *q;
	uint8_t *buf;
	size_t len;
	assert_int_equal(rep_pprof_encode(p, &buf, &len), 0);
	assert_non_null(memmem(buf, len, "f [ruby]", strlen("f [ruby]")));
	assert_int_equal(prof_read_pprof("x.pb", buf, len, &q), 0);
	const struct prof_frame *f = prof_frame_at(q, frame_named(q, "f"));
	assert_int_equal(f->kind, PROF_RUBY);
	assert_string_equal(prof_str(q, f->file), PY_FILE);
	assert_int_equal(f->line, 3);
	assert_int_equal(f->module, PROF_NONE); /* no machine code: no mapping */
	/* math_factorial was called from f's line 4, f from the module's line 9 */
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

static void speedscope_names_ruby_frames_with_their_kind(void **state)
{
	(void)state;
	struct prof *p = ruby_profile();
	struct out o;
	assert_int_equal(rep_speedscope(out_open(&o), p, "t", false), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "{\"name\":\"f [ruby]\",\"file\":\"" PY_FILE "\",\"line\":3}"));
	free(s);
	prof_free(p);
}

static void folded_kinds_suffix_ruby_frames_and_reads_them_back(void **state)
{
	(void)state;
	struct prof *p = ruby_profile(), *q;
	struct out o;
	struct rep_folded_opts fo = { .metric = 0, .annotate_kinds = true };
	assert_int_equal(rep_folded(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_string_equal(s, "main;<main>_[r];f_[r];math_factorial 3\n");
	assert_int_equal(prof_read_folded("x.folded", s, strlen(s), &q), 0);
	assert_int_equal(prof_frame_at(q, frame_named(q, "f"))->kind, PROF_RUBY);
	free(s);
	prof_free(q);
	prof_free(p);
}

static void ruby_kind_comes_after_python(void **state)
{
	(void)state;
	assert_int_equal(PROF_RUBY, PROF_PYTHON + 1);
	assert_int_equal(PROF_NKINDS, PROF_RUBY + 1);
	assert_string_equal(prof_kind_name(PROF_RUBY), "ruby");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_report_marks_ruby_frames_with_file_and_first_line),
		cmocka_unit_test(flame_graph_draws_ruby_frames_in_their_own_class_and_colour),
		cmocka_unit_test(pprof_gives_ruby_frames_their_function_line_and_start_line),
		cmocka_unit_test(speedscope_names_ruby_frames_with_their_kind),
		cmocka_unit_test(folded_kinds_suffix_ruby_frames_and_reads_them_back),
		cmocka_unit_test(ruby_kind_comes_after_python),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
