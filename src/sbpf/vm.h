/*
 * The sBPF virtual machine: memory regions (rodata/bytecode, stack, heap, input) with
 * checked access, 4 KiB stack frames (with the v0 gaps), call depth 64, an exact compute
 * unit meter (1 per instruction, lddw included; syscalls charge their own cost on top),
 * and errors named as the reference VM names them.
 *
 * Hooks let a profiler (or a CPI implementation) watch calls, returns, syscalls and the
 * instruction meter without the VM knowing what they are for. With no hooks the VM runs
 * its fast variant; with hooks, a variant that also records the runs of executed
 * instructions and reports them before each boundary, so per-pc costs are exact. With a
 * published pc (sbpf_vm_publish_pc), a third: each instruction's pc is stored in an agent
 * thread state (include/tally/agent.h) for a sampler to read, and the hooks but on_insns
 * are called at calls, returns and syscalls.
 *
 * Ownership: a VM borrows its program (which must outlive it) and owns its stack, heap,
 * logs and return data. The input buffer is borrowed too.
 */
#ifndef TALLY_SBPF_VM_H
#define TALLY_SBPF_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbpf/program.h"
#include "sbpf/syscall.h"

/* How a run ended: Ok, or the reference's EbpfError variant. */
enum sbpf_error {
	SBPF_OK,
	SBPF_E_CALL_DEPTH_EXCEEDED,
	SBPF_E_DIVIDE_BY_ZERO,
	SBPF_E_DIVIDE_OVERFLOW,
	SBPF_E_EXECUTION_OVERRUN,
	SBPF_E_CALL_OUTSIDE_TEXT_SEGMENT,
	SBPF_E_EXCEEDED_MAX_INSTRUCTIONS,
	SBPF_E_ACCESS_VIOLATION,
	SBPF_E_STACK_ACCESS_VIOLATION,
	SBPF_E_INVALID_INSTRUCTION,
	SBPF_E_UNSUPPORTED_INSTRUCTION,
	SBPF_E_SYSCALL_ERROR,
};

/* "CallDepthExceeded", "AccessViolation", ... ("Ok" for SBPF_OK). */
const char *sbpf_error_name(enum sbpf_error e);

/* Room for a syscall error's description, and for the VM's description of an error: as
 * long as the longest line Solana's log collector can show (it holds 10,000 bytes), so
 * that a runtime on this VM logs a failure as agave does, whole. */
enum { SBPF_DETAIL_MAX = 10240, SBPF_DESCRIBE_MAX = SBPF_DETAIL_MAX + 256 };

/* Everything known about how a run ended. */
struct sbpf_result {
	enum sbpf_error error;
	uint64_t r0;           /* the return value on success */
	uint64_t cu_used;      /* compute units consumed, instructions and syscalls */
	uint64_t insns;        /* instructions executed (each cost 1 CU) */
	uint64_t pc;           /* the instruction that failed */
	/* access violations */
	bool store;
	uint64_t addr, size;
	int64_t stack_frame;   /* StackAccessViolation */
	const char *region;    /* AccessViolation: "program", "stack", "heap", "input", ... */
	/* syscall errors: the syscall's own error name (e.g. "Abort") and a description */
	char syscall_error[64];
	char detail[SBPF_DETAIL_MAX];
};

/* Formats the error the way the reference's Display does, with the pc:
 * "Access violation writing 8 bytes at address 0x400000010 (in input region) at pc 3". */
void sbpf_result_describe(const struct sbpf_result *r, char *buf, size_t size);

/* Instructions executed one after another: pcs lo .. lo + n - 1 (0 < n < SBPF_RUN_SYSCALL).
 * A run ends wherever control leaves straight-line code, so the interpreter records a run
 * per jump or call rather than a pc per instruction. In a trace of the hooks' own (below),
 * a syscall does not end the run of its call (control goes on at the next pc), and entries
 * with n >= SBPF_RUN_SYSCALL or n == 0 say where syscalls are, ahead of the run holding
 * their call:
 * - n == SBPF_RUN_SYSCALL | (pc + 1): the syscall called at pc ran, lo its own cost (never
 *   the instructions before it), and nothing was recorded or reported while it ran: the
 *   common case, one store;
 * - n == SBPF_RUN_SYSCALL: the syscall called at pc lo started, and did not end before the
 *   trace was read (it runs a program, or the trace was reported meanwhile);
 * - n == 0: the syscall started last ended, lo its own cost; a cost of UINT32_MAX or more
 *   is lo UINT32_MAX and the next entry's lo and n, its low and high halves.
 * (The loader refuses programs of 2^31 instructions or more.) */
struct sbpf_insn_run {
	uint32_t lo, n;
};
#define SBPF_RUN_SYSCALL (1u << 31)

#define SBPF_TRACE_CAP 4096

/* Where the hooked VM records runs (and syscalls) until it reports them: the entries
 * v[0 .. n). A trace given with the hooks is shared by every VM those hooks are attached
 * to: a VM run from a syscall (CPI) appends its entries after what its caller left
 * there, so the trace stays in execution order, and the hooks' owner may report it to
 * itself at any time (v[0 .. n), then n = 0), while a syscall runs for instance. A VM
 * reports it when its run ends, so n is 0 then: a syscall's caller finds n as it left it
 * only if nothing was recorded or reported while the syscall ran. */
struct sbpf_trace {
	size_t n;
	struct sbpf_insn_run v[SBPF_TRACE_CAP];
};

struct sbpf_hooks {
	void *ctx;
	/* The instructions executed since the last report, as runs in execution order; called
	 * before every other hook and when the run ends (this is the instruction-meter
	 * flush). */
	void (*on_insns)(void *ctx, const struct sbpf_insn_run *runs, size_t nruns);
	/* A bpf-to-bpf call at call_pc entered target_pc; depth is the new depth (1 = first). */
	void (*on_call)(void *ctx, uint64_t call_pc, uint64_t target_pc, unsigned depth);
	/* exit at exit_pc returned to the caller; depth is the new depth. */
	void (*on_return)(void *ctx, uint64_t exit_pc, unsigned depth);
	/* A syscall at pc, before it runs / after it ran with cost its own CU charge. */
	void (*on_syscall_enter)(void *ctx, uint64_t pc, const struct sbpf_syscall *sc);
	void (*on_syscall_exit)(void *ctx, const struct sbpf_syscall *sc, uint64_t cost);
	/* NULL, or the trace to record into (its n 0 before the first run). With a trace,
	 * syscalls are in it (on_insns gets them in order with the runs, only when the trace
	 * fills, at calls, returns and when the run ends) instead of calls of
	 * on_syscall_enter and on_syscall_exit, which then go unused: a syscall usually costs
	 * two stores instead of three calls. */
	struct sbpf_trace *trace;
};

struct sbpf_vm_config {
	uint64_t compute_budget;  /* CU; 0 means the Solana default 200000 */
	uint32_t heap_size;       /* bytes; 0 means 32 KiB */
	bool no_stack_frame_gaps; /* v0 without gaps (the runtime's direct-mapping mode) */
};

struct sbpf_vm;

int sbpf_vm_create(const struct sbpf_program *p, const struct sbpf_vm_config *cfg,
		   struct sbpf_vm **out);
void sbpf_vm_free(struct sbpf_vm *vm);
/* Maps input at 0x4_0000_0000 (r1 points there). Borrowed; must outlive the run. */
void sbpf_vm_set_input(struct sbpf_vm *vm, uint8_t *input, size_t len, bool writable);
void sbpf_vm_set_hooks(struct sbpf_vm *vm, const struct sbpf_hooks *hooks);
struct tally_agent_thread;
/* Runs the publishing variant, storing each pc in t (borrowed; NULL: not). */
void sbpf_vm_publish_pc(struct sbpf_vm *vm, struct tally_agent_thread *t);
/* Opaque pointer for syscalls (the fixture runner's state). */
void sbpf_vm_set_user(struct sbpf_vm *vm, void *user);
void *sbpf_vm_user(struct sbpf_vm *vm);

/* Runs from the entrypoint. Returns 0 with *res filled whatever the program did, or a
 * negative code when tally itself failed (out of memory). A VM runs once. */
int sbpf_vm_run(struct sbpf_vm *vm, struct sbpf_result *res);

const struct sbpf_program *sbpf_vm_program(const struct sbpf_vm *vm);
size_t sbpf_vm_log_count(const struct sbpf_vm *vm);
const char *sbpf_vm_log_at(const struct sbpf_vm *vm, size_t i);
/* Return data set by sol_set_return_data (NULL, 0 when none). */
const uint8_t *sbpf_vm_return_data(const struct sbpf_vm *vm, size_t *len);

/* ---- for syscalls ---- */

uint64_t sbpf_vm_remaining(const struct sbpf_vm *vm);
/* The name of the syscall running now (NULL outside syscalls). */
const char *sbpf_vm_current_syscall(const struct sbpf_vm *vm);
/* Charges cu; when fewer remain, takes them all and fails with ComputationalBudgetExceeded. */
int sbpf_vm_consume(struct sbpf_vm *vm, uint64_t cu);
/* Translates [addr, addr+len) for a load or a store; fails with the access violation. */
int sbpf_vm_map(struct sbpf_vm *vm, uint64_t addr, uint64_t len, bool store, uint8_t **host);
/* Ends the run with a syscall error named name (e.g. "Abort") and a description. */
int sbpf_vm_syscall_error(struct sbpf_vm *vm, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends a log line (copied). Lines are C strings: a NUL in msg, which the runtime logs
 * as it is, is kept as the two bytes C0 80 (modified UTF-8's NUL: never in a line that is
 * valid UTF-8, as logged lines are), and sbpf_log_decode gives the bytes back. */
int sbpf_vm_log(struct sbpf_vm *vm, const char *msg, size_t len);
/* len bytes as a log line, NULs kept as above: malloc'd, NULL when out of memory. */
char *sbpf_log_encode(const char *msg, size_t len);
/* The bytes a log line holds, NULs restored, into buf (strlen(line) bytes suffice); their
 * count. buf NULL: only the count (the line's length as the runtime counts it). */
size_t sbpf_log_decode(const char *line, char *buf);
int sbpf_vm_set_return_data(struct sbpf_vm *vm, const uint8_t *data, size_t len);
/* The heap allocator's position (bytes used from the heap's start) and the heap's size. */
uint64_t *sbpf_vm_heap_cursor(struct sbpf_vm *vm);
uint64_t sbpf_vm_heap_size(const struct sbpf_vm *vm);

#endif
