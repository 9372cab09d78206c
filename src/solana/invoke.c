/*
 * Running one instruction in the runtime (runtime.h): the BPF loader's part of agave's
 * process_instruction. The input is serialized, the program runs in a fresh VM on the
 * caller's remaining compute units, a nonzero return value becomes the runtime's error,
 * and on success the accounts are deserialized with the runtime's checks; the lamports
 * the instruction's accounts hold must not change in sum (UnbalancedInstruction).
 */
#include "solana/runtime.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "solana/encoding.h"
#include "solana/runtime_log.h"
#include "solana/syscalls.h"
#include "solana/system_program.h"

void sol_program_error_name(uint64_t r0, char *buf, size_t size)
{
	static const char *const builtin[] = {
		NULL, NULL, "InvalidArgument", "InvalidInstructionData", "InvalidAccountData",
		"AccountDataTooSmall", "InsufficientFunds", "IncorrectProgramId",
		"MissingRequiredSignature", "AccountAlreadyInitialized", "UninitializedAccount",
		"NotEnoughAccountKeys", "AccountBorrowFailed", "MaxSeedLengthExceeded",
		"InvalidSeeds", "BorshIoError", "AccountNotRentExempt", "UnsupportedSysvar",
		"IllegalOwner", "MaxAccountsDataAllocationsExceeded", "InvalidRealloc",
		"MaxInstructionTraceLengthExceeded", "BuiltinProgramsMustConsumeComputeUnits",
		"InvalidAccountOwner", "ArithmeticOverflow", "Immutable", "IncorrectAuthority",
	};
	uint64_t hi = r0 >> 32;
	if (!hi)
		snprintf(buf, size, "Custom(%u)", (unsigned)r0);
	else if (hi == 1 && !(uint32_t)r0)
		snprintf(buf, size, "Custom(0)");
	else if (!(uint32_t)r0 && hi < sizeof(builtin) / sizeof(builtin[0]))
		snprintf(buf, size, "%s", builtin[hi]);
	else
		snprintf(buf, size, "InvalidError");
}

static const struct sol_program *find_program(const struct sol_runtime *rt,
						  const uint8_t id[32])
{
	for (size_t i = 0; i < rt->nprograms; i++)
		if (!memcmp(rt->programs[i].id, id, 32))
			return &rt->programs[i];
	return NULL;
}

/* Sum of the lamports of the instruction's distinct accounts (as u128, in two halves). */
static void lamport_sum(const struct sol_runtime *rt, const struct sol_ix_account *ix,
			size_t n, uint64_t sum[2])
{
	sum[0] = sum[1] = 0;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t j = 0; j < i; j++)
			dup |= ix[j].index == ix[i].index;
		if (dup)
			continue;
		uint64_t v = rt->accounts[ix[i].index].lamports;
		sum[0] += v;
		sum[1] += sum[0] < v;
	}
}

/* agave's log collector (LiteSVM's too) holds 10,000 bytes of lines: a line that would
 * reach the limit is dropped, the first one dropped leaves "Log truncated" (which counts
 * for nothing), and shorter lines that still fit are logged after it. */
enum { LOG_BYTES_LIMIT = 10000 };

/* Appends a log line where this instruction's logs go: the caller's VM for a CPI (whose
 * logs pass on in turn when it ends), the transaction's at the top. Lines reach the top in
 * the order the runtime logs them, so the collector's limit is applied there. */
static int emit(struct sol_runtime *rt, struct sbpf_vm *parent, const char *line)
{
	if (parent)
		return sbpf_vm_log(parent, line, strlen(line));
	size_t len = sbpf_log_decode(line, NULL);
	if (rt->log_bytes + len >= LOG_BYTES_LIMIT) {
		if (rt->log_truncated)
			return 0;
		rt->log_truncated = true;
		line = "Log truncated";
	} else {
		rt->log_bytes += len;
	}
	char *copy = strdup(line);
	char **slot = copy ? vec_push_raw((void **)&rt->logs, &rt->nlogs, &rt->logs_cap,
					  sizeof(*rt->logs))
			   : NULL;
	if (!slot) {
		free(copy);
		return -ENOMEM;
	}
	*slot = copy;
	return 0;
}

static int emitf(struct sol_runtime *rt, struct sbpf_vm *parent, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int emitf(struct sol_runtime *rt, struct sbpf_vm *parent, const char *fmt, ...)
{
	char *line;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	int rc = emit(rt, parent, line);
	free(line);
	return rc;
}

/* After the run: the program's logs, then the runtime's "consumed" and (when return data
 * is set) "Program return:" lines. Return data belongs to the transaction: the runtime
 * clears it when an instruction starts, so the caller sees what the callee left, even
 * nothing, and "Program return:" names the program that just ran whoever set the data. */
static int pass_on(struct sol_runtime *rt, struct sbpf_vm *parent, struct sbpf_vm *vm,
		   const char *id58, uint64_t cu, uint64_t budget)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < sbpf_vm_log_count(vm); i++)
		rc = emit(rt, parent, sbpf_vm_log_at(vm, i));
	if (!rc)
		rc = emitf(rt, parent, "Program %s consumed %" PRIu64 " of %" PRIu64 " compute units",
			   id58, cu, budget);
	size_t rlen;
	const uint8_t *rdata = sbpf_vm_return_data(vm, &rlen);
	if (!rc && rlen) {
		size_t cap = 16 + strlen(id58) + 1 + (rlen + 2) / 3 * 4 + 1;
		char *line = malloc(cap);
		if (!line)
			return -ENOMEM;
		size_t o = (size_t)snprintf(line, cap, "Program return: %s ", id58);
		line[o + sol_base64_encode(rdata, rlen, line + o, cap - o - 1)] = 0;
		rc = emit(rt, parent, line);
		free(line);
	}
	if (rc || parent)
		return rc ? rc : sbpf_vm_set_return_data(parent, rdata, rlen);
	rt->return_data = malloc(rlen + 1);
	if (!rt->return_data)
		return -ENOMEM;
	if (rlen)
		memcpy(rt->return_data, rdata, rlen);
	rt->return_len = rlen;
	return 0;
}

static void set_error(struct sol_invoke_result *res, const char *name, const char *detail)
{
	snprintf(res->error, sizeof(res->error), "%s", name);
	snprintf(res->detail, sizeof(res->detail), "%s", detail ? detail : name);
	if (!sol_instruction_error_text(name, res->log_text, sizeof(res->log_text)))
		snprintf(res->log_text, sizeof(res->log_text), "%s", res->detail);
}

/* The VM's verdict: its error, or the program's return value. */
static void vm_verdict(const struct sbpf_vm *vm, const struct sbpf_result *r,
		       struct sol_invoke_result *res)
{
	char desc[SBPF_DESCRIBE_MAX];
	if (r->error == SBPF_E_SYSCALL_ERROR) {
		snprintf(desc, sizeof(desc), "%s", r->detail[0] ? r->detail : r->syscall_error);
		set_error(res, r->syscall_error, desc);
	} else if (r->error != SBPF_OK) {
		sbpf_result_describe(r, desc, sizeof(desc));
		char text[sizeof(desc)];
		memcpy(text, desc, sizeof(text));
		const struct sbpf_symbol *s = sbpf_program_symbol_at(sbpf_vm_program(vm), r->pc);
		size_t l = strlen(desc);
		snprintf(desc + l, sizeof(desc) - l, " at pc %llu%s%s", (unsigned long long)r->pc,
			 s ? " in " : "", s ? s->name : "");
		set_error(res, sbpf_error_name(r->error), desc);
		/* the runtime shows the VM's error as the VM words it, without a location */
		memcpy(res->log_text, text, sizeof(text));
	} else if (r->r0) {
		char name[64];
		sol_program_error_name(r->r0, name, sizeof(name));
		snprintf(desc, sizeof(desc), "the program returned %#llx", (unsigned long long)r->r0);
		set_error(res, name, desc);
	}
}

/* Tells the observer the program starts at rt->depth and attaches the hooks it wants. */
static int observe_start(struct sol_runtime *rt, const struct sol_program *p, struct sbpf_vm *vm)
{
	const struct sol_observer *o = rt->observer;
	const struct sbpf_hooks *hooks = NULL;
	int rc = o && o->program_start ? o->program_start(o->ctx, p, rt->depth, &hooks) : 0;
	if (!rc && hooks)
		sbpf_vm_set_hooks(vm, hooks);
	return rc;
}

static int run_vm(struct sol_runtime *rt, struct sbpf_vm *parent,
		  const struct sol_program *p, struct sol_invocation *inv, uint64_t budget,
		  const char *id58, struct sol_invoke_result *res)
{
	struct sbpf_vm *vm;
	struct sbpf_vm_config cfg = { .compute_budget = budget };
	int rc = sbpf_vm_create(p->prog, &cfg, &vm);
	if (rc)
		return rc;
	sbpf_vm_set_input(vm, inv->input.buf, inv->input.len, true);
	sbpf_vm_set_user(vm, inv);
	/* the program starts with no return data, which is then its own */
	memcpy(rt->return_program, inv->program_id, 32);
	struct sbpf_result r;
	rt->stack[rt->depth++] = inv;
	rc = observe_start(rt, p, vm);
	if (!rc)
		rc = sbpf_vm_run(vm, &r);
	const struct sol_observer *o = rt->observer;
	if (o && o->program_end) {
		int rc2 = o->program_end(o->ctx, rt->depth);
		rc = rc ? rc : rc2;
	}
	rt->depth--;
	if (!rc) {
		res->cu = r.cu_used;
		/* a VM failure takes the rest of the budget, after the "consumed" line has
		 * shown what the program used; not a syscall's, nor one inside a syscall (its
		 * access violations are the syscall's errors in agave) */
		const struct sbpf_program *prog = sbpf_vm_program(vm);
		bool in_syscall = r.pc < prog->ninsns && prog->code[r.pc].kind == SBPF_K_CALL &&
				  prog->code[r.pc].pad == SBPF_CALL_SYSCALL;
		if (r.error != SBPF_OK && r.error != SBPF_E_SYSCALL_ERROR && !in_syscall) {
			res->depleted = budget - r.cu_used;
			res->cu = budget;
		}
		vm_verdict(vm, &r, res);
		rc = pass_on(rt, parent, vm, id58, r.cu_used, budget);
	}
	sbpf_vm_free(vm);
	return rc;
}

struct builtin_log {
	struct sol_runtime *rt;
	struct sbpf_vm *parent;
};

static int builtin_line(void *ctx, const char *line)
{
	struct builtin_log *b = ctx;
	return emit(b->rt, b->parent, line);
}

/* A builtin (the System program) runs on the transaction's accounts after it took its cost
 * from the meter (which the observer hears of); the runtime logs no "consumed" line for it.
 * Its start clears the return data as a program's does. */
static int run_builtin(struct sol_runtime *rt, struct sbpf_vm *parent,
		       const uint8_t program_id[32], const struct sol_ix_account *ix, size_t n,
		       const uint8_t *data, size_t data_len, uint64_t budget,
		       struct sol_invoke_result *res)
{
	memcpy(rt->return_program, program_id, 32);
	if (parent && sbpf_vm_set_return_data(parent, NULL, 0))
		return -ENOMEM;
	bool exceeded = budget < SOL_SYSTEM_UNITS;
	res->cu = exceeded ? budget : SOL_SYSTEM_UNITS;
	const struct sol_observer *o = rt->observer;
	int rc = o && o->builtin_run ? o->builtin_run(o->ctx, SOL_SYSTEM_PROGRAM_NAME, rt->depth + 1,
						     res->cu)
				     : 0;
	if (rc || exceeded) {
		if (exceeded)
			set_error(res, "ComputationalBudgetExceeded", NULL);
		return rc;
	}
	struct builtin_log b = { rt, parent };
	struct sol_system_log log = { builtin_line, &b };
	const struct sol_system_env env = { sol_default_blockhash,
					    SOL_DEFAULT_LAMPORTS_PER_SIGNATURE, rt->rent };
	const char *e;
	rc = sol_system_program_run(rt->accounts, ix, n, data, data_len, &env, &log, &e);
	if (!rc && e)
		set_error(res, e, NULL);
	return rc;
}

/* A program of the fixture: serialize, run it in a VM, deserialize with the checks. */
static int run_loaded(struct sol_runtime *rt, struct sbpf_vm *parent, const struct sol_program *p,
		      const uint8_t program_id[32], const struct sol_ix_account *ix, size_t n,
		      const uint8_t *data, size_t data_len, uint64_t budget, const char *id58,
		      struct sol_invoke_result *res)
{
	struct sol_invocation inv = { rt, program_id, ix, n, { 0 } };
	const char *ierr;
	int rc = sol_serialize(rt->accounts, ix, n, data, data_len, program_id, p->aligned,
			       &inv.input, &ierr);
	if (!rc && ierr)
		set_error(res, ierr, NULL);
	else if (!rc)
		rc = run_vm(rt, parent, p, &inv, budget, id58, res);
	if (!rc && !ierr && !res->error[0]) {
		rc = sol_deserialize(&inv.input, rt->accounts, ix, program_id, &ierr);
		if (!rc && ierr)
			set_error(res, ierr, NULL);
	}
	sol_input_free(&inv.input);
	return rc;
}

/* Records the instruction in the transaction's trace as it starts. */
static int trace_push(struct sol_runtime *rt, const uint8_t program_id[32],
		      const struct sol_ix_account *ix, size_t n, const uint8_t *data, size_t data_len)
{
	struct sol_trace_entry *e = vec_push_raw((void **)&rt->trace, &rt->ntrace, &rt->trace_cap,
						 sizeof(*rt->trace));
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->height = rt->depth + 1;
	memcpy(e->program_id, program_id, 32);
	e->data = malloc(data_len + 1);
	e->accounts = malloc((n + 1) * sizeof(*ix));
	if (!e->data || !e->accounts)
		return -ENOMEM;
	if (data_len)
		memcpy(e->data, data, data_len);
	if (n)
		memcpy(e->accounts, ix, n * sizeof(*ix));
	e->data_len = data_len;
	e->naccounts = n;
	return 0;
}

void sol_runtime_trace_free(struct sol_runtime *rt)
{
	for (size_t i = 0; i < rt->ntrace; i++) {
		free(rt->trace[i].data);
		free(rt->trace[i].accounts);
	}
	free(rt->trace);
	rt->trace = NULL;
	rt->ntrace = rt->trace_cap = 0;
}

int sol_runtime_invoke(struct sol_runtime *rt, struct sbpf_vm *parent,
		       const uint8_t program_id[32], const struct sol_ix_account *ix, size_t n,
		       const uint8_t *data, size_t data_len, uint64_t budget,
		       struct sol_invoke_result *res)
{
	memset(res, 0, sizeof(*res));
	const struct sol_program *p = find_program(rt, program_id);
	if (!p && !sol_is_system_program(program_id)) {
		set_error(res, "UnsupportedProgramId", "no such program in the fixture");
		return 0;
	}
	/* The runtime pushes every instruction on the transaction's trace before it logs its
	 * start; one more than the trace holds fails the push, so nothing of it runs or logs. */
	if (rt->ntrace >= SOL_MAX_INSTRUCTION_TRACE) {
		set_error(res, "MaxInstructionTraceLengthExceeded", "the transaction's instruction "
			  "trace holds 64 instructions already");
		return 0;
	}
	uint64_t before[2], after[2];
	char id58[64];
	sol_base58_encode(program_id, 32, id58, sizeof(id58));
	int rc = emitf(rt, parent, "Program %s invoke [%u]", id58, rt->depth + 1);
	/* The runtime refuses more accounts than an instruction may have before it runs
	 * anything, so no lamports move; checked first since lamport_sum is quadratic in
	 * them. */
	bool too_many = n > SOL_MAX_INSTRUCTION_ACCOUNTS;
	if (too_many)
		set_error(res, "MaxAccountsExceeded", NULL);
	else
		lamport_sum(rt, ix, n, before);
	if (!rc && !too_many)
		rc = trace_push(rt, program_id, ix, n, data, data_len);
	if (!rc && !too_many)
		rc = p ? run_loaded(rt, parent, p, program_id, ix, n, data, data_len, budget, id58, res)
		       : run_builtin(rt, parent, program_id, ix, n, data, data_len, budget, res);
	/* The runtime writes the verdict before it checks the lamports (when it pops the
	 * instruction), so an unbalanced instruction still logs "success". */
	if (!rc && res->error[0])
		rc = emitf(rt, parent, "Program %s failed: %s", id58, res->log_text);
	else if (!rc)
		rc = emitf(rt, parent, "Program %s success", id58);
	if (!too_many)
		lamport_sum(rt, ix, n, after);
	if (!rc && !res->error[0] && (before[0] != after[0] || before[1] != after[1]))
		set_error(res, "UnbalancedInstruction", "the accounts' lamports changed in sum");
	return rc == -ENOMEM ? err_set(rc, "out of memory") : rc;
}
