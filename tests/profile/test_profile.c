/*
 * The profile model: interning, the calling-context tree keyed by call site, canonical
 * order, per-function figures, filters, merge, CCT events and the diff model.
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

static struct prof *new_prof(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	return p;
}

static uint32_t fn(struct prof *p, const char *name, enum prof_kind k)
{
	struct prof_frame_desc d = { .kind = k, .function = name, .module = PROF_NONE };
	uint32_t f = prof_frame(p, &d);
	assert_int_not_equal(f, PROF_NONE);
	return f;
}

/* Adds "root;...;leaf" with weight w, all native, pc 0. */
static void add(struct prof *p, const char *folded, int64_t w)
{
	struct prof_loc st[32];
	size_t n = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", folded);
	for (char *save, *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save))
		st[n++] = (struct prof_loc){ fn(p, t, PROF_NATIVE), 0, 0 };
	for (size_t i = 0; i < n / 2; i++) {
		struct prof_loc x = st[i];
		st[i] = st[n - 1 - i];
		st[n - 1 - i] = x;
	}
	assert_int_equal(prof_add_stack(p, st, n, &w), 0);
}

struct dump {
	char s[2048];
	size_t n;
};

static int dump_enter(const struct prof *p, uint32_t node, void *ctx)
{
	struct dump *d = ctx;
	if (node == PROF_ROOT)
		return 0;
	const struct prof_node *n = prof_node_at(p, node);
	d->n += (size_t)snprintf(d->s + d->n, sizeof(d->s) - d->n, "%u:%s=%lld ", n->depth,
				 prof_frame_label(p, n->frame), (long long)prof_self(p, node)[0]);
	return 0;
}

static const char *dump(const struct prof *p, struct dump *d)
{
	d->n = 0;
	d->s[0] = 0;
	assert_int_equal(prof_walk(p, dump_enter, NULL, d), 0);
	return d->s;
}

static void profile_strings_and_frames_are_interned(void **state)
{
	struct prof *p = new_prof();
	uint32_t a = prof_intern_cstr(p, "foo"), b = prof_intern(p, "foobar", 3);
	assert_int_equal(a, b);
	assert_int_equal(prof_intern_cstr(p, ""), 0);
	assert_int_equal(fn(p, "x", PROF_NATIVE), fn(p, "x", PROF_NATIVE));
	assert_int_not_equal(fn(p, "x", PROF_NATIVE), fn(p, "x", PROF_INLINE));
	assert_int_equal(prof_intern(p, "a\0b", 3), PROF_NONE); /* NUL inside: refused */
	uint32_t m = prof_module(p, "/lib/libfoo.so", "abcd", 0x7f0000);
	struct prof_frame_desc d = { .kind = PROF_NATIVE, .module = m, .addr = 0x1234 };
	assert_string_equal(prof_frame_label(p, prof_frame(p, &d)), "libfoo.so+0x1234");
	prof_free(p);
}

static void profile_call_sites_make_distinct_nodes(void **state)
{
	struct prof *p = new_prof();
	uint32_t f = fn(p, "f", PROF_NATIVE), g = fn(p, "g", PROF_NATIVE);
	int64_t one = 1;
	struct prof_loc s1[] = { { g, 0, 0x200 }, { f, 10, 0x100 } };
	struct prof_loc s2[] = { { g, 0, 0x204 }, { f, 11, 0x108 } };
	struct prof_loc s3[] = { { g, 0, 0x200 }, { f, 10, 0x100 } };
	assert_int_equal(prof_add_stack(p, s1, 2, &one), 0);
	assert_int_equal(prof_add_stack(p, s2, 2, &one), 0);
	assert_int_equal(prof_add_stack(p, s3, 2, &one), 0);
	/* root, f, g called from 0x100, g called from 0x108 */
	assert_int_equal(prof_nnodes(p), 4);
	assert_int_equal(prof_finish(p), 0);
	struct prof *m;
	assert_int_equal(prof_merge_callsites(p, &m), 0);
	assert_int_equal(prof_nnodes(m), 3);
	/* The per-pc weights survive the merge: g has 2 at 0x200 and 1 at 0x204. */
	const struct prof_node *gn = prof_node_at(m, prof_node_at(m, prof_node_at(m, 0)->first_child)->first_child);
	const struct prof_pcw *e = prof_pcw_at(m, gn->first_pc);
	assert_int_equal(e->pc, 0x200);
	assert_int_equal(prof_pcw_weights(m, gn->first_pc)[0], 2);
	assert_int_equal(prof_pcw_at(m, e->next)->pc, 0x204);
	assert_int_equal(prof_self(m, prof_node_at(m, 0)->first_child)[0], 0);
	prof_free(m);
	prof_free(p);
}

/* The node depth levels below the root, following first children. */
static const struct prof_node *first_at_depth(const struct prof *p, unsigned depth)
{
	uint32_t node = PROF_ROOT;
	while (depth--)
		node = prof_node_at(p, node)->first_child;
	return prof_node_at(p, node);
}

/* A stack added through prof_add_stack_kept (where the profile keeps it learnt once) weighs
 * exactly as the same stacks added by prof_add_stack: per node and per pc, innermost pcs
 * varying from one sample to the next. */
static void profile_kept_stacks_weigh_as_looked_up_ones(void **state)
{
	struct prof *a = new_prof(), *b = new_prof();
	uint32_t kept[2] = { PROF_NONE, PROF_NONE };
	for (int i = 0; i < 40; i++) {
		for (int which = 0; which < 2; which++) {
			int64_t w = 1 + i % 3;
			for (int k = 0; k < 2; k++) {
				struct prof *p = k ? b : a;
				uint32_t main_f = fn(p, "main", PROF_NATIVE), f = fn(p, "f", PROF_NATIVE);
				uint32_t leaf = fn(p, which ? "g" : "h", PROF_NATIVE);
				struct prof_loc st[] = { { leaf, 0, 0x300 + 4 * (uint64_t)(i % 5) },
							 { f, 7, 0x200 },
							 { main_f, 3, 0x100 } };
				if (k)
					assert_int_equal(prof_add_stack(p, st, 3, &w), 0);
				else
					assert_int_equal(prof_add_stack_kept(p, st, 3, &w, &kept[which]),
							 0);
			}
		}
	}
	assert_int_not_equal(kept[0], PROF_NONE);
	assert_int_not_equal(kept[0], kept[1]);
	assert_int_equal(prof_finish(a), 0);
	assert_int_equal(prof_finish(b), 0);
	struct dump da, db;
	assert_string_equal(dump(a, &da), dump(b, &db));
	const struct prof_node *ga = first_at_depth(a, 3), *gb = first_at_depth(b, 3);
	uint32_t ea = ga->first_pc, eb = gb->first_pc;
	for (; ea != PROF_NONE && eb != PROF_NONE;
	     ea = prof_pcw_at(a, ea)->next, eb = prof_pcw_at(b, eb)->next) {
		assert_int_equal(prof_pcw_at(a, ea)->pc, prof_pcw_at(b, eb)->pc);
		assert_int_equal(prof_pcw_weights(a, ea)[0], prof_pcw_weights(b, eb)[0]);
	}
	assert_int_equal(ea, eb); /* both lists ended */
	prof_free(a);
	prof_free(b);
}

static void profile_order_does_not_depend_on_arrival(void **state)
{
	struct prof *a = new_prof(), *b = new_prof();
	const char *stacks[] = { "main;zeta", "main;alpha;x", "main;mid", "other" };
	for (int i = 0; i < 4; i++)
		add(a, stacks[i], i + 1);
	for (int i = 3; i >= 0; i--)
		add(b, stacks[i], i + 1);
	assert_int_equal(prof_finish(a), 0);
	assert_int_equal(prof_finish(b), 0);
	struct dump da, db;
	assert_string_equal(dump(a, &da), dump(b, &db));
	assert_string_equal(da.s, "1:main=0 2:alpha=0 3:x=2 2:mid=3 2:zeta=1 1:other=4 ");
	prof_free(a);
	prof_free(b);
}

static void profile_function_total_counts_recursion_once(void **state)
{
	struct prof *p = new_prof();
	add(p, "main;f;f;f", 4);
	add(p, "main;f;g", 1);
	assert_int_equal(prof_finish(p), 0);
	struct prof_funcs fs;
	assert_int_equal(prof_func_stats(p, &fs), 0);
	assert_int_equal(fs.n, 3);
	/* canonical order: f, g, main */
	assert_string_equal(prof_frame_label(p, fs.frame[0]), "f");
	assert_int_equal(fs.self[0], 4);
	assert_int_equal(fs.total[0], 5);
	assert_int_equal(fs.total[2], 5);
	int64_t t;
	prof_grand_total(p, &t);
	assert_int_equal(t, 5);
	prof_funcs_free(&fs);
	prof_free(p);
}

static bool is_named(const struct prof *p, uint32_t f, void *name)
{
	return !strcmp(prof_frame_label(p, f), name);
}

static void profile_filters_keep_totals_where_they_should(void **state)
{
	struct prof *p = new_prof(), *q;
	struct dump d;
	add(p, "a;b;a;c", 2);
	add(p, "a;a;a", 3);
	add(p, "x;y", 5);
	assert_int_equal(prof_finish(p), 0);
	assert_int_equal(prof_fold_recursion(p, &q), 0);
	assert_string_equal(dump(q, &d), "1:a=3 2:b=0 2:c=2 1:x=0 2:y=5 ");
	prof_free(q);
	assert_int_equal(prof_hide(p, is_named, "b", &q), 0);
	assert_string_equal(dump(q, &d), "1:a=0 2:a=0 3:a=3 3:c=2 1:x=0 2:y=5 ");
	prof_free(q);
	assert_int_equal(prof_hide(p, is_named, "y", &q), 0);
	assert_string_equal(dump(q, &d), "1:a=0 2:a=0 3:a=3 2:b=0 3:a=0 4:c=2 1:x=5 ");
	prof_free(q);
	assert_int_equal(prof_focus(p, is_named, "c", &q), 0);
	assert_string_equal(dump(q, &d), "1:a=0 2:b=0 3:a=0 4:c=2 ");
	prof_free(q);
	prof_free(p);
}

static void profile_cct_events_build_the_tree(void **state)
{
	struct prof *p = new_prof();
	struct prof_cct *c;
	assert_int_equal(prof_cct_new(&c), 0);
	assert_int_not_equal(prof_cct_cost(c, 0, 7), 0); /* no frame yet */
	assert_int_equal(prof_cct_enter(c, fn(p, "entry", PROF_PROGRAM), 0), 1);
	assert_int_equal(prof_cct_cost(c, 0x10, 7), 0);
	assert_int_equal(prof_cct_enter(c, fn(p, "sol_log", PROF_SYSCALL), 0x18), 1);
	assert_int_equal(prof_cct_cost(c, 0, 7), 0);
	assert_int_equal(prof_cct_exit(c), 0);
	assert_int_equal(prof_cct_enter(c, fn(p, "sol_log", PROF_SYSCALL), 0x18), 0); /* again */
	assert_int_equal(prof_cct_exit(c), 0);
	assert_int_equal(prof_cct_cost(c, 0x20, 7), 0);
	assert_int_equal(prof_cct_exit(c), 0);
	assert_int_not_equal(prof_cct_exit(c), 0);
	assert_true(prof_cct_ok(c));
	assert_int_equal(prof_cct_total(c), 21);
	assert_int_equal(prof_cct_build(c, p, 0, NULL), 0);
	prof_cct_free(c);
	assert_int_equal(prof_finish(p), 0);
	struct dump d;
	assert_string_equal(dump(p, &d), "1:entry=14 2:sol_log=7 ");
	const struct prof_node *s = prof_node_at(p, prof_node_at(p, prof_node_at(p, 0)->first_child)->first_child);
	assert_int_equal(s->call_pc, 0x18);
	prof_free(p);
}

/* The per-instruction path: runs inside the span, then outside it on both sides (the array
 * widens), across its end, then a cost at the root, which the builder remembers as a
 * failure. */
static void profile_cct_count_widens_and_remembers_failure(void **state)
{
	struct prof *p = new_prof();
	struct prof_cct *c;
	assert_int_equal(prof_cct_new(&c), 0);
	assert_int_equal(prof_cct_enter(c, fn(p, "f", PROF_NATIVE), 0), 1);
	assert_int_equal(prof_cct_span(c, 100, 4), 0);
	prof_cct_count_run(c, 100, 4);
	prof_cct_count_run(c, 103, 1);
	prof_cct_count_run(c, 102, 4);
	prof_cct_count_run(c, 90, 1);
	prof_cct_count_run(c, 130, 1);
	prof_cct_count_run(c, 100, 1);
	assert_int_equal(prof_cct_total(c), 12);
	assert_int_equal(prof_cct_build(c, p, 0, NULL), 0);
	assert_int_equal(prof_finish(p), 0);
	uint32_t f = prof_node_at(p, 0)->first_child;
	uint64_t seen = 0;
	for (uint32_t e = prof_node_at(p, f)->first_pc; e != PROF_NONE; e = prof_pcw_at(p, e)->next)
		seen += (uint64_t)prof_pcw_weights(p, e)[0] << (prof_pcw_at(p, e)->pc == 103 ? 8 : 0);
	assert_int_equal(seen, 3 << 8 | 9); /* 103 three times; 100, 102 twice; five pcs once */
	assert_int_equal(prof_cct_exit(c), 0);
	prof_cct_count_run(c, 100, 1);
	assert_false(prof_cct_ok(c));
	assert_int_not_equal(prof_cct_build(c, p, 0, NULL), 0);
	prof_cct_free(c);
	prof_free(p);
}

/* Entering the child just left again, returning, resuming a noted node: the shortcuts
 * (no lookup) and the lookups land on the same nodes, also after an array moved. */
static void profile_cct_reentry_and_resume_keep_costs(void **state)
{
	struct prof *p = new_prof();
	struct prof_cct *c;
	uint32_t f = fn(p, "f", PROF_NATIVE), g = fn(p, "g", PROF_NATIVE);
	assert_int_equal(prof_cct_new(&c), 0);
	assert_int_equal(prof_cct_enter(c, f, 0), 1);
	uint32_t fnode = prof_cct_current(c);
	assert_int_equal(prof_cct_span(c, 10, 1), 0);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(prof_cct_enter(c, g, 10), i == 0);
		prof_cct_count_run(c, 20, 1);
		prof_cct_count_run(c, 20 + 100 * i, 1); /* widens g's array */
		assert_int_equal(prof_cct_exit(c), 0);
		assert_int_equal(prof_cct_current(c), fnode);
	}
	assert_int_equal(prof_cct_enter(c, g, 10), 0);
	prof_cct_resume(c, fnode); /* g stops without returning */
	assert_int_equal(prof_cct_cost(c, 10, 5), 0);
	assert_int_equal(prof_cct_enter(c, g, 10), 0);
	assert_int_equal(prof_cct_cost(c, 20, 1), 0);
	assert_true(prof_cct_ok(c));
	assert_int_equal(prof_cct_total(c), 12);
	assert_int_equal(prof_cct_build(c, p, 0, NULL), 0);
	prof_cct_free(c);
	assert_int_equal(prof_finish(p), 0);
	struct dump d;
	assert_string_equal(dump(p, &d), "1:f=5 2:g=7 ");
	prof_free(p);
}

/* A source that knows its frames by keys places nodes and pcs itself. */
static uint32_t keyed_node(void *ctx, struct prof *p, uint32_t parent, uint64_t parent_key,
			   uint64_t key, uint64_t call_pc)
{
	(void)ctx;
	assert_true(parent_key == PROF_CCT_NO_KEY ? key == 1 : parent_key == 1 && key == 2);
	return prof_child(p, parent, fn(p, key == 1 ? "outer" : "inner", PROF_NATIVE), call_pc, 0);
}

static uint32_t keyed_pc(void *ctx, struct prof *p, uint32_t node, uint64_t key, uint64_t pc,
			 uint64_t *addr, uint32_t *line)
{
	(void)ctx;
	(void)key;
	*addr = 0x1000 + pc * 8;
	*line = 7;
	return pc == 5 ? prof_child(p, node, fn(p, "inlined", PROF_INLINE), 0, 7) : node;
}

static void profile_cct_place_callbacks_symbolize_keys(void **state)
{
	struct prof *p = new_prof();
	struct prof_cct *c;
	assert_int_equal(prof_cct_new(&c), 0);
	assert_int_equal(prof_cct_enter(c, 1, 0), 1);
	prof_cct_count_run(c, 4, 2);
	assert_int_equal(prof_cct_enter(c, 2, 5), 1);
	prof_cct_count_run(c, 4, 1);
	struct prof_cct_place place = { NULL, keyed_node, keyed_pc };
	assert_int_equal(prof_cct_build(c, p, 0, &place), 0);
	prof_cct_free(c);
	assert_int_equal(prof_finish(p), 0);
	struct dump d;
	assert_string_equal(dump(p, &d), "1:outer=1 2:inlined=1 2:inner=1 ");
	uint32_t outer = prof_node_at(p, 0)->first_child;
	assert_int_equal(prof_pcw_at(p, prof_node_at(p, outer)->first_pc)->pc, 0x1020);
	prof_free(p);
}

static void profile_merge_adds_and_checks_metrics(void **state)
{
	struct prof *a = new_prof(), *b = new_prof(), *c;
	add(a, "m;f", 1);
	add(b, "m;f", 2);
	add(b, "m;g", 3);
	assert_int_equal(prof_merge(a, b), 0);
	assert_int_equal(prof_finish(a), 0);
	struct dump d;
	assert_string_equal(dump(a, &d), "1:m=0 2:f=3 2:g=3 ");
	assert_int_equal(prof_new(&c), 0);
	assert_int_equal(prof_add_metric(c, "cpu", "nanoseconds"), 0);
	assert_int_not_equal(prof_merge(a, c), 0);
	prof_free(a);
	prof_free(b);
	prof_free(c);
}

static void profile_diff_matches_frames_by_content(void **state)
{
	struct prof *a = new_prof(), *b = new_prof(), *d;
	/* Different addresses and lines (two builds) must still match. */
	struct prof_frame_desc fa = { PROF_NATIVE, "hot", "x.c", 10, PROF_NONE, 0x100 };
	struct prof_frame_desc fb = { PROF_NATIVE, "hot", "x.c", 12, PROF_NONE, 0x180 };
	int64_t w1 = 5, w2 = 8;
	struct prof_loc la = { prof_frame(a, &fa), 0, 0 }, lb = { prof_frame(b, &fb), 0, 0 };
	assert_int_equal(prof_add_stack(a, &la, 1, &w1), 0);
	assert_int_equal(prof_add_stack(b, &lb, 1, &w2), 0);
	add(b, "new", 1);
	assert_int_equal(prof_finish(a), 0);
	assert_int_equal(prof_finish(b), 0);
	assert_int_equal(prof_diff(a, -1, b, -1, &d), 0);
	assert_int_equal(prof_nmetrics(d), 2);
	assert_int_equal(prof_nnodes(d), 3);
	uint32_t hot = prof_node_at(d, 0)->first_child;
	assert_string_equal(prof_frame_label(d, prof_node_at(d, hot)->frame), "hot");
	assert_int_equal(prof_self(d, hot)[PROF_DIFF_BEFORE], 5);
	assert_int_equal(prof_self(d, hot)[PROF_DIFF_AFTER], 8);
	prof_free(a);
	prof_free(b);
	prof_free(d);
}

static void profile_weight_overflow_is_an_error(void **state)
{
	struct prof *p = new_prof();
	uint32_t f = fn(p, "f", PROF_NATIVE);
	struct prof_loc l = { f, 0, 0 };
	int64_t big = INT64_MAX - 1;
	assert_int_equal(prof_add_stack(p, &l, 1, &big), 0);
	assert_int_not_equal(prof_add_stack(p, &l, 1, &big), 0);
	assert_int_equal(prof_self(p, 1)[0], INT64_MAX - 1);
	prof_free(p);
}

static void profile_empty_stack_lands_on_truncated(void **state)
{
	struct prof *p = new_prof();
	int64_t w = 3;
	assert_int_equal(prof_add_stack(p, NULL, 0, &w), 0);
	assert_int_equal(prof_finish(p), 0);
	struct dump d;
	assert_string_equal(dump(p, &d), "1:[truncated]=3 ");
	prof_free(p);
}

static void profile_deep_stacks_survive_every_transformation(void **state)
{
	struct prof *p = new_prof(), *q;
	struct prof_loc st[300];
	char name[16];
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%d", i % 7);
		st[i] = (struct prof_loc){ fn(p, name, PROF_NATIVE), 0, (uint64_t)i + 1 };
	}
	int64_t w = 5;
	assert_int_equal(prof_add_stack(p, st, 300, &w), 0);
	assert_int_equal(prof_finish(p), 0);
	int64_t t;
	assert_int_equal(prof_merge_callsites(p, &q), 0);
	assert_int_equal(prof_nnodes(q), 301);
	prof_grand_total(q, &t);
	assert_int_equal(t, 5);
	struct prof *r;
	assert_int_equal(prof_fold_recursion(q, &r), 0);
	assert_int_equal(prof_nnodes(r), 8); /* root and f5..f6, each once */
	prof_grand_total(r, &t);
	assert_int_equal(t, 5);
	prof_free(r);
	prof_free(q);
	/* With call sites kept, folding still keeps every sample. */
	assert_int_equal(prof_fold_recursion(p, &q), 0);
	prof_grand_total(q, &t);
	assert_int_equal(t, 5);
	prof_free(q);
	assert_int_equal(prof_hide(p, is_named, "f3", &q), 0);
	prof_grand_total(q, &t);
	assert_int_equal(t, 5);
	prof_free(q);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profile_strings_and_frames_are_interned),
		cmocka_unit_test(profile_call_sites_make_distinct_nodes),
		cmocka_unit_test(profile_kept_stacks_weigh_as_looked_up_ones),
		cmocka_unit_test(profile_order_does_not_depend_on_arrival),
		cmocka_unit_test(profile_function_total_counts_recursion_once),
		cmocka_unit_test(profile_filters_keep_totals_where_they_should),
		cmocka_unit_test(profile_cct_events_build_the_tree),
		cmocka_unit_test(profile_cct_count_widens_and_remembers_failure),
		cmocka_unit_test(profile_cct_place_callbacks_symbolize_keys),
		cmocka_unit_test(profile_cct_reentry_and_resume_keep_costs),
		cmocka_unit_test(profile_merge_adds_and_checks_metrics),
		cmocka_unit_test(profile_diff_matches_frames_by_content),
		cmocka_unit_test(profile_weight_overflow_is_an_error),
		cmocka_unit_test(profile_empty_stack_lands_on_truncated),
		cmocka_unit_test(profile_deep_stacks_survive_every_transformation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
