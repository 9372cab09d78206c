/*
 * The CPython frame payloads (replay/sources/python/payload.h), bytes written here by hand from the
 * contract's layout (docs/python.md): stack and code records as the capture writes them,
 * with the kernel's padding after them, and every way a hostile one can be wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "replay/sources/python/payload.h"

struct buf {
	uint8_t b[256];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u16(struct buf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	put(b, x, 2);
}

static void put_u32(struct buf *b, uint32_t v)
{
	put_u16(b, (uint16_t)v);
	put_u16(b, (uint16_t)(v >> 16));
}

static void put_u64(struct buf *b, uint64_t v)
{
	put_u32(b, (uint32_t)v);
	put_u32(b, (uint32_t)(v >> 32));
}

static void head(struct buf *b, uint16_t type, uint16_t flags)
{
	b->n = 0;
	put_u32(b, 0x31595054);
	put_u16(b, type);
	put_u16(b, flags);
}

/* A stack of two frames, the outer one an entry frame, padded as the kernel pads it. */
static void two_frames(struct buf *b, uint32_t nframes)
{
	head(b, 1, 0x2);
	put_u32(b, 77);
	put_u32(b, 78);
	put_u32(b, nframes);
	put_u32(b, 0);
	put_u64(b, 0x7f0000001000);
	put_u32(b, 12);
	put_u32(b, 0);
	put_u64(b, 0x7f0000002000);
	put_u32(b, (uint32_t)-1);
	put_u32(b, 1);
	put_u32(b, 0); /* padding */
}

static void stack_payload_gives_its_frames_innermost_first(void **state)
{
	struct buf b;
	two_frames(&b, 2);
	struct replay_py_payload p;
	assert_true(replay_py_is_payload(b.b, b.n));
	assert_int_equal(replay_py_parse(b.b, b.n, &p), 0);
	assert_int_equal(p.type, PERF_PY_STACK);
	assert_int_equal(p.flags, PERF_PY_STACK_READ_FAILED);
	assert_int_equal(p.pid, 77);
	assert_int_equal(p.tid, 78);
	assert_int_equal(p.nframes, 2);
	struct perf_py_frame f0 = replay_py_frame_at(&p, 0), f1 = replay_py_frame_at(&p, 1);
	assert_int_equal(f0.code, 0x7f0000001000);
	assert_int_equal(f0.lasti, 12);
	assert_int_equal(f0.fflags, 0);
	assert_int_equal(f1.code, 0x7f0000002000);
	assert_int_equal(f1.lasti, -1);
	assert_int_equal(f1.fflags, PERF_PY_FRAME_ENTRY);
}

static void code_payload_gives_names_and_line_table(void **state)
{
	struct buf b;
	head(&b, 2, 0);
	put_u32(&b, 77);
	put_u32(&b, 0);
	put_u64(&b, 0x7f0000001000);
	put_u32(&b, 42);
	put_u16(&b, 5);
	put_u16(&b, 6);
	put_u32(&b, 3);
	put(&b, "C.run", 5);
	put(&b, "a.py\x80\x81", 6);
	put(&b, "\x81\x82", 3); /* and its NUL: a line table may hold any byte */
	put(&b, "\0\0", 2); /* padding */
	struct replay_py_payload p;
	assert_int_equal(replay_py_parse(b.b, b.n, &p), 0);
	assert_int_equal(p.type, PERF_PY_CODE);
	assert_int_equal(p.code, 0x7f0000001000);
	assert_int_equal(p.firstlineno, 42);
	assert_int_equal(p.qualname_len, 5);
	assert_memory_equal(p.qualname, "C.run", 5);
	assert_memory_equal(p.filename, "a.py\x80\x81", 6);
	assert_int_equal(p.linetable_len, 3);
	assert_memory_equal(p.linetable, "\x81\x82\0", 3);
}

static void expect_malformed(const struct buf *b, const char *why)
{
	struct replay_py_payload p;
	assert_int_equal(replay_py_parse(b->b, b->n, &p), -EINVAL);
	assert_non_null(strstr(err_msg(), why));
	err_clear();
}

static void frames_past_the_record_are_malformed(void **state)
{
	struct buf b;
	two_frames(&b, 3); /* says 3, holds 2 and padding */
	expect_malformed(&b, "3 frames run past the record");
}

static void more_frames_than_the_cap_are_malformed(void **state)
{
	struct buf b;
	two_frames(&b, 1025);
	expect_malformed(&b, "1025 frames, more than 1024");
}

static void a_code_record_longer_than_its_bytes_is_malformed(void **state)
{
	struct buf b;
	head(&b, 2, 0);
	put_u32(&b, 77);
	put_u32(&b, 0);
	put_u64(&b, 1);
	put_u32(&b, 1);
	put_u16(&b, 0xffff);
	put_u16(&b, 0xffff);
	put_u32(&b, 0xffffffff);
	put(&b, "xyz", 3);
	expect_malformed(&b, "runs past the record");
}

static void reserved_fields_unknown_types_and_short_heads_are_malformed(void **state)
{
	struct buf b;
	two_frames(&b, 2);
	b.b[20] = 1; /* the stack's reserved word */
	expect_malformed(&b, "reserved field is 0x1");
	head(&b, 3, 0);
	expect_malformed(&b, "unknown type 3");
	head(&b, 1, 0);
	put_u32(&b, 77);
	expect_malformed(&b, "stack header runs past the record");
	head(&b, 2, 0);
	expect_malformed(&b, "code header runs past the record");
}

static void other_programs_payloads_are_not_ours(void **state)
{
	static const uint8_t other[] = { 0x54, 0x50, 0x59, 0x32, 1, 0, 0, 0 };
	assert_false(replay_py_is_payload(other, sizeof(other)));
	assert_false(replay_py_is_payload(other, 3));
	assert_false(replay_py_is_payload(NULL, 0));
	struct buf b;
	b.n = 0;
	expect_malformed(&b, "no TPY1 magic");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stack_payload_gives_its_frames_innermost_first),
		cmocka_unit_test(code_payload_gives_names_and_line_table),
		cmocka_unit_test(frames_past_the_record_are_malformed),
		cmocka_unit_test(more_frames_than_the_cap_are_malformed),
		cmocka_unit_test(a_code_record_longer_than_its_bytes_is_malformed),
		cmocka_unit_test(reserved_fields_unknown_types_and_short_heads_are_malformed),
		cmocka_unit_test(other_programs_payloads_are_not_ours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
