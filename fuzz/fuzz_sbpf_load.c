/*
 * libFuzzer target for the sBPF loader: arbitrary bytes as an ELF (.so, any version, or an
 * ET_REL object to link), with and without the deployment checks, and as raw bytecode. A loaded
 * program is disassembled whole, which touches every pre-decoded instruction.
 */
#include <stddef.h>
#include <stdint.h>

#include "sbpf/disasm.h"
#include "sbpf/program.h"
#include "solana/syscalls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbpf_syscalls sys;
	if (!sys.n)
		sol_syscalls_standard(&sys, SOL_SYSCALLS_TEST_LOG);
	for (int mode = 0; mode < 3; mode++) {
		struct sbpf_load_options opt = { mode == 1, SBPF_VRESERVED, mode == 2 };
		struct sbpf_program *p;
		if (sbpf_program_load("fuzz", data, size, &sys, &opt, &p))
			continue;
		char buf[256];
		for (uint64_t pc = 0; pc < p->ninsns; pc++)
			sbpf_disasm(p, pc, buf, sizeof(buf));
		sbpf_program_free(p);
	}
	return 0;
}
