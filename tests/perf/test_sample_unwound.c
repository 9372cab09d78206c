/*
 * Samples rewritten with an unwound chain (perf_sample_unwound): the kernel's fields kept,
 * the chain the kernel's part then PERF_CONTEXT_USER and the user frames, no registers (ABI
 * 0) and a copy with nothing valid in it whose 8 bytes are the mark with the walk's note,
 * PERF_SAMPLE_RAW kept with its padding; the result decodes by the attribute
 * perf_sample_attr_unwound makes, which raw samples decode by too, and only it is taken
 * for an unwound sample (perf_sample_unwound_note). Hostile records (a chain or a copy running
 * past the record) are refused by perf_record_decode, and a rewrite that does not fit is
 * refused, not cut. Layouts as linux/perf_event.h gives them (PERF_RECORD_SAMPLE).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "perf/perf.h"

#define BASE_TYPE                                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |       \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
#define COPY_TYPE (BASE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define REGS_MASK ((1ull << PERF_X86_SP) | (1ull << PERF_X86_IP))

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put64(struct buf *b, uint64_t v)
{
	memcpy(b->b + b->n, &v, 8);
	b->n += 8;
}

static void attr_of(struct perf_attr_info *a, uint64_t type)
{
	memset(a, 0, sizeof(*a));
	a->attr.size = sizeof(a->attr);
	a->attr.sample_type = type;
	a->attr.sample_regs_user = REGS_MASK;
	a->attr.sample_stack_user = 64;
	a->attr.exclude_callchain_user = 1;
}

/* A sample of tid 42 at time 1000 on cpu 3: chain (kernel part of nkern ips, or none), an
 * optional raw field of raw_len payload bytes, regs (sp, ip) and a 64-byte stack copy of
 * which dyn bytes are valid. */
static void sample(struct buf *b, uint64_t type, size_t nkern, size_t raw_len, uint64_t dyn)
{
	b->n = 8;
	put64(b, 77);                          /* identifier */
	put64(b, 0x401000);                    /* ip */
	put64(b, (uint64_t)42 << 32 | 41);     /* pid 41, tid 42 */
	put64(b, 1000);                        /* time */
	put64(b, 3);                           /* cpu, reserved */
	put64(b, 5000);                        /* period */
	put64(b, nkern ? nkern + 1 : 0);
	if (nkern)
		put64(b, PERF_CONTEXT_KERNEL);
	for (size_t i = 0; i < nkern; i++)
		put64(b, 0xffffffff81000000ull + i);
	if (type & PERF_SAMPLE_RAW) {
		uint32_t n = (uint32_t)((4 + raw_len + 7) / 8 * 8 - 4);
		memcpy(b->b + b->n, &n, 4);
		memset(b->b + b->n + 4, 0xab, n);
		b->n += 4 + n;
	}
	if (type & PERF_SAMPLE_REGS_USER) {
		put64(b, PERF_SAMPLE_REGS_ABI_64);
		put64(b, 0x7ffd0000); /* sp (perf 7) */
		put64(b, 0x401000);   /* ip (perf 8) */
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		put64(b, 64);
		memset(b->b + b->n, 0x5a, 64);
		b->n += 64;
		put64(b, dyn);
	}
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)b->n };
	memcpy(b->b, &h, 8);
}

static const uint64_t user[] = { 0x401000, 0x401234, 0x7f0000001000 };

static void check_rewrite(uint64_t type, size_t nkern, size_t raw_len)
{
	struct perf_attr_info in, out;
	attr_of(&in, type);
	struct buf b;
	sample(&b, type, nkern, raw_len, 48);
	struct perf_event_rec ev;
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n, &ev), 0);
	assert_int_equal(ev.stack_total, 48);
	assert_int_equal(ev.regs[PERF_X86_SP], 0x7ffd0000);
	uint8_t rec[4096];
	size_t size;
	uint32_t note;
	assert_false(perf_sample_unwound_note(&ev, &note));
	assert_int_equal(perf_sample_unwound(&ev, user, 3, 0x20004, rec, sizeof(rec), &size), 0);
	memset(&out, 0, sizeof(out));
	perf_sample_attr_unwound(&in.attr, &out.attr);
	assert_int_equal(out.attr.sample_type, in.attr.sample_type);
	assert_int_equal(out.attr.exclude_callchain_user, 0);
	size_t chain = (nkern ? nkern + 1 : 0) + 4;
	size_t raw = type & PERF_SAMPLE_RAW ? (4 + raw_len + 7) / 8 * 8 : 0;
	/* ABI, the copy's size, its 8 bytes, dyn_size */
	assert_int_equal(size, 8 + 6 * 8 + 8 + 8 * chain + raw + 4 * 8);
	struct perf_event_rec u;
	assert_int_equal(perf_record_decode("t", 0, &out, 1, rec, size, &u), 0);
	assert_int_equal(u.ip, 0x401000);
	assert_int_equal(u.pid, 41);
	assert_int_equal(u.tid, 42);
	assert_int_equal(u.time, 1000);
	assert_int_equal(u.cpu, 3);
	assert_int_equal(u.period, 5000);
	assert_int_equal(u.nr_callchain, chain);
	size_t i = 0;
	if (nkern) {
		assert_int_equal(perf_callchain_at(&u, i++), PERF_CONTEXT_KERNEL);
		for (size_t k = 0; k < nkern; k++)
			assert_int_equal(perf_callchain_at(&u, i++), 0xffffffff81000000ull + k);
	}
	assert_int_equal(perf_callchain_at(&u, i++), PERF_CONTEXT_USER);
	for (size_t k = 0; k < 3; k++)
		assert_int_equal(perf_callchain_at(&u, i++), user[k]);
	assert_int_equal(u.stack_total, 0);
	assert_int_equal(u.regs_abi, 0);
	assert_true(perf_sample_unwound_note(&u, &note));
	assert_int_equal(note, 0x20004);
	if (raw) {
		assert_int_equal(u.raw_size, raw - 4);
		assert_int_equal(u.raw_data[0], 0xab);
	}
}

static void user_sample_gets_user_context(void **state)
{
	(void)state;
	check_rewrite(COPY_TYPE, 0, 0);
}

static void kernel_part_comes_first(void **state)
{
	(void)state;
	check_rewrite(COPY_TYPE, 2, 0);
}

static void raw_field_is_kept(void **state)
{
	(void)state;
	check_rewrite(COPY_TYPE | PERF_SAMPLE_RAW, 1, 13);
}

static void no_user_frames_no_user_context(void **state)
{
	(void)state;
	struct perf_attr_info in;
	attr_of(&in, COPY_TYPE);
	struct buf b;
	sample(&b, COPY_TYPE, 2, 0, 0);
	struct perf_event_rec ev;
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n, &ev), 0);
	uint8_t rec[512];
	size_t size;
	assert_int_equal(perf_sample_unwound(&ev, NULL, 0, 1, rec, sizeof(rec), &size), 0);
	uint64_t nr;
	memcpy(&nr, rec + 8 + 6 * 8, 8);
	assert_int_equal(nr, 3);
	assert_int_equal(size, 8 + 6 * 8 + 8 + 3 * 8 + 4 * 8);
}

/* What the kernel writes with no user context (ABI 0, no copy), a copy of which nothing
 * was valid, or a copy of 8 bytes without the mark: none is an unwound sample. */
static void only_the_mark_makes_an_unwound_sample(void **state)
{
	(void)state;
	struct perf_attr_info in;
	attr_of(&in, COPY_TYPE);
	struct buf b;
	struct perf_event_rec ev;
	uint32_t note;
	sample(&b, COPY_TYPE, 1, 0, 0);
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n, &ev), 0);
	assert_false(perf_sample_unwound_note(&ev, &note));
	/* A kernel thread's: no callchain, ABI 0, a copy of size 0. */
	b.n = 8;
	for (int i = 0; i < 6; i++)
		put64(&b, 1);
	put64(&b, 0);
	put64(&b, 0);
	put64(&b, 0);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, (uint16_t)b.n };
	memcpy(b.b, &h, 8);
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n, &ev), 0);
	assert_false(perf_sample_unwound_note(&ev, &note));
	/* A copy of 8 bytes, none valid, holding anything but the mark. */
	sample(&b, COPY_TYPE, 1, 0, 0);
	uint8_t rec[512];
	size_t size;
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n, &ev), 0);
	assert_int_equal(perf_sample_unwound(&ev, user, 3, 7, rec, sizeof(rec), &size), 0);
	rec[size - 9] ^= 1; /* the mark's highest byte */
	assert_int_equal(perf_record_decode("t", 0, &in, 1, rec, size, &ev), 0);
	assert_false(perf_sample_unwound_note(&ev, &note));
	rec[size - 9] ^= 1;
	assert_int_equal(perf_record_decode("t", 0, &in, 1, rec, size, &ev), 0);
	assert_true(perf_sample_unwound_note(&ev, &note));
	assert_int_equal(note, 7);
}

static void hostile_records_are_refused(void **state)
{
	(void)state;
	struct perf_attr_info in;
	attr_of(&in, COPY_TYPE);
	struct buf b;
	struct perf_event_rec ev;
	/* A chain that says it is longer than its record. */
	sample(&b, COPY_TYPE, 1, 0, 48);
	uint64_t huge = 1ull << 40;
	memcpy(b.b + 8 + 6 * 8, &huge, 8);
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n, &ev), -EINVAL);
	assert_non_null(strstr(err_msg(), "t: at 0x0"));
	err_clear();
	/* A record cut before its stack copy ends. */
	sample(&b, COPY_TYPE, 1, 0, 48);
	struct perf_event_header h;
	memcpy(&h, b.b, 8);
	h.size = (uint16_t)(b.n - 40);
	memcpy(b.b, &h, 8);
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n - 40, &ev), -EINVAL);
	err_clear();
	/* A header that says more than there is. */
	sample(&b, COPY_TYPE, 1, 0, 48);
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n - 8, &ev), -EINVAL);
	err_clear();
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, 4, &ev), -EINVAL);
	err_clear();
}

static void rewrite_that_does_not_fit_is_refused(void **state)
{
	(void)state;
	struct perf_attr_info in;
	attr_of(&in, COPY_TYPE);
	struct buf b;
	sample(&b, COPY_TYPE, 1, 0, 48);
	struct perf_event_rec ev;
	assert_int_equal(perf_record_decode("t", 0, &in, 1, b.b, b.n, &ev), 0);
	uint8_t rec[64];
	size_t size;
	assert_int_equal(perf_sample_unwound(&ev, user, 3, 0, rec, sizeof(rec), &size), -E2BIG);
	/* More frames than a record's 64 KiB hold. */
	static uint64_t many[9000];
	static uint8_t big[1 << 17];
	assert_int_equal(perf_sample_unwound(&ev, many, 9000, 0, big, sizeof(big), &size), -E2BIG);
}

static void unsupported_types_are_refused(void **state)
{
	(void)state;
	assert_true(perf_sample_unwound_supports(COPY_TYPE));
	assert_false(perf_sample_unwound_supports(COPY_TYPE | PERF_SAMPLE_READ));
	assert_false(perf_sample_unwound_supports(COPY_TYPE | PERF_SAMPLE_BRANCH_STACK));
	assert_false(perf_sample_unwound_supports(COPY_TYPE | PERF_SAMPLE_WEIGHT));
	assert_false(perf_sample_unwound_supports(COPY_TYPE & ~(uint64_t)PERF_SAMPLE_CALLCHAIN));
	assert_false(perf_sample_unwound_supports(COPY_TYPE & ~(uint64_t)PERF_SAMPLE_STACK_USER));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(user_sample_gets_user_context),
		cmocka_unit_test(kernel_part_comes_first),
		cmocka_unit_test(raw_field_is_kept),
		cmocka_unit_test(no_user_frames_no_user_context),
		cmocka_unit_test(only_the_mark_makes_an_unwound_sample),
		cmocka_unit_test(hostile_records_are_refused),
		cmocka_unit_test(rewrite_that_does_not_fit_is_refused),
		cmocka_unit_test(unsupported_types_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
