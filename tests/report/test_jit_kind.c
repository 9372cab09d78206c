/*
 * JIT frames in every output: the text report's [jit] mark, the flame graph's class, colour
 * and legend, pprof's system_name and mapping (the map file that named the code), speedscope
 * and folded with --kinds, and the readers taking the kind back. Expected text by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "profile/read.h"
#include "report/flamegraph.h"
#include "report/flamegraph_impl.h"
#include "report/report.h"
#include "memout.h"

#define JS_NAME "JS:*fib app.js:1:13"
#define MAP_PATH "/tmp/perf-42.map"

/* node's main calling a JIT-compiled function named by a perf map, 3 samples. */
static struct prof *jit_profile(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	uint32_t node = prof_module(p, "/usr/bin/node", "", 0x555500000000);
	uint32_t map = prof_module(p, MAP_PATH, "", 0);
	struct prof_frame_desc dm = { PROF_NATIVE, "main", NULL, 0, node, 0x40 };
	struct prof_frame_desc dj = { PROF_JIT, JS_NAME, NULL, 0, map, 0x7f0000001000 };
	struct prof_loc st[] = { { prof_frame(p, &dj), 0, 0x7f0000001010 },
				 { prof_frame(p, &dm), 0, 0x48 } };
	int64_t w = 3;
	assert_int_equal(prof_add_stack(p, st, 2, &w), 0);
	assert_int_equal(prof_finish(p), 0);
	return p;
}

/* The kind of the frame labelled name in p. */
static int kind_of(const struct prof *p, const char *name)
{
	for (uint32_t i = 0; i < prof_nframes(p); i++)
		if (!strcmp(prof_frame_label(p, i), name))
			return prof_frame_at(p, i)->kind;
	return -1;
}

static void text_report_marks_jit_frames_with_their_map(void **state)
{
	(void)state;
	struct prof *p = jit_profile();
	struct out o;
	struct rep_text_opts to = { .metric = 0, .top = 1 };
	assert_int_equal(rep_text(out_open(&o), p, &to), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "  " JS_NAME " [jit]  (perf-42.map)\n"));
	free(s);
	prof_free(p);
}

static void flame_graph_draws_jit_frames_in_their_own_class_and_colour(void **state)
{
	(void)state;
	struct prof *p = jit_profile();
	struct out o;
	struct rep_flame_opts fo;
	rep_flame_opts_init(&fo);
	assert_int_equal(rep_flamegraph(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "<g class=\"j\" data-w=\"3\"><title>" JS_NAME "\n"));
	assert_non_null(strstr(s, "<g class=\"legend j\">"));
	char jit[8], native[8];
	fg_color(jit, JS_NAME, FG_JIT);
	fg_color(native, JS_NAME, FG_NATIVE);
	assert_string_not_equal(jit, native);
	/* green: more green than red or blue */
	unsigned r, g, b;
	assert_int_equal(sscanf(jit, "#%2x%2x%2x", &r, &g, &b), 3);
	assert_true(g > r && g > b);
	free(s);
	prof_free(p);
}

static void pprof_keeps_the_kind_and_names_the_map_as_mapping(void **state)
{
	(void)state;
	struct prof *p = jit_profile(), *q;
	uint8_t *buf;
	size_t len;
	assert_int_equal(rep_pprof_encode(p, &buf, &len), 0);
	assert_non_null(memmem(buf, len, JS_NAME " [jit]", strlen(JS_NAME " [jit]")));
	assert_int_equal(prof_read_pprof("x.pb", buf, len, &q), 0);
	assert_int_equal(kind_of(q, JS_NAME), PROF_JIT);
	bool found = false;
	for (uint32_t i = 0; i < prof_nframes(q); i++) {
		const struct prof_frame *f = prof_frame_at(q, i);
		if (f->kind == PROF_JIT)
			found = !strcmp(prof_str(q, prof_module_at(q, f->module)->path), MAP_PATH);
	}
	assert_true(found);
	free(buf);
	prof_free(q);
	prof_free(p);
}

static void speedscope_names_jit_frames_with_their_kind(void **state)
{
	(void)state;
	struct prof *p = jit_profile();
	struct out o;
	assert_int_equal(rep_speedscope(out_open(&o), p, "t", false), 0);
	char *s = out_close(&o);
	assert_non_null(strstr(s, "{\"name\":\"" JS_NAME " [jit]\"}"));
	free(s);
	prof_free(p);
}

static void folded_kinds_suffix_jit_frames_and_reads_them_back(void **state)
{
	(void)state;
	struct prof *p = jit_profile(), *q;
	struct out o;
	struct rep_folded_opts fo = { .metric = 0, .annotate_kinds = true };
	assert_int_equal(rep_folded(out_open(&o), p, &fo), 0);
	char *s = out_close(&o);
	assert_string_equal(s, "main;" JS_NAME "_[j] 3\n");
	assert_int_equal(prof_read_folded("x.folded", s, strlen(s), &q), 0);
	assert_int_equal(kind_of(q, JS_NAME), PROF_JIT);
	free(s);
	prof_free(q);
	prof_free(p);
}

static void jit_kind_comes_after_the_older_kinds(void **state)
{
	(void)state;
	/* Kinds sort frames by value: the older kinds keep their order, and every output made
	 * before JIT frames existed stays byte for byte the same. */
	assert_int_equal(PROF_JIT, PROF_TRUNCATED + 1);
	assert_int_equal(PROF_PYTHON, PROF_JIT + 1);
	assert_string_equal(prof_kind_name(PROF_JIT), "jit");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_report_marks_jit_frames_with_their_map),
		cmocka_unit_test(flame_graph_draws_jit_frames_in_their_own_class_and_colour),
		cmocka_unit_test(pprof_keeps_the_kind_and_names_the_map_as_mapping),
		cmocka_unit_test(speedscope_names_jit_frames_with_their_kind),
		cmocka_unit_test(folded_kinds_suffix_jit_frames_and_reads_them_back),
		cmocka_unit_test(jit_kind_comes_after_the_older_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
