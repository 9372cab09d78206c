/*
 * Frame sources (replay/sources/source.h): a source ahead of the ELF one is asked about every unwound
 * frame, outermost first; what it claims it names (a run of frames spliced in, or none),
 * what it leaves the ELF source names; its errors end the naming; a source whose names
 * depend on the sample's moment turns the stack memo off; what sources count reaches the
 * replay's quality in their order. The frames here are in no
 * module, so the ELF source names them by address alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "replay/namer.h"

#define JIT_START 0x7000
#define JIT_END 0x8000

struct sample {
	struct unw_frame frames[3];
	struct perf_event_rec ev;
	struct replay_stack st;
};

/* pcs innermost first: the sampled one, a JIT frame, an outer native one. */
static void make(struct sample *s, enum unw_end end)
{
	memset(s, 0, sizeof(*s));
	static const uint64_t pcs[3] = { 0x1010, JIT_START + 0x40, 0x3030 };
	for (int i = 0; i < 3; i++)
		s->frames[i] = (struct unw_frame){ .pc = pcs[i] };
	s->st = (struct replay_stack){ &s->ev, s->frames, 3, end, 0, "x" };
}

/* A JIT map in miniature: a frame in [JIT_START, JIT_END) becomes two frames (a method and
 * the one inlined into it); with drop, it is left out instead. Records what it was asked. */
struct jit {
	bool drop, per_sample;
	int fail; /* returned for a JIT frame when not 0 */
	size_t asked[8], nasked;
};

static int jit_name(void *self, const struct replay_stack *st, size_t i,
		    struct replay_frames *out)
{
	struct jit *j = self;
	j->asked[j->nasked++] = i;
	uint64_t pc = st->frames[i].pc;
	if (pc < JIT_START || pc >= JIT_END)
		return 0;
	if (j->fail)
		return err_set(j->fail, "jit: frame at 0x%llx", (unsigned long long)pc);
	if (j->drop)
		return 1;
	struct replay_sym_frame *f = replay_frames_push(out, PROF_NATIVE);
	f->function = "jit_method";
	f->pc = pc;
	f = replay_frames_push(out, PROF_INLINE);
	f->function = "jit_inlined";
	f->pc = pc;
	return 1;
}

static const struct replay_frame_source_ops jit_ops = { .name_frame = jit_name };
static const struct replay_frame_source_ops jit_per_sample_ops = { .name_frame = jit_name,
								    .per_sample = true };

/* Counts as a source of a new interpreter would: one figure always, one when not 0. */
static void jit_counters(void *self, replay_count_fn *count, void *arg)
{
	const struct jit *j = self;
	count(arg, "jit: frames asked", j->nasked);
	if (j->drop)
		count(arg, "jit: dropped", 1);
}

static const struct replay_frame_source_ops jit_counting_ops = { .name_frame = jit_name,
								  .counters = jit_counters };

static struct replay_namer *namer_with(struct jit *j)
{
	struct replay_frame_source src = { j->per_sample ? &jit_per_sample_ops : &jit_ops, j };
	struct replay_namer *nm;
	assert_int_equal(replay_namer_new(&src, 1, &nm), 0);
	return nm;
}

static void assert_unknown(const struct replay_sym_frame *f, uint64_t pc)
{
	assert_int_equal(f->kind, PROF_NATIVE);
	assert_null(f->function);
	assert_null(f->module);
	assert_int_equal(f->pc, pc);
}

static void source_splices_a_run_of_frames_in_place_of_a_native_one(void **state)
{
	struct sample s;
	make(&s, UNW_END_OUTERMOST);
	struct jit j = { 0 };
	struct replay_namer *nm = namer_with(&j);
	struct replay_sym_stack out;
	assert_int_equal(replay_namer_name(nm, &s.st, &out), 0);
	assert_int_equal(out.n, 4);
	assert_unknown(&out.frames[0], 0x3030);
	assert_int_equal(out.frames[1].kind, PROF_NATIVE);
	assert_string_equal(out.frames[1].function, "jit_method");
	assert_int_equal(out.frames[2].kind, PROF_INLINE);
	assert_string_equal(out.frames[2].function, "jit_inlined");
	assert_unknown(&out.frames[3], 0x1010);
	/* Asked about every frame, outermost first. */
	assert_int_equal(j.nasked, 3);
	assert_int_equal(j.asked[0], 2);
	assert_int_equal(j.asked[1], 1);
	assert_int_equal(j.asked[2], 0);
	replay_namer_free(nm);
}

static void frames_no_source_claims_are_named_by_elf_and_remembered(void **state)
{
	struct sample s;
	make(&s, UNW_END_OUTERMOST);
	struct replay_namer *nm;
	assert_int_equal(replay_namer_new(NULL, 0, &nm), 0);
	struct replay_sym_stack a, b;
	assert_int_equal(replay_namer_name(nm, &s.st, &a), 0);
	assert_int_equal(a.n, 3);
	assert_unknown(&a.frames[0], 0x3030);
	assert_unknown(&a.frames[1], JIT_START + 0x40);
	assert_unknown(&a.frames[2], 0x1010);
	assert_int_equal(a.id, 0); /* new: remembered the second time it comes */
	assert_int_equal(replay_namer_name(nm, &s.st, &a), 0);
	assert_int_equal(a.id, 1);
	assert_int_equal(replay_namer_name(nm, &s.st, &b), 0);
	assert_int_equal(b.id, 1);
	assert_ptr_equal(b.frames, a.frames);
	replay_namer_free(nm);
}

static void source_may_drop_a_frame(void **state)
{
	struct sample s;
	make(&s, UNW_END_OUTERMOST);
	struct jit j = { .drop = true };
	struct replay_namer *nm = namer_with(&j);
	struct replay_sym_stack out;
	assert_int_equal(replay_namer_name(nm, &s.st, &out), 0);
	assert_int_equal(out.n, 2);
	assert_unknown(&out.frames[0], 0x3030);
	assert_unknown(&out.frames[1], 0x1010);
	replay_namer_free(nm);
}

static void per_sample_source_turns_the_stack_memo_off(void **state)
{
	struct sample s;
	make(&s, UNW_END_OUTERMOST);
	struct jit j = { .per_sample = true };
	struct replay_namer *nm = namer_with(&j);
	struct replay_sym_stack out;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(replay_namer_name(nm, &s.st, &out), 0);
		assert_int_equal(out.id, 0);
	}
	assert_int_equal(j.nasked, 6); /* the second sample was named anew */
	replay_namer_free(nm);
}

static void source_error_ends_the_naming_with_its_message(void **state)
{
	struct sample s;
	make(&s, UNW_END_OUTERMOST);
	struct jit j = { .fail = -EIO };
	struct replay_namer *nm = namer_with(&j);
	struct replay_sym_stack out;
	assert_int_equal(replay_namer_name(nm, &s.st, &out), -EIO);
	assert_string_equal(err_msg(), "jit: frame at 0x7040");
	err_clear();
	assert_int_equal(j.nasked, 2); /* not asked about the frames after it */
	replay_namer_free(nm);
}

static void truncated_stack_starts_with_its_marker(void **state)
{
	struct sample s;
	make(&s, UNW_END_NO_CFI);
	struct jit j = { 0 };
	struct replay_namer *nm = namer_with(&j);
	struct replay_sym_stack out;
	assert_int_equal(replay_namer_name(nm, &s.st, &out), 0);
	assert_int_equal(out.n, 5);
	assert_int_equal(out.frames[0].kind, PROF_TRUNCATED);
	assert_string_equal(out.frames[0].function, "[truncated]");
	assert_string_equal(out.frames[2].function, "jit_method");
	replay_namer_free(nm);
}

static void sources_counters_reach_the_quality_in_their_order(void **state)
{
	struct sample s;
	make(&s, UNW_END_OUTERMOST);
	struct jit a = { 0 }, b = { .drop = true };
	struct replay_frame_source src[2] = { { &jit_counting_ops, &a }, { &jit_counting_ops, &b } };
	struct replay_namer *nm;
	assert_int_equal(replay_namer_new(src, 2, &nm), 0);
	struct replay_sym_stack out;
	assert_int_equal(replay_namer_name(nm, &s.st, &out), 0);
	struct replay_quality q = { 0 };
	q.counted[0] = (struct replay_counted){ "before", 7 };
	q.ncounted = 1;
	replay_namer_counters(nm, &q);
	assert_int_equal(q.ncounted, 4);
	assert_string_equal(q.counted[0].name, "before");
	assert_string_equal(q.counted[1].name, "jit: frames asked");
	assert_int_equal(q.counted[1].value, 3); /* a claimed the JIT frame: b asked twice */
	assert_string_equal(q.counted[2].name, "jit: frames asked");
	assert_int_equal(q.counted[2].value, 2);
	assert_string_equal(q.counted[3].name, "jit: dropped");
	assert_int_equal(q.counted[3].value, 1);
	replay_namer_free(nm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(source_splices_a_run_of_frames_in_place_of_a_native_one),
		cmocka_unit_test(frames_no_source_claims_are_named_by_elf_and_remembered),
		cmocka_unit_test(source_may_drop_a_frame),
		cmocka_unit_test(per_sample_source_turns_the_stack_memo_off),
		cmocka_unit_test(source_error_ends_the_naming_with_its_message),
		cmocka_unit_test(truncated_stack_starts_with_its_marker),
		cmocka_unit_test(sources_counters_reach_the_quality_in_their_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
