/*
 * tally's Solana runtime for one transaction: the accounts, the loaded programs, the stack
 * of running instructions, and cross-program invocation (sol_invoke_signed_c and
 * sol_invoke_signed_rust) between them. The fixture runner sets it up (fixture_run.c);
 * invoke.c runs one instruction, cpi_syscalls.c the syscalls that invoke another.
 */
#ifndef TALLY_SOLANA_RUNTIME_H
#define TALLY_SOLANA_RUNTIME_H

#include "sbpf/program.h"
#include "sbpf/syscall.h"
#include "sbpf/vm.h"
#include "solana/serialize.h"

enum {
	SOL_MAX_INVOKE_DEPTH = 5, /* the top-level instruction is 1 */
	SOL_INVOKE_UNITS = 946, /* invoke_units since SIMD-0339, as on mainnet and in LiteSVM 1.5 */
	/* max_instruction_trace_length: the transaction's instructions and all they invoke */
	SOL_MAX_INSTRUCTION_TRACE = 64,
};

struct sol_program {
	const uint8_t *id;
	const char *name;
	const char *path; /* the program's file, for an observer's symbols */
	struct sbpf_program *prog;
	bool aligned; /* false under the deprecated BPF loader (unaligned input) */
};

/* What watches the runtime's programs run (a profiler), told of every VM the runtime
 * creates. The runtime knows no more of it than this; any callback may be NULL. A nonzero
 * return fails the instruction as a tally failure (message set). */
struct sol_observer {
	void *ctx;
	/* A program is about to run in a VM of its own: the instruction's program (depth 1),
	 * or one invoked through CPI from a syscall of the program at depth - 1. *hooks (left
	 * NULL: none) are attached to its VM. */
	int (*program_start)(void *ctx, const struct sol_program *p, unsigned depth,
			     const struct sbpf_hooks **hooks);
	/* The program started at depth stopped, however it stopped. */
	int (*program_end)(void *ctx, unsigned depth);
	/* A builtin program (the System program, named name) ran at depth, in no VM: cu is
	 * what it took from the meter, charged to the invoking syscall at depth - 1. */
	int (*builtin_run)(void *ctx, const char *name, unsigned depth, uint64_t cu);
	/* The instruction ended (top: its program, which may not have run; cu: what it
	 * consumed), while its programs still exist. Not called when tally failed. */
	int (*instruction_end)(void *ctx, const struct sol_program *top, uint64_t cu);
};

/* One running instruction; a VM's user pointer. */
struct sol_invocation {
	struct sol_runtime *rt;
	const uint8_t *program_id;
	const struct sol_ix_account *ix;
	size_t n;
	struct sol_input input;
};

/* One instruction of the transaction's instruction trace, as it started: the runtime
 * records every instruction, top-level or invoked (sol_get_processed_sibling_instruction
 * reads it). */
struct sol_trace_entry {
	unsigned height; /* 1 for the transaction's instruction, one more per CPI */
	uint8_t program_id[32];
	uint8_t *data;
	size_t data_len;
	struct sol_ix_account *accounts;
	size_t naccounts;
};

struct sol_runtime {
	struct sol_account *accounts;
	size_t naccounts;
	struct sol_program *programs;
	size_t nprograms;
	const uint8_t *clock; /* 40 bytes */
	const uint8_t *rent;  /* 24 bytes */
	struct sol_invocation *stack[SOL_MAX_INVOKE_DEPTH];
	unsigned depth;
	const struct sol_observer *observer; /* optional */
	/* what the top-level instruction leaves: logs (malloc'd, framed as the runtime frames
	 * them: runtime_log.h) and return data */
	char **logs;
	size_t nlogs, logs_cap;
	size_t log_bytes;   /* what the log collector holds, against its limit */
	bool log_truncated; /* it logged "Log truncated" */
	uint8_t *return_data;
	size_t return_len;
	/* the program the transaction's return data belongs to (sol_get_return_data) */
	uint8_t return_program[32];
	struct sol_trace_entry *trace;
	size_t ntrace, trace_cap;
};

/* Frees rt's instruction trace. */
void sol_runtime_trace_free(struct sol_runtime *rt);

/* How one instruction ended: error "" on success, else the runtime's or VM's name;
 * log_text is what the runtime's "Program <id> failed: ..." line shows. */
struct sol_invoke_result {
	char error[64];
	char detail[SBPF_DESCRIBE_MAX];
	char log_text[SBPF_DESCRIBE_MAX];
	uint64_t cu;
	/* of cu, what the runtime took after a VM failure (deplete_cu_meter_on_vm_failure: the
	 * rest of the budget), which no instruction of the program consumed */
	uint64_t depleted;
};

/* Runs the instruction: serialize, run program_id's program with budget CU, deserialize
 * with the runtime's checks. Logs, framed by the runtime's invoke / consumed / return /
 * success or failed lines, and return data go to parent (a CPI's caller) or, at the top,
 * into rt. Negative only when tally failed. */
int sol_runtime_invoke(struct sol_runtime *rt, struct sbpf_vm *parent,
		       const uint8_t program_id[32], const struct sol_ix_account *ix, size_t n,
		       const uint8_t *data, size_t data_len, uint64_t budget,
		       struct sol_invoke_result *res);

/* Points sol_invoke_signed_c/_rust and the clock and rent sysvar syscalls of a standard
 * table at the runtime's versions. */
int sol_syscalls_cpi(struct sbpf_syscalls *s);

/* The runtime's name for a program's nonzero return value: "Custom(N)", "InvalidArgument"... */
void sol_program_error_name(uint64_t r0, char *buf, size_t size);

#endif
