/*
 * The CU profiler on hand-assembled bytecode (no symbols: frames are named by address).
 * Expected trees are worked out by hand from the bytecode: which pcs run in which frame,
 * agave's 100 CU per sol_log_64_ and 1000 per invocation.
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
#include "cuprof/profiler.h"
#include "profile/profile.h"
#include "report/report.h"
#include "sbpf/program.h"
#include "sbpf/vm.h"
#include "solana/syscalls.h"

#define I(op, dst, src, off, imm)                                                            \
	(uint8_t)(op), (uint8_t)((src) << 4 | (dst)), (uint8_t)((off) & 0xff),               \
		(uint8_t)(((off) >> 8) & 0xff), (uint8_t)((imm) & 0xff),                     \
		(uint8_t)(((imm) >> 8) & 0xff), (uint8_t)(((imm) >> 16) & 0xff),            \
		(uint8_t)(((uint32_t)(imm) >> 24) & 0xff)

/* Builds the profile of a finished run and frees the profiler; returns the folded stacks
 * (malloc'd). */
static char *folded_profile(struct cuprof *pr, uint64_t cu)
{
	struct prof *p;
	if (cuprof_build(pr, NULL, cu, &p))
		fail_msg("%s", err_msg());
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	struct rep_folded_opts fo = { .metric = -1 };
	assert_int_equal(rep_folded(f, p, &fo), 0);
	fclose(f);
	prof_free(p);
	cuprof_free(pr);
	return text;
}

/* A syscall during which the trace's owner reports the trace (vm.h allows it at any time):
 * its start is read before its end, as when it runs a program. Charges 7 CU. */
static struct cuprof *profiling;

static int test_report(struct sbpf_vm *vm, const uint64_t args[5], uint64_t *ret)
{
	(void)args;
	const struct sbpf_hooks *h = cuprof_hooks(profiling);
	h->on_insns(h->ctx, h->trace->v, h->trace->n);
	h->trace->n = 0;
	*ret = 0;
	return sbpf_vm_consume(vm, 7);
}

/* Runs code (v3 raw bytecode) profiled with budget; returns the folded stacks (malloc'd)
 * and the CU consumed. */
static char *profile(const uint8_t *code, size_t len, uint64_t budget, uint64_t *cu,
		     enum sbpf_error *error)
{
	struct sbpf_syscalls sys = { 0 };
	struct sbpf_program *prog;
	struct sbpf_vm *vm;
	struct cuprof *pr;
	struct sbpf_result res;
	struct sbpf_load_options opt = { false, SBPF_V3, true };
	struct sbpf_vm_config cfg = { .compute_budget = budget };
	assert_int_equal(sol_syscalls_standard(&sys, 0), 0);
	assert_int_equal(sbpf_syscalls_add(&sys, "test_report", test_report), 0);
	assert_int_equal(sbpf_program_load("test", code, len, &sys, &opt, &prog), 0);
	assert_int_equal(sbpf_vm_create(prog, &cfg, &vm), 0);
	assert_int_equal(cuprof_new(prog, &pr), 0);
	profiling = pr;
	sbpf_vm_set_hooks(vm, cuprof_hooks(pr));
	assert_int_equal(sbpf_vm_run(vm, &res), 0);
	char *text = folded_profile(pr, res.cu_used);
	*cu = res.cu_used;
	*error = res.error;
	sbpf_vm_free(vm);
	sbpf_program_free(prog);
	sbpf_syscalls_free(&sys);
	return text;
}

/* f(3) recursion with a sol_log_64_ in every frame: f runs pcs 3-7 (3, 4, 8 at the bottom),
 * the entrypoint pcs 0-2. */
static const uint8_t recursion[] = {
	I(0xb7, 1, 0, 0, 3),                   /* 0: r1 = 3 */
	I(0x85, 0, 1, 0, 1),                   /* 1: call 3 */
	I(0x95, 0, 0, 0, 0),                   /* 2: exit */
	I(0x85, 0, 0, 0, (int32_t)0x5c2a3178), /* 3: syscall sol_log_64_ */
	I(0x15, 1, 0, 3, 0),                   /* 4: if r1 == 0 goto 8 */
	I(0x17, 1, 0, 0, 1),                   /* 5: r1 -= 1 */
	I(0x85, 0, 1, 0, -4),                  /* 6: call 3 */
	I(0x95, 0, 0, 0, 0),                   /* 7: exit */
	I(0x95, 0, 0, 0, 0),                   /* 8: exit */
};

static void recursion_tree_is_exact(void **state)
{
	(void)state;
	uint64_t cu;
	enum sbpf_error e;
	char *folded = profile(recursion, sizeof(recursion), 0, &cu, &e);
	assert_int_equal(e, SBPF_OK);
	assert_int_equal(cu, 3 + 3 * 5 + 3 + 4 * 100);
	assert_string_equal(folded,
			    "test+0x0 3\n"
			    "test+0x0;test+0x18 5\n"
			    "test+0x0;test+0x18;syscall:sol_log_64_ 100\n"
			    "test+0x0;test+0x18;test+0x18 5\n"
			    "test+0x0;test+0x18;test+0x18;syscall:sol_log_64_ 100\n"
			    "test+0x0;test+0x18;test+0x18;test+0x18 5\n"
			    "test+0x0;test+0x18;test+0x18;test+0x18;syscall:sol_log_64_ 100\n"
			    "test+0x0;test+0x18;test+0x18;test+0x18;test+0x18 3\n"
			    "test+0x0;test+0x18;test+0x18;test+0x18;test+0x18;syscall:sol_log_64_ 100\n");
	free(folded);
}

/* A budget running out inside the second syscall: the syscall frame holds what it was
 * charged (the rest of the budget), the instructions before it stay with the caller. */
static void exhaustion_inside_a_syscall(void **state)
{
	(void)state;
	uint64_t cu;
	enum sbpf_error e;
	char *folded = profile(recursion, sizeof(recursion), 3 + 5 + 100 + 1 + 50, &cu, &e);
	assert_int_not_equal(e, SBPF_OK);
	assert_int_equal(cu, 159);
	assert_string_equal(folded,
			    "test+0x0 2\n"
			    "test+0x0;test+0x18 4\n"
			    "test+0x0;test+0x18;syscall:sol_log_64_ 100\n"
			    "test+0x0;test+0x18;test+0x18 1\n"
			    "test+0x0;test+0x18;test+0x18;syscall:sol_log_64_ 52\n");
	free(folded);
}

/* A syscall charging 2^33 CU (sol_memset_ of 250 * 2^33 bytes, 1 CU per 250, under a
 * budget of 2^34; the memory then fails to map): a cost that does not fit the trace's
 * 32 bits, whole in the syscall's frame. */
static void syscall_cost_beyond_32_bits(void **state)
{
	(void)state;
	int32_t key = (int32_t)sbpf_hash("sol_memset_", 11);
	const uint8_t code[] = {
		I(0x18, 3, 0, 0, 0), I(0, 0, 0, 0, 250 << 1), /* 0: r3 = 250 << 33 (lddw) */
		I(0x85, 0, 0, 0, key),                        /* 2: syscall sol_memset_ */
		I(0x95, 0, 0, 0, 0),                          /* 3: exit */
	};
	uint64_t cu;
	enum sbpf_error e;
	char *folded = profile(code, sizeof(code), 1ull << 34, &cu, &e);
	assert_int_not_equal(e, SBPF_OK);
	assert_int_equal(cu, 2 + (1ull << 33));
	assert_string_equal(folded, "test+0x0 2\n"
				    "test+0x0;syscall:sol_memset_ 8589934592\n");
	free(folded);
}

/* Two syscalls at two pcs in a loop of 5000 rounds: three trace entries a round, so the
 * trace fills (4096 entries) at every place in the round, and each pc's leaf gets its
 * 100 CU a round (agave's sol_log_64_ and syscall base costs). */
static void syscall_loop_across_trace_fills(void **state)
{
	(void)state;
	int32_t log = (int32_t)sbpf_hash("sol_log_64_", 11);
	int32_t height = (int32_t)sbpf_hash("sol_get_stack_height", 20);
	const uint8_t code[] = {
		I(0xb7, 6, 0, 0, 5000), /* 0: r6 = 5000 */
		I(0x85, 0, 0, 0, log),  /* 1: syscall sol_log_64_ */
		I(0x85, 0, 0, 0, height), /* 2: syscall sol_get_stack_height */
		I(0x17, 6, 0, 0, 1),    /* 3: r6 -= 1 */
		I(0x55, 6, 0, -4, 0),   /* 4: if r6 != 0 goto 1 */
		I(0x95, 0, 0, 0, 0),    /* 5: exit */
	};
	uint64_t cu;
	enum sbpf_error e;
	char *folded = profile(code, sizeof(code), 1u << 24, &cu, &e);
	assert_int_equal(e, SBPF_OK);
	assert_int_equal(cu, 2 + 5000 * (4 + 200));
	assert_string_equal(folded, "test+0x0 20002\n"
				    "test+0x0;syscall:sol_get_stack_height 500000\n"
				    "test+0x0;syscall:sol_log_64_ 500000\n");
	free(folded);
}

/* A syscall whose start the profiler reads before its end (the trace reported while it
 * runs) is charged like one read at once, and the run around its call stays whole. */
static void trace_reported_during_a_syscall(void **state)
{
	(void)state;
	int32_t report = (int32_t)sbpf_hash("test_report", 11);
	int32_t log = (int32_t)sbpf_hash("sol_log_64_", 11);
	const uint8_t code[] = {
		I(0xb7, 6, 0, 0, 2),      /* 0: r6 = 2 */
		I(0x85, 0, 0, 0, report), /* 1: syscall test_report */
		I(0x85, 0, 0, 0, log),    /* 2: syscall sol_log_64_ */
		I(0x17, 6, 0, 0, 1),      /* 3: r6 -= 1 */
		I(0x55, 6, 0, -4, 0),     /* 4: if r6 != 0 goto 1 */
		I(0x95, 0, 0, 0, 0),      /* 5: exit */
	};
	uint64_t cu;
	enum sbpf_error e;
	char *folded = profile(code, sizeof(code), 0, &cu, &e);
	assert_int_equal(e, SBPF_OK);
	assert_int_equal(cu, 2 + 2 * (4 + 7 + 100));
	assert_string_equal(folded, "test+0x0 10\n"
				    "test+0x0;syscall:sol_log_64_ 200\n"
				    "test+0x0;syscall:test_report 14\n");
	free(folded);
}

/* CPI as the runtime does it: a syscall charges its invoke cost, runs another program in
 * a VM of its own with the same profiler, and charges the callee's CU to the caller. */
struct cpi {
	struct cuprof *pr;
	const struct sbpf_program *callee;
	uint64_t callee_budget; /* 0: what the caller has left */
};
static struct cpi cpi_ctx;

static int test_invoke(struct sbpf_vm *vm, const uint64_t args[5], uint64_t *ret)
{
	(void)args;
	struct cpi *c = &cpi_ctx;
	struct sbpf_vm *inner;
	struct sbpf_result res;
	struct sbpf_vm_config cfg = { .compute_budget = c->callee_budget ? c->callee_budget
									 : sbpf_vm_remaining(vm) };
	if (sbpf_vm_consume(vm, 1000))
		return -1;
	assert_int_equal(cuprof_enter_program(c->pr, c->callee, "callee", NULL), 0);
	assert_int_equal(sbpf_vm_create(c->callee, &cfg, &inner), 0);
	sbpf_vm_set_hooks(inner, cuprof_hooks(c->pr));
	assert_int_equal(sbpf_vm_run(inner, &res), 0);
	sbpf_vm_free(inner);
	assert_int_equal(cuprof_exit_program(c->pr), 0);
	*ret = 0;
	return sbpf_vm_consume(vm, res.cu_used) ? -1 : 0;
}

/* Runs the caller (two invocations of the recursion program) profiled; returns the
 * folded stacks and the CU consumed. */
static char *profile_cpi(uint64_t callee_budget, uint64_t *cu)
{
	struct sbpf_syscalls sys = { 0 };
	assert_int_equal(sol_syscalls_standard(&sys, 0), 0);
	assert_int_equal(sbpf_syscalls_add(&sys, "test_invoke", test_invoke), 0);
	int32_t key = (int32_t)sbpf_hash("test_invoke", 11);
	const uint8_t caller[] = {
		I(0xb7, 6, 0, 0, 0),   /* 0: r6 = 0 */
		I(0x85, 0, 0, 0, key), /* 1: syscall test_invoke */
		I(0x07, 6, 0, 0, 1),   /* 2: r6 += 1 */
		I(0x85, 0, 0, 0, key), /* 3: syscall test_invoke */
		I(0x95, 0, 0, 0, 0),   /* 4: exit */
	};
	struct sbpf_load_options opt = { false, SBPF_V3, true };
	struct sbpf_program *top, *callee;
	struct sbpf_vm *vm;
	struct sbpf_result res;
	assert_int_equal(sbpf_program_load("test", caller, sizeof(caller), &sys, &opt, &top), 0);
	assert_int_equal(sbpf_program_load("callee", recursion, sizeof(recursion), &sys, &opt, &callee), 0);
	assert_int_equal(sbpf_vm_create(top, NULL, &vm), 0);
	assert_int_equal(cuprof_new(top, &cpi_ctx.pr), 0);
	cpi_ctx.callee = callee;
	cpi_ctx.callee_budget = callee_budget;
	sbpf_vm_set_hooks(vm, cuprof_hooks(cpi_ctx.pr));
	assert_int_equal(sbpf_vm_run(vm, &res), 0);
	assert_int_equal(res.error, SBPF_OK);
	*cu = res.cu_used;
	char *text = folded_profile(cpi_ctx.pr, res.cu_used);
	sbpf_vm_free(vm);
	sbpf_program_free(callee);
	sbpf_program_free(top);
	sbpf_syscalls_free(&sys);
	return text;
}

static void cpi_nests_the_callee_under_the_syscall(void **state)
{
	(void)state;
	uint64_t cu;
	char *text = profile_cpi(0, &cu);
	assert_int_equal(cu, 5 + 2 * (1000 + 421));
	/* folded lines come in frame order (labels bytewise: "callee+..." before "syscall:...") */
	const char *c = "test+0x0;syscall:test_invoke;program:callee;callee+0x0";
	char want[4096];
	snprintf(want, sizeof(want),
		 "test+0x0 5\n"
		 "test+0x0;syscall:test_invoke 2000\n"
		 "%s 6\n"
		 "%s;callee+0x18 10\n"
		 "%s;callee+0x18;callee+0x18 10\n"
		 "%s;callee+0x18;callee+0x18;callee+0x18 10\n"
		 "%s;callee+0x18;callee+0x18;callee+0x18;callee+0x18 6\n"
		 "%s;callee+0x18;callee+0x18;callee+0x18;callee+0x18;syscall:sol_log_64_ 200\n"
		 "%s;callee+0x18;callee+0x18;callee+0x18;syscall:sol_log_64_ 200\n"
		 "%s;callee+0x18;callee+0x18;syscall:sol_log_64_ 200\n"
		 "%s;callee+0x18;syscall:sol_log_64_ 200\n",
		 c, c, c, c, c, c, c, c, c);
	assert_string_equal(text, want);
	free(text);
}

/* A callee that runs out of its budget (109 CU) inside its second sol_log_64_, two calls
 * down: that syscall holds the 2 CU left; the profile returns to the invoking syscall all
 * the same, and still adds up. */
static void cpi_callee_stopping_deep_down(void **state)
{
	(void)state;
	uint64_t cu;
	char *text = profile_cpi(3 + 5 + 100 + 1, &cu);
	assert_int_equal(cu, 5 + 2 * (1000 + 109));
	assert_string_equal(text,
			    "test+0x0 5\n"
			    "test+0x0;syscall:test_invoke 2000\n"
			    "test+0x0;syscall:test_invoke;program:callee;callee+0x0 4\n"
			    "test+0x0;syscall:test_invoke;program:callee;callee+0x0;callee+0x18 8\n"
			    "test+0x0;syscall:test_invoke;program:callee;callee+0x0;callee+0x18;callee+0x18 2\n"
			    "test+0x0;syscall:test_invoke;program:callee;callee+0x0;callee+0x18;callee+0x18;syscall:sol_log_64_ 4\n"
			    "test+0x0;syscall:test_invoke;program:callee;callee+0x0;callee+0x18;syscall:sol_log_64_ 200\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recursion_tree_is_exact),
		cmocka_unit_test(exhaustion_inside_a_syscall),
		cmocka_unit_test(syscall_cost_beyond_32_bits),
		cmocka_unit_test(syscall_loop_across_trace_fills),
		cmocka_unit_test(trace_reported_during_a_syscall),
		cmocka_unit_test(cpi_nests_the_callee_under_the_syscall),
		cmocka_unit_test(cpi_callee_stopping_deep_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
