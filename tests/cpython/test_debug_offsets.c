/*
 * CPython 3.13's _Py_DebugOffsets reader on hand-made blocks: the groups of u64s as pyenv's
 * 3.13.0 holds them (tests/cpython/layout.test.sh checks the real one against gdb), then
 * each way a block can lie: cookie, version, free-threaded flag, sizes, offsets past their
 * structure or near 2^64, a block cut short.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "cpython/layout.h"

#define V313 0x030d00f0u

/* 3.13.0's groups, each its size then its members' offsets (70 u64s after the head). */
static const uint64_t groups[70] = {
	283320, 608, 632,                                                     /* runtime */
	194968, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0, 7768, 7760, /* interp */
	304, 0, 8, 16, 72, 152, 160, 232, 32,                                 /* thread */
	80, 8, 0, 56, 72, 70,                                                 /* frame */
	208, 112, 120, 128, 136, 68, 52, 96, 104, 200,                        /* code */
	16, 8, 416, 24, 88, 168, 32, 24, 16, 40, 24, 16, 48, 32, 40, 24, 16,  /* object..float */
	32, 16, 24, 40, 16, 32,                                               /* long, bytes */
	64, 32, 16, 40,                                                       /* unicode */
	240, 200,                                                             /* gc */
};
/* Byte positions in the block of a few u64s the tests change. */
#define AT_VERSION 8
#define AT_FREE_THREADED 16
#define AT_THREAD_SIZE 152
#define AT_THREAD_CURRENT_FRAME 184
#define AT_CODE_ADAPTIVE 344
#define AT_UNICODE_ASCII_SIZE 560
#define AT_INTERP_GIL_LOCKED 136 /* interpreter_state.gil_runtime_state_locked */
#define AT_INTERP_GIL_HOLDER 144 /* interpreter_state.gil_runtime_state_holder */

static uint8_t block[CPY_DEBUG_OFFSETS_SIZE];

static void make_block(void)
{
	memcpy(block, "xdebugpy", 8);
	uint64_t head[2] = { V313, 0 };
	memcpy(block + 8, head, sizeof(head));
	memcpy(block + 24, groups, sizeof(groups));
}

static void put(size_t at, uint64_t v) { memcpy(block + at, &v, 8); }

static int parse(struct cpy_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->sz = sizeof(*l);
	return cpy_debug_offsets_parse(block, sizeof(block), V313, "lib", l);
}

static void debug_offsets_give_313s_layout(void **state)
{
	(void)state;
	make_block();
	struct cpy_layout l;
	assert_int_equal(parse(&l), 0);
	assert_int_equal(l.variant, CPY_VARIANT_313);
	assert_int_equal(l.source, CPY_FROM_DEBUG_OFFSETS);
	assert_int_equal(l.runtime.interpreters_head, 632);
	assert_int_equal(l.interp.next, 7264);
	assert_int_equal(l.interp.threads_head, 7344);
	assert_int_equal(l.thread.next, 8);
	assert_int_equal(l.thread_current_frame, 72);
	assert_int_equal(l.thread.native_thread_id, 160);
	assert_int_equal(l.frame.f_code, 0);
	assert_int_equal(l.frame.previous, 8);
	assert_int_equal(l.frame.prev_instr, 56);
	assert_int_equal(l.frame.owner, 70);
	assert_int_equal(l.code.qualname, 128);
	assert_int_equal(l.code.linetable, 136);
	assert_int_equal(l.code.firstlineno, 68);
	assert_int_equal(l.code.code_adaptive, 200);
	assert_int_equal(l.code.firsttraceable, 184); /* DWARF's, for pyenv's 3.13.0 */
	assert_int_equal(l.object.ob_type, 8);
	assert_int_equal(l.object.ob_size, 16);
	assert_int_equal(l.object.bytes_sval, 32);
	assert_int_equal(l.unicode.length, 16);
	assert_int_equal(l.unicode.ascii_size, 40);
	assert_int_equal(l.unicode.compact_size, 56);
	assert_int_equal(l.unicode.utf8_length, 40);
	assert_int_equal(l.unicode.utf8, 48);
	assert_int_equal(l.unicode.kind.bit_offset, 258);
	assert_int_equal(l.unicode.kind.bit_size, 3);
	assert_int_equal(l.unicode.compact.bit_offset, 261);
	assert_int_equal(l.unicode.ascii.bit_offset, 262);
	assert_int_equal(l.unicode.ready.bit_size, 0);
	assert_int_equal(l.gil.runtime, 0);
	assert_int_equal(l.gil.interp, 16);
	assert_int_equal(l.gil.locked, 16);
	assert_int_equal(l.gil.last_holder, 8);
}

static void refused(int want, const char *words)
{
	struct cpy_layout l;
	assert_int_equal(parse(&l), want);
	assert_non_null(strstr(err_msg(), words));
	err_clear();
}

static void debug_offsets_lying_head_is_refused(void **state)
{
	(void)state;
	make_block();
	block[0] = 'y';
	refused(CPY_E_LAYOUT, "lib: _PyRuntime does not begin with _Py_DebugOffsets");
	make_block();
	put(AT_VERSION, 0x030c01f0);
	refused(CPY_E_LAYOUT, "of another version than Py_Version (0x30c01f0)");
	make_block();
	put(AT_FREE_THREADED, 1);
	refused(CPY_E_VERSION, "lib: CPython 3.13 built free-threaded");
	make_block();
	struct cpy_layout l = { .sz = sizeof(l) };
	assert_int_equal(cpy_debug_offsets_parse(block, sizeof(block) - 1, V313, "lib", &l),
			 CPY_E_LAYOUT);
	assert_non_null(strstr(err_msg(), "cut short"));
	err_clear();
	/* A block right for 3.13 read for an interpreter that says it is 3.12. */
	assert_int_equal(cpy_debug_offsets_parse(block, sizeof(block), 0x030c01f0, "lib", &l),
			 CPY_E_LAYOUT);
	err_clear();
}

static void debug_offsets_outside_their_structure_are_refused(void **state)
{
	(void)state;
	make_block();
	put(AT_THREAD_CURRENT_FRAME, 304 - 7); /* 8 bytes read there: one past the end */
	refused(CPY_E_LAYOUT, "outside its structure: thread_state.current_frame (0x129)");
	make_block();
	put(AT_THREAD_CURRENT_FRAME, UINT64_MAX - 3); /* no wrap-around past the check */
	refused(CPY_E_LAYOUT, "thread_state.current_frame");
	/* the GIL's members: before the interpreter's own GIL, or far past its start */
	make_block();
	put(AT_INTERP_GIL_LOCKED, 7752 - 4);
	refused(CPY_E_LAYOUT, "interpreter_state.gil_runtime_state_locked");
	make_block();
	put(AT_INTERP_GIL_HOLDER, 7752 + 4096);
	refused(CPY_E_LAYOUT, "interpreter_state.gil_runtime_state_holder");
	make_block();
	put(AT_THREAD_SIZE, (uint64_t)1 << 40);
	refused(CPY_E_LAYOUT, "implausible size: thread_state");
	make_block();
	put(AT_CODE_ADAPTIVE, 136); /* no room for _co_firsttraceable after co_linetable */
	refused(CPY_E_LAYOUT, "no room for _co_firsttraceable");
	make_block();
	put(AT_UNICODE_ASCII_SIZE, 8); /* the ASCII object ending before its state word */
	refused(CPY_E_LAYOUT, "unicode_object.asciiobject_size");
	make_block();
	put(AT_THREAD_CURRENT_FRAME, 304 - 8); /* the last 8 bytes: fine */
	struct cpy_layout l;
	assert_int_equal(parse(&l), 0);
	assert_int_equal(l.thread_current_frame, 296);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debug_offsets_give_313s_layout),
		cmocka_unit_test(debug_offsets_lying_head_is_refused),
		cmocka_unit_test(debug_offsets_outside_their_structure_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
