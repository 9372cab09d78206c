/*
 * tally's Solana runtime for one transaction: the accounts, the loaded programs, the stack
 * of running instructions, and cross-program invocation (sol_invoke_signed_c and
 * sol_invoke_signed_rust) between them. The fixture runner sets it up (fixture_run.c);
 * cpi.c implements the syscalls and the invocation of one instruction.
 */
#ifndef TALLY_SBPF_CPI_H
#define TALLY_SBPF_CPI_H

#include "sbpf/program.h"
#include "sbpf/serialize.h"
#include "sbpf/syscall.h"
#include "sbpf/vm.h"

enum {
	SBPF_MAX_INVOKE_DEPTH = 5, /* the top-level instruction is 1 */
	SBPF_INVOKE_UNITS = 1000,
};

struct sbpf_profiler;

struct sbpf_rt_program {
	const uint8_t *id;
	const char *name;
	const char *path; /* the program's file, for the profiler's symbols */
	struct sbpf_program *prog;
	bool aligned; /* false under the deprecated BPF loader (unaligned input) */
};

/* One running instruction; a VM's user pointer. */
struct sbpf_invocation {
	struct sbpf_runtime *rt;
	const uint8_t *program_id;
	const struct sbpf_ix_account *ix;
	size_t n;
	struct sbpf_input input;
};

struct sbpf_runtime {
	struct sbpf_account *accounts;
	size_t naccounts;
	struct sbpf_rt_program *programs;
	size_t nprograms;
	const uint8_t *clock; /* 40 bytes */
	const uint8_t *rent;  /* 24 bytes */
	struct sbpf_invocation *stack[SBPF_MAX_INVOKE_DEPTH];
	unsigned depth;
	/* optional: watches every VM; invoked programs nest under their invoke syscall */
	struct sbpf_profiler *profiler;
	/* what the top-level instruction leaves: logs (malloc'd, framed as the runtime frames
	 * them: runtime_log.h) and return data */
	char **logs;
	size_t nlogs, logs_cap;
	uint8_t *return_data;
	size_t return_len;
};

/* How one instruction ended: error "" on success, else the runtime's or VM's name;
 * log_text is what the runtime's "Program <id> failed: ..." line shows. */
struct sbpf_invoke_result {
	char error[64];
	char detail[400];
	char log_text[400];
	uint64_t cu;
};

/* Runs the instruction: serialize, run program_id's program with budget CU, deserialize
 * with the runtime's checks. Logs, framed by the runtime's invoke / consumed / return /
 * success or failed lines, and return data go to parent (a CPI's caller) or, at the top,
 * into rt. Negative only when tally failed. */
int sbpf_runtime_invoke(struct sbpf_runtime *rt, struct sbpf_vm *parent,
			const uint8_t program_id[32], const struct sbpf_ix_account *ix, size_t n,
			const uint8_t *data, size_t data_len, uint64_t budget,
			struct sbpf_invoke_result *res);

/* Points sol_invoke_signed_c/_rust and the clock and rent sysvar syscalls of a standard
 * table at the runtime's versions. */
int sbpf_syscalls_runtime_cpi(struct sbpf_syscalls *s);

/* The runtime's name for a program's nonzero return value: "Custom(N)", "InvalidArgument"... */
void sbpf_program_error_name(uint64_t r0, char *buf, size_t size);

#endif
