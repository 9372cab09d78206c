/*
 * libFuzzer target for the sBPF interpreter: the first byte picks the version (v0..v4) and
 * the next 64 bytes are the input region; the rest is raw bytecode. Whatever verifies runs
 * with a small budget three times: plain, with counting hooks and under the profiler. All
 * runs must agree, the instruction trace must add up to the CU charged, no run may take more
 * CU than its budget, and the profile must build with a total equal to the CU consumed (the
 * profiler's invariant), whatever calls, returns, jumps, syscalls and failures it makes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuprof/profiler.h"
#include "profile/profile.h"
#include "sbpf/program.h"
#include "sbpf/vm.h"
#include "solana/syscalls.h"

#define BUDGET 20000

struct tally_hooks {
	uint64_t insns, syscall_cu;
	int depth;
};

static void on_insns(void *ctx, const struct sbpf_insn_run *runs, size_t nruns)
{
	for (size_t i = 0; i < nruns; i++)
		((struct tally_hooks *)ctx)->insns += runs[i].n;
}

static void on_exit_sc(void *ctx, const struct sbpf_syscall *sc, uint64_t cost)
{
	((struct tally_hooks *)ctx)->syscall_cu += cost;
}

static void run(const struct sbpf_program *p, const uint8_t *input, size_t input_len,
		const struct sbpf_hooks *h, struct sbpf_result *res)
{
	uint8_t buf[64];
	memcpy(buf, input, input_len);
	struct sbpf_vm_config cfg = { .compute_budget = BUDGET, .heap_size = 1024 };
	struct sbpf_vm *vm;
	if (sbpf_vm_create(p, &cfg, &vm))
		abort();
	sbpf_vm_set_input(vm, buf, input_len, true);
	sbpf_vm_set_hooks(vm, h);
	if (sbpf_vm_run(vm, res))
		abort();
	sbpf_vm_free(vm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbpf_syscalls sys;
	if (!sys.n)
		sol_syscalls_standard(&sys, SOL_SYSCALLS_TEST_LOG);
	if (size < 65)
		return 0;
	struct sbpf_load_options opt = { false, (enum sbpf_version)(data[0] % 5), true };
	struct sbpf_program *p;
	if (sbpf_program_load("fuzz", data + 65, size - 65, &sys, &opt, &p))
		return 0;
	struct sbpf_result plain, hooked;
	struct tally_hooks t = { 0 };
	struct sbpf_hooks h = { .ctx = &t, .on_insns = on_insns, .on_syscall_exit = on_exit_sc };
	run(p, data + 1, 64, NULL, &plain);
	run(p, data + 1, 64, &h, &hooked);
	struct cuprof *pr;
	struct sbpf_result profiled;
	struct prof *prof;
	int64_t total;
	if (cuprof_new(p, &pr))
		abort();
	run(p, data + 1, 64, cuprof_hooks(pr), &profiled);
	if (cuprof_build(pr, NULL, profiled.cu_used, &prof))
		abort();
	prof_grand_total(prof, &total);
	if ((uint64_t)total != profiled.cu_used || profiled.cu_used != plain.cu_used ||
	    profiled.error != plain.error)
		abort();
	prof_free(prof);
	cuprof_free(pr);
	if (plain.cu_used > BUDGET || plain.error != hooked.error || plain.cu_used != hooked.cu_used ||
	    plain.r0 != hooked.r0 || t.insns + t.syscall_cu != hooked.cu_used)
		abort();
	sbpf_program_free(p);
	return 0;
}
