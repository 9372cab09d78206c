/*
 * The sBPF interpreter, verifier and hash on hand-assembled bytecode. Expected values come
 * from the reference VM (anza-xyz/sbpf tests/execution.rs, tests/verifier.rs) and, for the
 * syscall hashes, from the ids the Solana SDK hard-codes for its syscalls.
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
#include "sbpf/disasm.h"
#include "sbpf/program.h"
#include "sbpf/vm.h"
#include "solana/syscalls.h"

#define I(op, dst, src, off, imm)                                                            \
	(uint8_t)(op), (uint8_t)((src) << 4 | (dst)), (uint8_t)((off) & 0xff),               \
		(uint8_t)(((off) >> 8) & 0xff), (uint8_t)((imm) & 0xff),                     \
		(uint8_t)(((imm) >> 8) & 0xff), (uint8_t)(((imm) >> 16) & 0xff),            \
		(uint8_t)(((uint32_t)(imm) >> 24) & 0xff)

struct run {
	struct sbpf_syscalls sys;
	struct sbpf_program *prog;
	struct sbpf_vm *vm;
	struct sbpf_result res;
};

static int load(struct run *r, enum sbpf_version v, const uint8_t *code, size_t len)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(sol_syscalls_standard(&r->sys, SOL_SYSCALLS_TEST_LOG), 0);
	struct sbpf_load_options opt = { false, v, true };
	return sbpf_program_load("test", code, len, &r->sys, &opt, &r->prog);
}

static void run_cfg(struct run *r, enum sbpf_version v, const uint8_t *code, size_t len,
		    uint8_t *input, size_t input_len, const struct sbpf_vm_config *cfg,
		    const struct sbpf_hooks *hooks)
{
	if (load(r, v, code, len))
		fail_msg("load: %s", err_msg());
	assert_int_equal(sbpf_vm_create(r->prog, cfg, &r->vm), 0);
	sbpf_vm_set_input(r->vm, input, input_len, true);
	sbpf_vm_set_hooks(r->vm, hooks);
	assert_int_equal(sbpf_vm_run(r->vm, &r->res), 0);
}

static void run(struct run *r, enum sbpf_version v, const uint8_t *code, size_t len,
		uint64_t budget)
{
	struct sbpf_vm_config cfg = { .compute_budget = budget };
	run_cfg(r, v, code, len, NULL, 0, &cfg, NULL);
}

static void done(struct run *r)
{
	sbpf_vm_free(r->vm);
	sbpf_program_free(r->prog);
	sbpf_syscalls_free(&r->sys);
}

static void hash_matches_solana_syscall_ids(void **state)
{
	/* The entrypoint key of the reference, and syscall ids from solana-define-syscall. */
	assert_int_equal(sbpf_hash("entrypoint", 10), 0x71e3cf81);
	assert_int_equal(sbpf_hash("sol_log_", 8), 0x207559bd);
	assert_int_equal(sbpf_hash("abort", 5), 0xb6fc1a11);
	assert_int_equal(sbpf_hash("sol_memcpy_", 11), 0x717cc4a3);
}

static void ldxdw_past_input_is_access_violation(void **state)
{
	uint8_t input[12] = { 0xaa, 0xbb, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xcc, 0xdd };
	const uint8_t code[] = { I(0x79, 0, 1, 6, 0), I(0x95, 0, 0, 0, 0) };
	struct run r;
	run_cfg(&r, SBPF_V3, code, sizeof(code), input, sizeof(input), NULL, NULL);
	assert_int_equal(r.res.error, SBPF_E_ACCESS_VIOLATION);
	assert_int_equal(r.res.addr, 0x400000006ull);
	assert_int_equal(r.res.size, 8);
	assert_false(r.res.store);
	assert_string_equal(r.res.region, "input");
	assert_int_equal(r.res.cu_used, 1);
	assert_int_equal(r.res.pc, 0);
	done(&r);
	/* no input at all: the same address is unallocated */
	run(&r, SBPF_V3, code, sizeof(code), 0);
	assert_string_equal(r.res.region, "unallocated");
	done(&r);
}

static void below_stack_is_stack_frame_zero(void **state)
{
	/* stb [r10-0x1001], 0 with fixed frames: MM_STACK_START - 1 is blamed on frame 0 */
	const uint8_t code[] = { I(0x72, 10, 0, -0x1001, 0), I(0x95, 0, 0, 0, 0) };
	struct run r;
	run(&r, SBPF_V3, code, sizeof(code), 0);
	assert_int_equal(r.res.error, SBPF_E_STACK_ACCESS_VIOLATION);
	assert_int_equal(r.res.addr, 0x1ffffffffull);
	assert_int_equal(r.res.stack_frame, 0);
	assert_true(r.res.store);
	done(&r);
}

static void v0_stack_frames_have_gaps(void **state)
{
	/* r10 starts at the end of frame 0; in v0 the next 4 KiB are a gap */
	const uint8_t ok[] = { I(0x7a, 10, 0, -8, 7), I(0x79, 0, 10, -8, 0), I(0x95, 0, 0, 0, 0) };
	const uint8_t gap[] = { I(0x72, 10, 0, 0, 0), I(0x95, 0, 0, 0, 0) };
	struct run r;
	run(&r, SBPF_V0, ok, sizeof(ok), 0);
	assert_int_equal(r.res.error, SBPF_OK);
	assert_int_equal(r.res.r0, 7);
	done(&r);
	run(&r, SBPF_V0, gap, sizeof(gap), 0);
	assert_int_equal(r.res.error, SBPF_E_STACK_ACCESS_VIOLATION);
	assert_int_equal(r.res.stack_frame, 1);
	done(&r);
	/* the same store in v3 lands in frame 1, which is mapped */
	run(&r, SBPF_V3, gap, sizeof(gap), 0);
	assert_int_equal(r.res.error, SBPF_OK);
	done(&r);
}

static void budget_is_exact(void **state)
{
	const uint8_t code[] = { I(0xb7, 0, 0, 0, 1), I(0xb7, 0, 0, 0, 2), I(0x95, 0, 0, 0, 0) };
	struct run r;
	run(&r, SBPF_V3, code, sizeof(code), 3);
	assert_int_equal(r.res.error, SBPF_OK);
	assert_int_equal(r.res.cu_used, 3);
	done(&r);
	run(&r, SBPF_V3, code, sizeof(code), 2);
	assert_int_equal(r.res.error, SBPF_E_EXCEEDED_MAX_INSTRUCTIONS);
	assert_int_equal(r.res.cu_used, 2);
	assert_int_equal(r.res.pc, 2);
	done(&r);
}

static void lddw_costs_one_unit(void **state)
{
	const uint8_t code[] = { I(0x18, 0, 0, 0, 0x55667788), I(0, 0, 0, 0, 0x11223344),
				 I(0x95, 0, 0, 0, 0) };
	struct run r;
	run(&r, SBPF_V0, code, sizeof(code), 0);
	assert_int_equal(r.res.r0, 0x1122334455667788ull);
	assert_int_equal(r.res.cu_used, 2);
	done(&r);
}

static void falling_off_the_end_is_execution_overrun(void **state)
{
	const uint8_t code[] = { I(0xb7, 0, 0, 0, 1) };
	struct run r;
	run(&r, SBPF_V3, code, sizeof(code), 0);
	assert_int_equal(r.res.error, SBPF_E_EXECUTION_OVERRUN);
	assert_int_equal(r.res.cu_used, 2);
	done(&r);
}

static void division_errors(void **state)
{
	const uint8_t div0[] = { I(0xb4, 0, 0, 0, 1), I(0xb4, 1, 0, 0, 0), I(0x3c, 0, 1, 0, 0),
				 I(0x95, 0, 0, 0, 0) };
	struct run r;
	run(&r, SBPF_V0, div0, sizeof(div0), 0);
	assert_int_equal(r.res.error, SBPF_E_DIVIDE_BY_ZERO);
	assert_int_equal(r.res.cu_used, 3);
	done(&r);
	/* v2 sdiv32 of INT32_MIN by -1 */
	const uint8_t ovf[] = { I(0xb4, 0, 0, 0, 0x80000000), I(0xc6, 0, 0, 0, -1), I(0x95, 0, 0, 0, 0) };
	run(&r, SBPF_V2, ovf, sizeof(ovf), 0);
	assert_int_equal(r.res.error, SBPF_E_DIVIDE_OVERFLOW);
	done(&r);
}

static void recursion_stops_at_depth_64(void **state)
{
	/* v3: call -1 (src 1) calls itself forever */
	const uint8_t code[] = { I(0x85, 0, 1, 0, -1), I(0x95, 0, 0, 0, 0) };
	struct run r;
	run(&r, SBPF_V3, code, sizeof(code), 0);
	assert_int_equal(r.res.error, SBPF_E_CALL_DEPTH_EXCEEDED);
	assert_int_equal(r.res.cu_used, 64);
	done(&r);
}

static void add32_sign_extends_before_v2(void **state)
{
	const uint8_t code[] = { I(0xb4, 0, 0, 0, 0x7fffffff), I(0x04, 0, 0, 0, 1), I(0x95, 0, 0, 0, 0) };
	struct run r;
	run(&r, SBPF_V0, code, sizeof(code), 0);
	assert_int_equal(r.res.r0, 0xffffffff80000000ull);
	done(&r);
	run(&r, SBPF_V2, code, sizeof(code), 0);
	assert_int_equal(r.res.r0, 0x80000000ull);
	done(&r);
}

static void v1_v2_differences(void **state)
{
	struct run r;
	/* v1: r10 starts at the top of the whole stack and only moves when the program moves
	 * it (add64 r10, imm is allowed, in multiples of 64) */
	const uint8_t bump[] = { I(0x07, 10, 0, 0, -64), I(0xbf, 0, 10, 0, 0), I(0x95, 0, 0, 0, 0) };
	run(&r, SBPF_V1, bump, sizeof(bump), 0);
	assert_int_equal(r.res.r0, 0x200000000ull + 64 * 4096 - 64);
	done(&r);
	assert_int_not_equal(load(&r, SBPF_V3, bump, sizeof(bump)), 0);
	assert_string_equal(err_msg(), "test: VerifierError(CannotWriteR10(0))");
	done(&r);
	/* v2: sub with an immediate computes imm - dst; 0x2c loads a byte (it is mul32 before) */
	uint8_t input[4] = { 9, 0, 0, 0 };
	const uint8_t v2[] = { I(0xb7, 0, 0, 0, 3), I(0x17, 0, 0, 0, 10), I(0x2c, 2, 1, 0, 0),
			       I(0x0f, 0, 2, 0, 0), I(0x95, 0, 0, 0, 0) };
	run_cfg(&r, SBPF_V2, v2, sizeof(v2), input, sizeof(input), NULL, NULL);
	assert_int_equal(r.res.error, SBPF_OK);
	assert_int_equal(r.res.r0, 10 - 3 + 9);
	done(&r);
	/* the same bytes in v0: 3 - 10, then mul32 r2, r1 */
	run_cfg(&r, SBPF_V0, v2, sizeof(v2), input, sizeof(input), NULL, NULL);
	assert_int_equal(r.res.r0, (uint64_t)(3 - 10) + 0);
	done(&r);
}

static void verifier_rejects_like_the_reference(void **state)
{
	struct run r;
	const uint8_t r10[] = { I(0xb7, 10, 0, 0, 1), I(0x95, 0, 0, 0, 0) };
	assert_int_not_equal(load(&r, SBPF_V3, r10, sizeof(r10)), 0);
	assert_string_equal(err_msg(), "test: VerifierError(CannotWriteR10(0))");
	done(&r);
	const uint8_t jmp[] = { I(0x05, 0, 0, 5, 0), I(0x95, 0, 0, 0, 0) };
	assert_int_not_equal(load(&r, SBPF_V3, jmp, sizeof(jmp)), 0);
	assert_string_equal(err_msg(), "test: VerifierError(JumpOutOfCode(6, 0))");
	done(&r);
	const uint8_t div[] = { I(0x37, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0) };
	assert_int_not_equal(load(&r, SBPF_V0, div, sizeof(div)), 0);
	assert_string_equal(err_msg(), "test: VerifierError(DivisionByZero(0))");
	done(&r);
	/* jmp32 exists from v3 on only */
	const uint8_t j32[] = { I(0x16, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0) };
	assert_int_not_equal(load(&r, SBPF_V0, j32, sizeof(j32)), 0);
	assert_string_equal(err_msg(), "test: VerifierError(UnknownOpCode(0x16, 0))");
	done(&r);
	assert_int_equal(load(&r, SBPF_V3, j32, sizeof(j32)), 0);
	done(&r);
}

struct counts {
	uint64_t insns, syscall_cu, calls, returns;
	unsigned max_depth;
};

static void on_insns(void *ctx, const struct sbpf_insn_run *runs, size_t nruns)
{
	for (size_t i = 0; i < nruns; i++)
		((struct counts *)ctx)->insns += runs[i].n;
}

static void on_call(void *ctx, uint64_t call_pc, uint64_t target, unsigned depth)
{
	struct counts *c = ctx;
	c->calls++;
	if (depth > c->max_depth)
		c->max_depth = depth;
}

static void on_return(void *ctx, uint64_t pc, unsigned depth)
{
	((struct counts *)ctx)->returns++;
}

static void on_exit_sc(void *ctx, const struct sbpf_syscall *sc, uint64_t cost)
{
	((struct counts *)ctx)->syscall_cu += cost;
}

static void hooks_account_for_every_unit(void **state)
{
	/* f(3) recursion (v3) with a sol_log_64_ (100 CU) in every frame */
	const uint8_t code[] = {
		I(0xb7, 1, 0, 0, 3),                 /* 0: r1 = 3 */
		I(0x85, 0, 1, 0, 1),                 /* 1: call 3 */
		I(0x95, 0, 0, 0, 0),                 /* 2: exit */
		I(0x85, 0, 0, 0, (int32_t)0x5c2a3178), /* 3: syscall sol_log_64_ */
		I(0x15, 1, 0, 3, 0),                 /* 4: if r1 == 0 goto 8 */
		I(0x17, 1, 0, 0, 1),                 /* 5: r1 -= 1 */
		I(0x85, 0, 1, 0, -4),                /* 6: call 3 */
		I(0x95, 0, 0, 0, 0),                 /* 7: exit */
		I(0x95, 0, 0, 0, 0),                 /* 8: exit */
	};
	struct counts c = { 0 };
	struct sbpf_hooks h = { .ctx = &c, .on_insns = on_insns, .on_call = on_call,
				.on_return = on_return, .on_syscall_exit = on_exit_sc };
	struct run r;
	run_cfg(&r, SBPF_V3, code, sizeof(code), NULL, 0, NULL, &h);
	assert_int_equal(r.res.error, SBPF_OK);
	assert_int_equal(c.syscall_cu, 400);
	assert_int_equal(c.insns + c.syscall_cu, r.res.cu_used);
	assert_int_equal(c.insns, r.res.insns);
	assert_int_equal(c.calls, 4);
	assert_int_equal(c.returns, 4);
	assert_int_equal(c.max_depth, 4);
	assert_int_equal(sbpf_vm_log_count(r.vm), 4);
	assert_string_equal(sbpf_vm_log_at(r.vm, 0), "Program log: 0x3, 0x0, 0x0, 0x0, 0x0");
	done(&r);
}

struct costs {
	uint64_t v[8];
	size_t n;
};

static void record_cost(void *ctx, const struct sbpf_syscall *sc, uint64_t cost)
{
	struct costs *c = ctx;
	if (c->n < 8)
		c->v[c->n++] = cost;
}

static void syscall_costs_follow_agave(void **state)
{
	/* input: a slice {0x400000010, 100} at 0, then 300 bytes */
	static uint8_t input[16 + 300];
	uint64_t addr = 0x400000010ull, len = 100;
	memcpy(input, &addr, 8);
	memcpy(input + 8, &len, 8);
	const uint8_t code[] = {
		I(0xbf, 6, 1, 0, 0),                      /* r6 = input */
		I(0xbf, 1, 6, 0, 0), I(0x07, 1, 0, 0, 16), I(0xb7, 2, 0, 0, 5),
		I(0x85, 0, 0, 0, (int32_t)0x207559bd),    /* sol_log_(input+16, 5): 100 */
		I(0xbf, 1, 6, 0, 0), I(0x07, 1, 0, 0, 16), I(0xb7, 2, 0, 0, 300),
		I(0x85, 0, 0, 0, (int32_t)0x207559bd),    /* sol_log_(input+16, 300): 300 */
		I(0xbf, 1, 6, 0, 0), I(0xb7, 2, 0, 0, 1), I(0xbf, 3, 6, 0, 0), I(0x07, 3, 0, 0, 200),
		I(0x85, 0, 0, 0, (int32_t)0x11f49d86),    /* sol_sha256(1 slice of 100): 85 + 50 */
		I(0xbf, 1, 6, 0, 0), I(0x07, 1, 0, 0, 16), I(0xbf, 2, 6, 0, 0), I(0xb7, 3, 0, 0, 3000),
		I(0x85, 0, 0, 0, (int32_t)0x434371f8),    /* sol_memmove_(.., 3000): out of input */
		I(0x95, 0, 0, 0, 0),
	};
	for (size_t i = 16; i < sizeof(input); i++)
		input[i] = 'a';
	struct costs c = { { 0 }, 0 };
	struct sbpf_hooks h = { .ctx = &c, .on_syscall_exit = record_cost };
	struct run r;
	run_cfg(&r, SBPF_V3, code, sizeof(code), input, sizeof(input), NULL, &h);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.v[0], 100);
	assert_int_equal(c.v[1], 300);
	assert_int_equal(c.v[2], 135);
	assert_int_equal(c.v[3], 12); /* max(10, 3000 / 250), charged before the fault */
	assert_int_equal(r.res.error, SBPF_E_ACCESS_VIOLATION);
	assert_int_equal(r.res.cu_used, 19 + 100 + 300 + 135 + 12);
	done(&r);
}

static void disassembly_uses_reference_syntax(void **state)
{
	const uint8_t code[] = { I(0x71, 2, 1, 12, 0), I(0x7b, 10, 6, -8, 0), I(0x55, 3, 0, 1, 8),
				 I(0xdc, 1, 0, 0, 16), I(0x18, 1, 0, 0, 0x10), I(0, 0, 0, 0, 1),
				 I(0x85, 0, 0, 0, (int32_t)0x207559bd), I(0x95, 0, 0, 0, 0) };
	static const char *const want[] = { "ldxb r2, [r1+0xc]", "stxdw [r10-0x8], r6",
					    "jne r3, 8, lbb_4", "be16 r1", "lddw r1, 0x100000010",
					    NULL, "syscall sol_log_", "exit" };
	struct run r;
	assert_int_equal(load(&r, SBPF_V0, code, sizeof(code)), 0);
	char buf[128];
	for (uint64_t pc = 0; pc < 8; pc++) {
		if (!want[pc])
			continue;
		sbpf_disasm(r.prog, pc, buf, sizeof(buf));
		assert_string_equal(buf, want[pc]);
	}
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hash_matches_solana_syscall_ids),
		cmocka_unit_test(ldxdw_past_input_is_access_violation),
		cmocka_unit_test(below_stack_is_stack_frame_zero),
		cmocka_unit_test(v0_stack_frames_have_gaps),
		cmocka_unit_test(budget_is_exact),
		cmocka_unit_test(lddw_costs_one_unit),
		cmocka_unit_test(falling_off_the_end_is_execution_overrun),
		cmocka_unit_test(division_errors),
		cmocka_unit_test(recursion_stops_at_depth_64),
		cmocka_unit_test(add32_sign_extends_before_v2),
		cmocka_unit_test(v1_v2_differences),
		cmocka_unit_test(verifier_rejects_like_the_reference),
		cmocka_unit_test(hooks_account_for_every_unit),
		cmocka_unit_test(syscall_costs_follow_agave),
		cmocka_unit_test(disassembly_uses_reference_syntax),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
