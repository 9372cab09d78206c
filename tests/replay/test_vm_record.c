/*
 * Mixed mode's loop records read from a stack copy (replay/sources/vm/record.h), made by the agent
 * itself (include/tally/agent.h): the frames an interpreter pushed come back, outermost
 * first, with the pcs it published (the innermost's) and pushed (each caller's call site),
 * named from the registry the agent wrote; and each way a record can fail validation gives
 * no frame and counts its reason: a copy of the record at another address, a sample in
 * the middle of a push, no frame, frames outside the copy, no registry, an unregistered
 * function, a pc outside its function. Between a push or pop and the next published pc,
 * the innermost frame's pc is its own (its function's first, or its call site).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "replay/sources/vm/record.h"
#include "tally/agent.h"

static char dir[] = "/tmp/tally-vm-record-XXXXXX";

/* The interpreter's native frame, and the stack copy around it. */
static struct {
	uint8_t below[64];
	struct tally_agent_loop loop;
	struct tally_agent_frame frames[8];
	uint8_t above[64];
} stack;

static struct tally_agent *agent;
static struct tally_agent_thread *t;
static uint32_t ids[3];
static struct replay_vm_registry reg;
static uint32_t agent_number; /* the agent's, which names its registry */

static int registry(void *arg, uint32_t n, const struct replay_vm_registry **out)
{
	*out = n == agent_number ? arg : NULL;
	return 0;
}

/* main [10, 20) calls f [110, 120) at 12, which calls g [210, 220) at 115; g is at 213. */
static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	struct tally_agent_opts o = { .sz = sizeof(o), .mode = TALLY_AGENT_MIXED, .jit_dir = dir };
	if (tally_agent_new(&o, &agent))
		return -1;
	static const struct tally_agent_line lines[] = { { 10, 1 }, { 12, 2 }, { 15, 3 } };
	static const char *const names[] = { "main", "f", "g" };
	for (int i = 0; i < 3; i++) {
		struct tally_agent_function f = { .sz = sizeof(f), .name = names[i],
						  .file = "prog.vm", .line = 7,
						  .start = 10 + 100 * (uint64_t)i,
						  .end = 20 + 100 * (uint64_t)i,
						  .lines = i ? NULL : lines, .nlines = i ? 0 : 3 };
		if (tally_agent_register(agent, &f, &ids[i]))
			return -1;
	}
	t = tally_agent_loop_begin(agent, &stack.loop, stack.frames, 8);
	agent_number = stack.loop.agent;
	char path[256];
	snprintf(path, sizeof(path), "%s/tally-vm-%d-%u.dump", dir, (int)getpid(), stack.loop.agent);
	reg.dump = NULL;
	return t && !replay_jitdump_read(path, &reg.dump) && !replay_vm_registry_index(&reg) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	replay_vm_registry_free(&reg);
	tally_agent_free(agent);
	char cmd[100];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void push_three(void)
{
	while (t->depth)
		TALLY_AGENT_POP(t);
	TALLY_AGENT_PUSH(t, ids[0], 0);
	TALLY_AGENT_PUSH(t, ids[1], 12);
	TALLY_AGENT_PUSH(t, ids[2], 115);
	TALLY_AGENT_PC(t, 213);
}

/* Scans the whole copy: how many frames; *st the counts. */
static size_t scan(struct replay_vm_stats *st, replay_vm_frames *out)
{
	struct replay_vm_copy c = { (const uint8_t *)&stack, (uint64_t)(uintptr_t)&stack,
				    sizeof(stack) };
	struct replay_vm_lookup lk = { registry, &reg };
	bool found;
	memset(st, 0, sizeof(*st));
	out->n = 0;
	assert_int_equal(replay_vm_scan(&c, c.base, c.base + c.size, &lk, st, out, &found), 0);
	assert_int_equal(found, out->n > 0);
	return out->n;
}

static void frames_come_back_outermost_first(void **state)
{
	(void)state;
	push_three();
	struct replay_vm_stats st;
	replay_vm_frames out = { 0 };
	assert_int_equal(scan(&st, &out), 3);
	static const char *const names[] = { "main", "f", "g" };
	static const uint64_t pcs[] = { 12, 115, 213 };
	for (int i = 0; i < 3; i++) {
		assert_string_equal(out.v[i].code->name, names[i]);
		assert_true(out.v[i].pc == pcs[i]);
	}
	const struct replay_jit_line *l =
		replay_jitdump_line(reg.dump, out.v[0].code, out.v[0].pc - out.v[0].code->addr);
	assert_non_null(l);
	assert_int_equal(l->line, 2);
	assert_string_equal(l->file, "prog.vm");
	vec_free(&out);
}

/* Sampled right after a push, before the callee's first pc is published: the callee at its
 * first pc; right after a pop: the caller at its call site. */
static void push_and_pop_windows_give_the_frames_own_pcs(void **state)
{
	(void)state;
	push_three();
	TALLY_AGENT_POP(t);
	struct replay_vm_stats st;
	replay_vm_frames out = { 0 };
	assert_int_equal(scan(&st, &out), 2);
	assert_true(out.v[1].pc == 115);
	TALLY_AGENT_PUSH(t, ids[2], 115);
	assert_int_equal(scan(&st, &out), 3);
	assert_string_equal(out.v[2].code->name, "g");
	assert_true(out.v[2].pc == 210);
	assert_int_equal(st.pc_outside, 0);
	vec_free(&out);
}

static void failures_give_no_frame_and_are_counted(void **state)
{
	(void)state;
	struct replay_vm_stats st;
	replay_vm_frames out = { 0 };

	push_three();
	stack.loop.self += 8; /* a copy of a record made elsewhere */
	assert_int_equal(scan(&st, &out), 0);
	stack.loop.self -= 8;

	t->seq++; /* sampled in the middle of a push */
	assert_int_equal(scan(&st, &out), 0);
	assert_int_equal(st.changing, 1);
	t->seq++;

	struct tally_agent_frame *frames = t->frames;
	t->frames = (struct tally_agent_frame *)(stack.above + 48); /* runs past the copy */
	assert_int_equal(scan(&st, &out), 0);
	assert_int_equal(st.unreadable, 1);
	t->frames = frames;

	stack.loop.agent = agent_number + 1;
	assert_int_equal(scan(&st, &out), 0);
	assert_int_equal(st.no_registry, 1);
	stack.loop.agent = agent_number;

	stack.frames[1].function = 99;
	assert_int_equal(scan(&st, &out), 0);
	assert_int_equal(st.unknown_function, 1);
	stack.frames[1].function = ids[1];

	TALLY_AGENT_PC(t, 220); /* g is [210, 220) */
	assert_int_equal(scan(&st, &out), 0);
	assert_int_equal(st.pc_outside, 1);

	while (t->depth)
		TALLY_AGENT_POP(t);
	assert_int_equal(scan(&st, &out), 0);
	assert_int_equal(st.empty, 1);

	push_three();
	tally_agent_loop_end(&stack.loop);
	assert_int_equal(scan(&st, &out), 0);
	assert_int_equal(st.changing + st.empty + st.unreadable + st.no_registry, 0);
	vec_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames_come_back_outermost_first),
		cmocka_unit_test(push_and_pop_windows_give_the_frames_own_pcs),
		cmocka_unit_test(failures_give_no_frame_and_are_counted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
