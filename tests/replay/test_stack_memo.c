/*
 * The memo of named stacks: a stack kept is found again with the same frames (the same
 * copy) and id; a stack that differs in anything its names depend on (how it ended, a
 * frame's pc, module or module address, the callchain, the process when a frame is in
 * memory no file backs) is not found; ids count up from 1; a stack is kept the second time
 * it is offered, not the first; past its bound the memo keeps no more and says so with id 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "replay/stack_memo.h"

/* Modules with a file (never read: the memo only asks whether there is one). */
static struct unw_module lib = { .elf = (struct elf_file *)&lib };
static struct unw_module lib2 = { .elf = (struct elf_file *)&lib2 };

struct sample {
	struct unw_frame frames[3];
	uint64_t chain[2];
	struct perf_event_rec ev;
	struct replay_stack st;
};

static void make(struct sample *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 3; i++)
		s->frames[i] = (struct unw_frame){ .pc = seed + i, .mod = &lib,
						   .rel = 0x400 + i };
	s->chain[0] = 0xffffffffffffff80ull; /* PERF_CONTEXT_KERNEL */
	s->chain[1] = 0xffffffff81000000ull + seed;
	s->ev.callchain = (const uint8_t *)s->chain;
	s->ev.nr_callchain = 2;
	s->st = (struct replay_stack){ &s->ev, s->frames, 3, UNW_END_OUTERMOST, 1, "x" };
}

static const struct replay_sym_frame named[2] = {
	{ .kind = PROF_NATIVE, .function = "main", .addr = 0x400 },
	{ .kind = PROF_INLINE, .function = "inner", .addr = 0x401 },
};

/* Offers st to the memo twice, as a replay does a stack that comes twice: the first time
 * only notes it. */
static uint32_t keep(struct replay_stack_memo *m, const struct replay_stack *st,
		     const struct replay_sym_frame *frames, size_t n,
		     const struct replay_sym_frame **kept)
{
	if (replay_stack_memo_keep(m, st, frames, n, kept))
		return 0; /* kept the first time: wrong */
	return replay_stack_memo_keep(m, st, frames, n, kept);
}

static void stack_is_kept_the_second_time(void **state)
{
	(void)state;
	struct replay_stack_memo *m = replay_stack_memo_new();
	struct sample a, b;
	make(&a, 7);
	make(&b, 9);
	const struct replay_sym_frame *f, *kept;
	size_t n;
	assert_int_equal(replay_stack_memo_keep(m, &a.st, named, 2, &kept), 0);
	assert_int_equal(replay_stack_memo_find(m, &a.st, &f, &n), 0);
	assert_int_equal(replay_stack_memo_keep(m, &b.st, named, 2, &kept), 0);
	assert_int_equal(replay_stack_memo_keep(m, &a.st, named, 2, &kept), 1);
	assert_int_equal(replay_stack_memo_find(m, &a.st, &f, &n), 1);
	assert_int_equal(replay_stack_memo_find(m, &b.st, &f, &n), 0);
	assert_int_equal(replay_stack_memo_keep(m, &b.st, named, 2, &kept), 2);
	assert_int_equal(replay_stack_memo_find(m, &b.st, &f, &n), 2);
	replay_stack_memo_free(m);
}

static void kept_stack_is_found_again(void **state)
{
	(void)state;
	struct replay_stack_memo *m = replay_stack_memo_new();
	struct sample a, b;
	make(&a, 7);
	const struct replay_sym_frame *f, *kept;
	size_t n;
	assert_int_equal(replay_stack_memo_find(m, &a.st, &f, &n), 0);
	assert_int_equal(keep(m, &a.st, named, 2, &kept), 1);
	assert_ptr_not_equal(kept, named);
	make(&b, 7); /* equal, in other memory */
	assert_int_equal(replay_stack_memo_find(m, &b.st, &f, &n), 1);
	assert_ptr_equal(f, kept);
	assert_int_equal(n, 2);
	assert_string_equal(f[1].function, "inner");
	make(&b, 8);
	assert_int_equal(keep(m, &b.st, named, 1, &kept), 2);
	replay_stack_memo_free(m);
}

static void any_difference_is_another_stack(void **state)
{
	(void)state;
	struct replay_stack_memo *m = replay_stack_memo_new();
	struct sample a, b;
	make(&a, 7);
	const struct replay_sym_frame *f;
	size_t n;
	assert_int_equal(keep(m, &a.st, named, 2, &f), 1);
	for (int change = 0; change < 6; change++) {
		make(&b, 7);
		switch (change) {
		case 0: b.st.end = UNW_END_NO_CFI; break;
		case 1: b.frames[2].pc++; break;
		case 2: b.frames[1].mod = &lib2; break;
		case 3: b.frames[0].rel++; break;
		case 4: b.chain[1]++; break;
		case 5: b.st.n = 2; break;
		}
		assert_int_equal(replay_stack_memo_find(m, &b.st, &f, &n), 0);
	}
	replay_stack_memo_free(m);
}

static void anonymous_memory_of_two_processes_is_two_stacks(void **state)
{
	(void)state;
	struct replay_stack_memo *m = replay_stack_memo_new();
	struct sample a, b;
	const struct replay_sym_frame *f;
	size_t n;
	make(&a, 7);
	make(&b, 7);
	b.ev.pid = 2;
	/* with files everywhere the process does not matter */
	assert_int_equal(keep(m, &a.st, named, 2, &f), 1);
	assert_int_equal(replay_stack_memo_find(m, &b.st, &f, &n), 1);
	/* JIT code: the same address is other code in another process */
	a.frames[0].mod = b.frames[0].mod = NULL;
	assert_int_equal(keep(m, &a.st, named, 2, &f), 2);
	assert_int_equal(replay_stack_memo_find(m, &b.st, &f, &n), 0);
	make(&a, 7);
	a.frames[0].mod = NULL;
	assert_int_equal(replay_stack_memo_find(m, &a.st, &f, &n), 2);
	replay_stack_memo_free(m);
}

static void memo_is_bounded(void **state)
{
	(void)state;
	struct replay_stack_memo *m = replay_stack_memo_new();
	struct sample s;
	const struct replay_sym_frame *f;
	uint32_t id = 0, last = 0;
	for (uint64_t i = 0; i < 70000; i++) {
		make(&s, i * 8);
		id = keep(m, &s.st, named, 2, &f);
		if (id)
			last = id;
	}
	assert_int_equal(id, 0);          /* full */
	assert_int_equal(last, 1u << 16); /* after that many */
	size_t n;
	make(&s, 8);
	assert_int_equal(replay_stack_memo_find(m, &s.st, &f, &n), 2); /* the kept ones stay */
	replay_stack_memo_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stack_is_kept_the_second_time),
		cmocka_unit_test(kept_stack_is_found_again),
		cmocka_unit_test(any_difference_is_another_stack),
		cmocka_unit_test(anonymous_memory_of_two_processes_is_two_stacks),
		cmocka_unit_test(memo_is_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
