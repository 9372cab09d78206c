/*
 * An interpreter that is only its profile: functions with hostile names and instruction
 * texts (markup, a line break) registered with the agent, and known costs charged to their
 * pcs in exact mode, for tests/report/annotate_bytecode.test.sh. Prints "PC COST" for each
 * charge, the oracle the annotation must show; fails when the agent takes instructions out
 * of pc order or without a text.
 *   annotate_bytecode_prog EXACT.pb.gz LISTING
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <tally/agent.h>

static int fail(const char *what)
{
	fprintf(stderr, "annotate_bytecode_prog: %s: %s\n", what, tally_errmsg());
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	struct tally_agent_opts o = { .sz = sizeof(o), .mode = TALLY_AGENT_EXACT,
				      .exact_output = argv[1], .listing = argv[2] };
	struct tally_agent *a;
	if (tally_agent_new(&o, &a))
		return fail("agent");
	static const struct tally_agent_insn script_insns[] = {
		{ 0, "<img src=x onerror=alert(2)>" }, { 1, "x & y < z" }, { 2, "ret" } };
	static const struct tally_agent_line script_lines[] = { { 0, 7 }, { 2, 8 } };
	static const struct tally_agent_insn two_insns[] = { { 10, "a\nb" }, { 11, "c" } };
	const struct tally_agent_function fns[] = {
		{ .sz = sizeof(fns[0]), .name = "<script>alert(1)</script>", .file = "a&b.src",
		  .line = 7, .start = 0, .end = 3, .insns = script_insns, .ninsns = 3,
		  .lines = script_lines, .nlines = 2 },
		{ .sz = sizeof(fns[0]), .name = "two\nlines", .start = 10, .end = 12,
		  .insns = two_insns, .ninsns = 2 },
	};
	uint32_t id[2];
	struct tally_agent_thread *t;
	for (int i = 0; i < 2; i++)
		if (tally_agent_register(a, &fns[i], &id[i]))
			return fail(fns[i].name);
	/* instructions must come by increasing pc, each with a text */
	static const struct tally_agent_insn twice[] = { { 5, "a" }, { 5, "b" } };
	static const struct tally_agent_insn untold[] = { { 5, NULL } };
	const struct tally_agent_function bad[] = {
		{ .sz = sizeof(bad[0]), .name = "twice", .start = 5, .end = 6, .insns = twice, .ninsns = 2 },
		{ .sz = sizeof(bad[0]), .name = "untold", .start = 5, .end = 6, .insns = untold, .ninsns = 1 },
	};
	for (int i = 0; i < 2; i++) {
		uint32_t unused;
		if (tally_agent_register(a, &bad[i], &unused) != -EINVAL) {
			fprintf(stderr, "annotate_bytecode_prog: %s was registered\n", bad[i].name);
			return 1;
		}
	}
	if (tally_agent_thread_register(a, &t) || tally_agent_start(a))
		return fail("agent");
	static const struct { int fn; uint64_t pc, cost; } charges[] = {
		{ 0, 0, 5 }, { 0, 1, 7 }, { 1, 11, 3 } };
	tally_agent_enter(t, id[0], 0);
	for (size_t i = 0; i < sizeof(charges) / sizeof(charges[0]); i++) {
		if (charges[i].fn == 1 && i && charges[i - 1].fn == 0)
			tally_agent_enter(t, id[1], 1);
		tally_agent_cost(t, charges[i].pc, charges[i].cost);
		printf("%" PRIx64 " %" PRIu64 "\n", charges[i].pc, charges[i].cost);
	}
	tally_agent_exit(t);
	tally_agent_exit(t);
	if (tally_agent_stop(a))
		return fail("stop");
	tally_agent_free(a);
	return 0;
}
