/*
 * pprof round trip at the model level: what rep_pprof_encode writes, prof_read_pprof reads
 * back with the same tree, kinds, pcs, lines, modules and facts; hostile bytes fail cleanly.
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
#include "profile/pb.h"
#include "profile/profile.h"
#include "profile/read.h"
#include "report/pprof_segments.h"
#include "report/report.h"

/* main (native) calls at 0x40 an address 0x120 where inner was inlined into outer; other
 * stacks hold frames of the kinds pprof has no word for, and a truncated one. */
static struct prof *sample_profile(void)
{
	struct prof *p;
	assert_int_equal(prof_new(&p), 0);
	assert_int_equal(prof_add_metric(p, "samples", "count"), 0);
	assert_int_equal(prof_add_metric(p, "cpu", "nanoseconds"), 1);
	assert_int_equal(prof_set_default_metric(p, 1), 0);
	assert_int_equal(prof_set_source(p, "unit test"), 0);
	assert_int_equal(prof_set_counter(p, "unwind.cfi", 41), 0);
	prof_set_times(p, 1700000000000000000, 2500000000);
	uint32_t m = prof_module(p, "/usr/bin/app", "0123abcd", 0x555500000000);
	struct prof_frame_desc dm = { PROF_NATIVE, "main", "app.c", 3, m, 0x10 };
	struct prof_frame_desc dout = { PROF_NATIVE, "outer", "app.c", 20, m, 0x100 };
	struct prof_frame_desc din = { PROF_INLINE, "inner", "inner.h", 5, m, 0 };
	struct prof_frame_desc dk = { PROF_KERNEL, "do_syscall_64", NULL, 0, PROF_NONE, 0 };
	uint32_t fm = prof_frame(p, &dm), fo = prof_frame(p, &dout), fi = prof_frame(p, &din);
	uint32_t fk = prof_frame(p, &dk);
	struct prof_loc s1[] = { { fi, 7, 0x120 }, { fo, 25, 0x120 }, { fm, 4, 0x40 } };
	struct prof_loc s2[] = { { fk, 0, 0 }, { fo, 22, 0x110 }, { fm, 5, 0x48 } };
	/* Kinds pprof has no word for: a syscall made from a VM frame. */
	struct prof_frame_desc dv = { PROF_VM, "lua_fn", "x.lua", 1, PROF_NONE, 0 };
	struct prof_frame_desc ds = { PROF_SYSCALL, "sol_log_", NULL, 0, PROF_NONE, 0 };
	struct prof_loc s3[] = { { prof_frame(p, &ds), 0, 0 }, { prof_frame(p, &dv), 2, 0 },
				 { fm, 6, 0x50 } };
	/* A frame not symbolized: known by its address only. */
	struct prof_frame_desc du = { PROF_NATIVE, NULL, NULL, 0, m, 0x777 };
	struct prof_loc s4[] = { { prof_frame(p, &du), 0, 0x777 }, { fm, 7, 0x58 } };
	/* A stack recovered only as far as outer: the truncated frame takes its place. */
	struct prof_frame_desc dt = { PROF_TRUNCATED, NULL, NULL, 0, PROF_NONE, 0 };
	struct prof_loc s5[] = { { fo, 30, 0x130 }, { prof_frame(p, &dt), 0, 0 } };
	int64_t w1[] = { 3, 3000 }, w2[] = { 1, 1000 }, w3[] = { 2, 2000 };
	assert_int_equal(prof_add_stack(p, s5, 2, w2), 0);
	assert_int_equal(prof_add_stack(p, s4, 2, w2), 0);
	assert_int_equal(prof_add_stack(p, s1, 3, w1), 0);
	assert_int_equal(prof_add_stack(p, s2, 3, w2), 0);
	assert_int_equal(prof_add_stack(p, s3, 3, w3), 0);
	assert_int_equal(prof_finish(p), 0);
	return p;
}

struct dump {
	char s[4096];
	size_t n;
};

static int dump_enter(const struct prof *p, uint32_t node, void *ctx)
{
	struct dump *d = ctx;
	if (node == PROF_ROOT)
		return 0;
	const struct prof_node *n = prof_node_at(p, node);
	const struct prof_frame *f = prof_frame_at(p, n->frame);
	const struct prof_module *m = prof_module_at(p, f->module);
	d->n += (size_t)snprintf(d->s + d->n, sizeof(d->s) - d->n, "[%u %s %s %s:%u %s call=%#llx:%u",
				 n->depth, prof_frame_label(p, n->frame), prof_kind_name(f->kind),
				 prof_str(p, f->file), f->line, m ? prof_str(p, m->build_id) : "-",
				 (unsigned long long)n->call_pc, n->call_line);
	for (uint32_t e = n->first_pc; e != PROF_NONE; e = prof_pcw_at(p, e)->next)
		d->n += (size_t)snprintf(d->s + d->n, sizeof(d->s) - d->n, " pc=%#llx:%u w=%lld,%lld",
					 (unsigned long long)prof_pcw_at(p, e)->pc, prof_pcw_at(p, e)->line,
					 (long long)prof_pcw_weights(p, e)[0],
					 (long long)prof_pcw_weights(p, e)[1]);
	d->n += (size_t)snprintf(d->s + d->n, sizeof(d->s) - d->n, "]\n");
	return 0;
}

static void dump(const struct prof *p, struct dump *d)
{
	d->n = 0;
	d->s[0] = 0;
	assert_int_equal(prof_walk(p, dump_enter, NULL, d), 0);
}

static void pprof_round_trip_keeps_tree_pcs_and_inline_frames(void **state)
{
	struct prof *p = sample_profile(), *q;
	uint8_t *buf;
	size_t len;
	assert_int_equal(rep_pprof_encode(p, &buf, &len), 0);
	assert_true(prof_sniff_pprof(buf, len));
	assert_int_equal(prof_read_pprof("mem", buf, len, &q), 0);
	struct dump a, b;
	dump(p, &a);
	dump(q, &b);
	/* The kernel frame had no module; pprof gives it the "[kernel]" mapping, which has no
	 * build-id: the dump prints "" instead of "-" there. Everything else is equal. */
	char *k = strstr(a.s, "do_syscall_64 kernel :0 -");
	assert_non_null(k);
	memmove(k + 24, k + 25, strlen(k + 25) + 1);
	assert_string_equal(a.s, b.s);
	assert_int_equal(prof_info(q)->default_metric, 1);
	assert_int_equal(prof_info(q)->duration_ns, 2500000000);
	assert_string_equal(prof_info(q)->source, "unit test");
	const char *name;
	int64_t v;
	assert_int_equal(prof_ncounters(q), 1);
	prof_counter_at(q, 0, &name, &v);
	assert_string_equal(name, "unwind.cfi");
	assert_int_equal(v, 41);
	/* Encoding the read-back profile gives the same bytes: nothing drifts. */
	uint8_t *buf2;
	size_t len2;
	assert_int_equal(rep_pprof_encode(q, &buf2, &len2), 0);
	prof_free(q);
	assert_int_equal(prof_read_pprof("mem2", buf2, len2, &q), 0);
	free(buf2);
	assert_int_equal(rep_pprof_encode(q, &buf2, &len2), 0);
	uint8_t *buf3;
	size_t len3;
	struct prof *r;
	assert_int_equal(prof_read_pprof("mem3", buf2, len2, &r), 0);
	assert_int_equal(rep_pprof_encode(r, &buf3, &len3), 0);
	assert_int_equal(len2, len3);
	assert_memory_equal(buf2, buf3, len2);
	free(buf);
	free(buf2);
	free(buf3);
	prof_free(p);
	prof_free(q);
	prof_free(r);
}

static void pprof_truncated_input_fails_with_offset(void **state)
{
	struct prof *p = sample_profile(), *q = NULL;
	uint8_t *buf;
	size_t len;
	assert_int_equal(rep_pprof_encode(p, &buf, &len), 0);
	for (size_t cut = 1; cut < len; cut++) {
		int rc = prof_read_pprof("cut.pb", buf, cut, &q);
		if (rc == 0) { /* a cut at a field boundary is a valid, smaller profile */
			prof_free(q);
			continue;
		}
		assert_true(rc < 0);
		assert_memory_equal(err_msg(), "cut.pb: ", 8);
	}
	free(buf);
	prof_free(p);
}

static void pprof_rejects_dangling_ids(void **state)
{
	/* sample_type {1,2}, sample { location_id: 9, value: 1 }, strings "", "s", "c" */
	static const uint8_t bad[] = { 0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x12, 0x04, 0x08, 0x09,
				       0x10, 0x01, 0x32, 0x00, 0x32, 0x01, 's', 0x32, 0x01, 'c' };
	struct prof *q;
	assert_true(prof_sniff_pprof(bad, sizeof(bad)));
	assert_int_not_equal(prof_read_pprof("x.pb", bad, sizeof(bad), &q), 0);
	assert_string_equal(err_msg(), "x.pb: sample 0: sample refers to missing location 9");
}

/* A profile as another tool writes it: one sample at runtime address addr in a mapping of
 * path at [start, start + 64 KiB) with file offset offset, and the given comments. */
static void foreign(struct pb_buf *out, const char *path, uint64_t start, uint64_t offset,
		    uint64_t addr, const char *const *comments, size_t ncomments)
{
	/* strings: 0 "", 1 samples, 2 count, 3 path, 4 f, 5.. comments */
	struct pb_buf sub = { 0 }, line = { 0 };
	pb_uint(&sub, 1, 1);
	pb_uint(&sub, 2, 2);
	pb_sub(out, 1, &sub);
	sub.n = 0;
	pb_uint(&sub, 1, 1);
	pb_uint(&sub, 2, 1);
	pb_sub(out, 2, &sub); /* sample: location 1, value 1 (both packed of one) */
	sub.n = 0;
	pb_uint(&sub, 1, 1);
	pb_uint(&sub, 2, start);
	pb_uint(&sub, 3, start + 0x10000);
	pb_uint(&sub, 4, offset);
	pb_uint(&sub, 5, 3);
	pb_sub(out, 3, &sub);
	sub.n = 0;
	pb_uint(&sub, 1, 1);
	pb_uint(&sub, 2, 1);
	pb_uint(&sub, 3, addr);
	pb_uint(&line, 1, 1);
	pb_sub(&sub, 4, &line);
	pb_sub(out, 4, &sub);
	sub.n = 0;
	pb_uint(&sub, 1, 1);
	pb_uint(&sub, 2, 4);
	pb_sub(out, 5, &sub);
	const char *strs[] = { "", "samples", "count", path, "f" };
	for (size_t i = 0; i < 5; i++)
		pb_bytes(out, 6, strs[i], strlen(strs[i]));
	for (size_t i = 0; i < ncomments; i++) {
		pb_bytes(out, 6, comments[i], strlen(comments[i]));
		pb_uint(out, 13, 5 + i);
	}
	pb_free(&sub);
	pb_free(&line);
}

/* The pc the single sample landed on, and its module's base. */
static void read_foreign(const char *path, uint64_t start, uint64_t offset, uint64_t addr,
			 const char *const *comments, size_t n, uint64_t *pc, uint64_t *base)
{
	struct pb_buf b = { 0 };
	struct prof *p;
	foreign(&b, path, start, offset, addr, comments, n);
	assert_int_equal(rep_read_pprof("f.pb", b.v, b.n, &p), 0);
	pb_free(&b);
	const struct prof_node *leaf = prof_node_at(p, prof_node_at(p, PROF_ROOT)->first_child);
	*pc = prof_pcw_at(p, leaf->first_pc)->pc;
	*base = prof_module_at(p, prof_frame_at(p, leaf->frame)->module)->base;
	prof_free(p);
}

static void pprof_address_without_file_is_a_file_offset(void **state)
{
	uint64_t pc, base;
	read_foreign("/nonexistent/app", 0x400000, 0x1000, 0x400123, NULL, 0, &pc, &base);
	assert_int_equal(pc, 0x1123);
	assert_int_equal(base, 0x3ff000);
}

static void pprof_mapping_comment_gives_the_vaddr(void **state)
{
	static const char *const ok[] = { "tally.mapping=0x400000,0x1000,0x401000,/nonexistent/app" };
	uint64_t pc, base;
	read_foreign("/nonexistent/app", 0x400000, 0x1000, 0x400123, ok, 1, &pc, &base);
	assert_int_equal(pc, 0x401123);
	assert_int_equal(base, 0xfffffffffffff000ull); /* start 0x400000 is vaddr 0x401000 */
	/* For another file, another start or offset, or malformed: someone else's comment. */
	static const char *const others[] = {
		"tally.mapping=0x400000,0x1000,0x401000,/nonexistent/other",
		"tally.mapping=0x400001,0x1000,0x401000,/nonexistent/app",
		"tally.mapping=0x400000,0x0,0x401000,/nonexistent/app",
		"tally.mapping=0x400000,0x1000,0x401000",
		"tally.mapping=0x400000,0x1000,0x,/nonexistent/app",
		"tally.mapping=0x400000,0x1000,0x11112222333344445,/nonexistent/app",
		"tally.mapping=0X400000,0x1000,0x401000,/nonexistent/app",
		"tally.mapping=",
		"tally.mapping",
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
		read_foreign("/nonexistent/app", 0x400000, 0x1000, 0x400123, &others[i], 1, &pc, &base);
		assert_int_equal(pc, 0x1123);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pprof_round_trip_keeps_tree_pcs_and_inline_frames),
		cmocka_unit_test(pprof_truncated_input_fails_with_offset),
		cmocka_unit_test(pprof_rejects_dangling_ids),
		cmocka_unit_test(pprof_address_without_file_is_a_file_offset),
		cmocka_unit_test(pprof_mapping_comment_gives_the_vaddr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
