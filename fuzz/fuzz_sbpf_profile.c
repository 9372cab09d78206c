/*
 * libFuzzer target for the sBPF profiler: the first byte picks the version (v0..v4), the
 * next 64 bytes are the input region, the rest raw bytecode. Whatever verifies runs with a
 * small budget under the profiler; building the profile must succeed and its total must
 * equal the CU consumed (the profiler's invariant), whatever calls, returns, jumps across
 * functions, syscalls and failures the random program makes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "sbpf/profiler.h"
#include "sbpf/program.h"
#include "sbpf/syscall.h"
#include "sbpf/vm.h"

#define BUDGET 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbpf_syscalls sys;
	if (!sys.n)
		sbpf_syscalls_standard(&sys, SBPF_SYSCALLS_TEST_LOG);
	if (size < 65)
		return 0;
	struct sbpf_load_options opt = { false, (enum sbpf_version)(data[0] % 5), true };
	struct sbpf_program *p;
	if (sbpf_program_load("fuzz", data + 65, size - 65, &sys, &opt, &p))
		return 0;
	uint8_t input[64];
	memcpy(input, data + 1, sizeof(input));
	struct sbpf_vm_config cfg = { .compute_budget = BUDGET, .heap_size = 1024 };
	struct sbpf_vm *vm;
	struct sbpf_profiler *pr;
	struct sbpf_result res;
	struct prof *prof;
	if (sbpf_vm_create(p, &cfg, &vm) || sbpf_profiler_new(p, &pr))
		abort();
	sbpf_vm_set_input(vm, input, sizeof(input), true);
	sbpf_vm_set_hooks(vm, sbpf_profiler_hooks(pr));
	if (sbpf_vm_run(vm, &res) || sbpf_profiler_build(pr, NULL, res.cu_used, &prof))
		abort();
	int64_t total;
	prof_grand_total(prof, &total);
	if ((uint64_t)total != res.cu_used)
		abort();
	prof_free(prof);
	sbpf_profiler_free(pr);
	sbpf_vm_free(vm);
	sbpf_program_free(p);
	return 0;
}
