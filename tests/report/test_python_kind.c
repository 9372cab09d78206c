/*
 * Python frames in every output: the text report's [python] mark with the function's file
 * and first line, the flame graph's class, colour family and legend, pprof's Function
 * (name, filename, start_line = co_firstlineno, system_name NAME [python]) with the frame's
 * line in its Line and no mapping, speedscope, folded with --kinds, the readers taking
 * the kind back, and annotate refusing a Python function cleanly. Expected text by hand.
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

#define PY_FILE "/app/work.py"
#define INTERP "/usr/bin/python3.11"

/* python3.11's main running <module> (first line 1) at line 9, which calls f (first line
 * 3) at its line 4, which calls the C function math_factorial: 3 samples. */
static struct prof *python_profile(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	uint32_t py = prof_module(p, INTERP, "", 0);
	uint32_t math = prof_module(p, "/usr/lib/python3.11/lib-dynload/math.so", "", 0);
	struct prof_frame_desc dm = { PROF_NATIVE, "main", NULL, 0, py, 0x60a880 };
	struct prof_frame_desc dmod = { PROF_PYTHON, "<module>", PY_FILE, 1, py, 0 };
	struct prof_frame_desc df = { PROF_PYTHON, "f", PY_FILE, 3, py, 0 };
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

static void text_report_marks_python_frames_with_file_and_first_line(void **state)
{
	(void)state;
	struct prof *p = python_profile();
	struct out o;
	struct rep_text_opts to = { .metric = 0, .top = 4 };
	assert_int_equal(rep_text(out_open(&o), p, &to), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "  f [python]  (" PY_FILE ":3)\n"));
	assert_non_null(strstr(s, "  <module> [python]  (" PY_FILE ":1)\n"));
	assert_non_null(strstr(s, "  math_factorial  (math.so)\n"));
	free(s);
	prof_free(p);
}

static void flame_graph_draws_python_frames_in_their_own_class_and_colour(void **state)
{
	(void)state;
	struct prof *p = python_profile();
	struct out o;
	struct rep_flame_opts fo;
	rep_flame_opts_init(&fo);
	assert_int_equal(rep_flamegraph(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "<g class=\"y\" data-w=\"3\"><title>f\n3 samples, 100.00%, Python"));
	assert_non_null(strstr(s, "<g class=\"legend y\">"));
	assert_non_null(strstr(s, ">Python</text>"));
	/* blue: more blue than red or green, for any name */
	const char *names[] = { "f", "<module>", "Sorter.run", "a_much_longer_qualified.name" };
	for (size_t i = 0; i < 4; i++) {
		char c[8];
		unsigned r, g, b;
		fg_color(c, names[i], FG_PYTHON);
		assert_int_equal(sscanf(c, "#%2x%2x%2x", &r, &g, &b), 3);
		assert_true(b > r && b > g);
	}
	free(s);
	prof_free(p);
}

static void pprof_gives_python_frames_their_function_line_and_start_line(void **state)
{
	(void)state;
	struct prof *p = python_profile(), *q;
	uint8_t *buf;
	size_t len;
	assert_int_equal(rep_pprof_encode(p, &buf, &len), 0);
	assert_non_null(memmem(buf, len, "f [python]", strlen("f [python]")));
	assert_int_equal(prof_read_pprof("x.pb", buf, len, &q), 0);
	const struct prof_frame *f = prof_frame_at(q, frame_named(q, "f"));
	assert_int_equal(f->kind, PROF_PYTHON);
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

static void speedscope_names_python_frames_with_their_kind(void **state)
{
	(void)state;
	struct prof *p = python_profile();
	struct out o;
	assert_int_equal(rep_speedscope(out_open(&o), p, "t", false), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "{\"name\":\"f [python]\",\"file\":\"" PY_FILE "\",\"line\":3}"));
	free(s);
	prof_free(p);
}

static void folded_kinds_suffix_python_frames_and_reads_them_back(void **state)
{
	(void)state;
	struct prof *p = python_profile(), *q;
	struct out o;
	struct rep_folded_opts fo = { .metric = 0, .annotate_kinds = true };
	assert_int_equal(rep_folded(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_string_equal(s, "main;<module>_[p];f_[p];math_factorial 3\n");
	assert_int_equal(prof_read_folded("x.folded", s, strlen(s), &q), 0);
	assert_int_equal(prof_frame_at(q, frame_named(q, "f"))->kind, PROF_PYTHON);
	free(s);
	prof_free(q);
	prof_free(p);
}

static void annotate_says_a_python_function_has_no_machine_code(void **state)
{
	(void)state;
	struct prof *p = python_profile();
	struct out o;
	struct rep_annot_opts ao = { .function = "f", .metric = -1 };
	assert_int_not_equal(rep_annotate(out_open(&o), p, &ao), 0);
	free(out_close(&o));
	assert_non_null(strstr(err_msg(), "'f' is a Python function: it has no machine code"));
	err_clear();
	prof_free(p);
}

static void python_kind_comes_after_the_older_kinds(void **state)
{
	(void)state;
	assert_int_equal(PROF_PYTHON, PROF_JIT + 1);
	assert_int_equal(PROF_RUBY, PROF_PYTHON + 1); /* and Ruby's after it */
	assert_string_equal(prof_kind_name(PROF_PYTHON), "python");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_report_marks_python_frames_with_file_and_first_line),
		cmocka_unit_test(flame_graph_draws_python_frames_in_their_own_class_and_colour),
		cmocka_unit_test(pprof_gives_python_frames_their_function_line_and_start_line),
		cmocka_unit_test(speedscope_names_python_frames_with_their_kind),
		cmocka_unit_test(folded_kinds_suffix_python_frames_and_reads_them_back),
		cmocka_unit_test(annotate_says_a_python_function_has_no_machine_code),
		cmocka_unit_test(python_kind_comes_after_the_older_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
