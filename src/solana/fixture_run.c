/*
 * Running a fixture: load its programs under the runtime's syscall table (the standard
 * syscalls, CPI, and the clock and rent sysvars with the fixture's values), run the
 * instruction, and compare the outcome with `expect`. A failed transaction changes no
 * account, so the accounts are restored when the instruction fails.
 */
#include "solana/fixture.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "solana/encoding.h"
#include "solana/runtime.h"
#include "solana/runtime_log.h"
#include "solana/syscalls.h"

static int sys_clock(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	struct sol_invocation *inv = sbpf_vm_user(vm);
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], inv->rt->clock, 40, 8);
}

static int sys_rent(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	struct sol_invocation *inv = sbpf_vm_user(vm);
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], inv->rt->rent, 24, 8);
}

static int runtime_syscalls(struct sbpf_syscalls *s)
{
	int rc = sol_syscalls_standard(s, 0);
	if (!rc)
		rc = sol_syscalls_cpi(s);
	for (size_t i = 0; !rc && i < s->n; i++) {
		if (!strcmp(s->v[i].name, "sol_get_clock_sysvar"))
			s->v[i].fn = sys_clock;
		else if (!strcmp(s->v[i].name, "sol_get_rent_sysvar"))
			s->v[i].fn = sys_rent;
	}
	return rc;
}

/* Whether the program reads the aligned input: all do but those the fixture's accounts
 * show owned by the deprecated BPF loader. */
static bool aligned(const struct sol_fixture *f, const uint8_t id[32])
{
	uint8_t deprecated[32];
	sol_base58_decode("BPFLoader1111111111111111111111111111111111", deprecated, 32);
	for (size_t i = 0; i < f->naccounts; i++)
		if (!memcmp(f->accounts[i].key, id, 32))
			return memcmp(f->accounts[i].owner, deprecated, 32) != 0;
	return true;
}

static int snapshot(const struct sol_fixture *f, struct sol_account **out)
{
	struct sol_account *c = calloc(f->naccounts + 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < f->naccounts; i++) {
		c[i] = f->accounts[i];
		c[i].data = malloc(c[i].len + 1);
		if (!c[i].data) {
			while (i--)
				free(c[i].data);
			free(c);
			return -ENOMEM;
		}
		if (c[i].len)
			memcpy(c[i].data, f->accounts[i].data, c[i].len);
	}
	*out = c;
	return 0;
}

/* The instruction's accounts as agave's account loader hands them over: an account with no
 * lamports does not exist, so it is the default account (no data, the system program's,
 * rent epoch u64::MAX); a writable rent-exempt account's rent epoch becomes u64::MAX
 * (update_rent_exempt_status_for_account). Programs see these in their input. */
static void load_as_runtime(struct sol_fixture *f)
{
	for (size_t i = 0; i < f->nix; i++) {
		struct sol_account *a = &f->accounts[f->ix[i].index];
		if (!a->lamports) {
			memset(a->owner, 0, 32);
			a->len = 0;
			a->executable = false;
			a->rent_epoch = UINT64_MAX;
		} else if (f->ix[i].is_writable && a->lamports >= sol_rent_minimum(f->rent, a->len)) {
			a->rent_epoch = UINT64_MAX;
		}
	}
}

static void drop_accounts(struct sol_account *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		free(a[i].data);
	free(a);
}

/* The transaction's verdict is an InstructionError (or the rent check's TransactionError):
 * a failure that is none (the VM's, or a syscall's own such as InvalidString) is
 * ProgramFailedToComplete, as agave's process_executable_chain turns it; the detail keeps
 * what it was. */
static void fill_outcome(struct sol_runtime *rt, const struct sol_invoke_result *res,
			 struct sol_outcome *out)
{
	char text[400];
	bool instruction_error = sol_instruction_error_text(res->error, text, sizeof(text)) ||
				 !strcmp(res->error, "InsufficientFundsForRent");
	snprintf(out->result, sizeof(out->result), "%s",
		 !res->error[0] ? "success" : instruction_error ? res->error
								: "ProgramFailedToComplete");
	if (!res->error[0])
		out->detail[0] = 0;
	else if (instruction_error)
		snprintf(out->detail, sizeof(out->detail), "%s", res->detail);
	else
		snprintf(out->detail, sizeof(out->detail), "%s: %s", res->error, res->detail);
	out->cu = res->cu;
	out->program_cu = res->cu - res->depleted;
	out->logs = rt->logs;
	out->nlogs = rt->nlogs;
	out->return_data = rt->return_data;
	out->return_len = rt->return_len;
}

/* 1nc1nerator11111111111111111111111111111111: the rent check leaves it alone. */
static const uint8_t incinerator[32] = {
	0x00, 0x33, 0x90, 0x72, 0x8d, 0x34, 0x11, 0x60, 0x79, 0xbd, 0xc9, 0x11, 0xbf, 0xff, 0x00, 0xdb,
	0xd4, 0x4d, 0x2e, 0xcd, 0xcc, 0xf7, 0x9c, 0xa6, 0xe1, 0x00, 0x38, 0xe1, 0x00, 0x00, 0x00, 0x00,
};

/* The transaction's rent check after its instructions succeeded, as SIMD-0392 (relaxed
 * post-execution minimum balance, active in LiteSVM 1.5) has it: a writable account left
 * with lamports needs the minimum balance of its data length, or, when it had lamports
 * before, kept its owner and did not grow, no fewer lamports than it had (a rent-paying
 * account may receive lamports, not lose them). pre holds the accounts before the run.
 * Returns the position in f->ix of the first account that fails, or -1. */
static long rent_violation(const struct sol_fixture *f, const struct sol_account *pre)
{
	for (size_t i = 0; i < f->nix; i++) {
		const struct sol_account *a = &f->accounts[f->ix[i].index];
		const struct sol_account *b = &pre[f->ix[i].index];
		if (!f->ix[i].is_writable || !a->lamports || !memcmp(a->key, incinerator, 32))
			continue;
		uint64_t floor = sol_rent_minimum(f->rent, a->len);
		if (b->lamports && a->len <= b->len && !memcmp(a->owner, b->owner, 32) &&
		    b->lamports < floor)
			floor = b->lamports;
		if (a->lamports < floor)
			return (long)i;
	}
	return -1;
}

static int execute(struct sol_fixture *f, struct sol_runtime *rt, struct sol_outcome *out)
{
	struct sol_account *saved;
	int rc = snapshot(f, &saved);
	if (rc)
		return err_set(rc, "%s: out of memory", f->path);
	load_as_runtime(f);
	struct sol_invoke_result res;
	rc = sol_runtime_invoke(rt, NULL, f->program_id, f->ix, f->nix, f->data, f->data_len,
				f->budget, &res);
	long poor = rc || res.error[0] ? -1 : rent_violation(f, saved);
	if (poor >= 0) {
		char key[64];
		sol_base58_encode(f->accounts[f->ix[poor].index].key, 32, key, sizeof(key));
		snprintf(res.error, sizeof(res.error), "InsufficientFundsForRent");
		snprintf(res.detail, sizeof(res.detail),
			 "the transaction would leave %s rent-paying (instruction account %ld)", key,
			 poor);
	}
	if (!rc)
		fill_outcome(rt, &res, out);
	else
		err_prefix(rc, "%s", f->path);
	if (!rc && res.error[0]) {
		drop_accounts(f->accounts, f->naccounts);
		f->accounts = saved;
	} else {
		drop_accounts(saved, f->naccounts);
	}
	return rc;
}

/* The observer hears of the instruction's end while the programs it watched still exist. */
static int observe_end(struct sol_fixture *f, const struct sol_runtime *rt, uint64_t cu)
{
	const struct sol_observer *o = rt->observer;
	if (!o || !o->instruction_end)
		return 0;
	const struct sol_program *top = NULL;
	for (size_t i = 0; i < rt->nprograms; i++)
		if (!memcmp(rt->programs[i].id, f->program_id, 32))
			top = &rt->programs[i];
	if (!top)
		return err_set(-EINVAL, "%s: the instruction's program is the System program, a "
				       "builtin: it runs no sBPF to profile", f->path);
	int rc = o->instruction_end(o->ctx, top, cu);
	return rc ? err_prefix(rc, "%s", f->path) : 0;
}

int sol_fixture_run(struct sol_fixture *f, struct sol_outcome *out,
		    const struct sol_observer *observer)
{
	memset(out, 0, sizeof(*out));
	struct sbpf_syscalls sys = { 0 };
	struct sol_runtime rt = { .accounts = f->accounts, .naccounts = f->naccounts,
				   .clock = f->clock, .rent = f->rent, .observer = observer };
	rt.programs = calloc(f->nprograms + 1, sizeof(*rt.programs));
	int rc = rt.programs ? runtime_syscalls(&sys) : -ENOMEM;
	if (rc)
		err_set(rc, "%s: out of memory", f->path);
	struct sbpf_load_options opt = { .version = SBPF_VRESERVED };
	for (size_t i = 0; !rc && i < f->nprograms; i++) {
		struct sol_program *p = &rt.programs[i];
		p->id = f->programs[i].id;
		p->name = f->programs[i].name;
		p->path = f->programs[i].elf;
		p->aligned = aligned(f, p->id);
		rt.nprograms = i + 1;
		if ((rc = sbpf_program_load_file(f->programs[i].elf, &sys, &opt, &p->prog)))
			err_prefix(rc, "%s: programs[%zu]", f->path, i);
	}
	if (!rc)
		rc = execute(f, &rt, out);
	if (!rc)
		rc = observe_end(f, &rt, out->program_cu);
	if (rc) {
		for (size_t i = 0; i < rt.nlogs; i++)
			free(rt.logs[i]);
		free(rt.logs);
		free(rt.return_data);
	}
	sol_runtime_trace_free(&rt);
	for (size_t i = 0; i < rt.nprograms; i++)
		sbpf_program_free(rt.programs[i].prog);
	free(rt.programs);
	sbpf_syscalls_free(&sys);
	return rc;
}

void sol_outcome_free(struct sol_outcome *o)
{
	for (size_t i = 0; i < o->nlogs; i++)
		free(o->logs[i]);
	free(o->logs);
	free(o->return_data);
	memset(o, 0, sizeof(*o));
}

static void hex(FILE *f, const uint8_t *p, size_t n)
{
	if (!n)
		fputs("(empty)", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/* expect.logs written with the runtime's framing lines is compared with the framed log;
 * without any, with the lines the programs logged (the framing taken out). */
static size_t check_logs(const struct sol_fixture *fx, const struct sol_outcome *o, FILE *f)
{
	const struct sol_expect *e = &fx->expect;
	bool framed = false;
	for (size_t i = 0; i < e->nlogs; i++)
		framed |= sol_log_is_framing(e->logs[i]);
	const char **got_v = calloc(o->nlogs + 1, sizeof(*got_v));
	size_t ngot = 0;
	for (size_t i = 0; got_v && i < o->nlogs; i++)
		if (framed || !sol_log_is_framing(o->logs[i]))
			got_v[ngot++] = o->logs[i];
	if (!got_v) {
		fprintf(f, "%s: expect.logs: out of memory\n", fx->path);
		return 1;
	}
	size_t bad = 0;
	for (size_t i = 0; i < e->nlogs || i < ngot; i++) {
		const char *want = i < e->nlogs ? e->logs[i] : NULL;
		const char *got = i < ngot ? got_v[i] : NULL;
		if (want && got && !strcmp(want, got))
			continue;
		fprintf(f, "%s: expect.logs[%zu]: expected %s%s%s, got %s%s%s\n", fx->path, i,
			want ? "\"" : "", want ? want : "no line", want ? "\"" : "", got ? "\"" : "",
			got ? got : "no line", got ? "\"" : "");
		bad++;
	}
	free(got_v);
	return bad;
}

const struct sol_account *sol_fixture_post_state(const struct sol_account *a)
{
	static const struct sol_account gone;
	return a->lamports ? a : &gone;
}

static size_t check_account(const struct sol_fixture *fx, size_t k, FILE *f)
{
	const struct sol_expect_account *x = &fx->expect.accounts[k];
	const struct sol_account *a = NULL;
	for (size_t i = 0; i < fx->naccounts && !a; i++)
		if (!memcmp(fx->accounts[i].key, x->key, 32))
			a = sol_fixture_post_state(&fx->accounts[i]);
	if (!a) {
		fprintf(f, "%s: expect.accounts[%zu]: no account %s\n", fx->path, k, x->key58);
		return 1;
	}
	size_t bad = 0;
	if (x->has_lamports && x->lamports != a->lamports) {
		fprintf(f, "%s: expect.accounts[%zu] (%s): lamports: expected %" PRIu64
			   ", got %" PRIu64 "\n", fx->path, k, x->key58, x->lamports, a->lamports);
		bad++;
	}
	if (x->has_data && (x->len != a->len || (a->len && memcmp(x->data, a->data, a->len)))) {
		fprintf(f, "%s: expect.accounts[%zu] (%s): data: expected ", fx->path, k, x->key58);
		hex(f, x->data, x->len);
		fputs(", got ", f);
		hex(f, a->data, a->len);
		fputc('\n', f);
		bad++;
	}
	if (x->has_owner && memcmp(x->owner, a->owner, 32)) {
		fprintf(f, "%s: expect.accounts[%zu] (%s): owner differs\n", fx->path, k, x->key58);
		bad++;
	}
	if (x->has_executable && x->executable != a->executable) {
		fprintf(f, "%s: expect.accounts[%zu] (%s): executable: expected %s\n", fx->path, k,
			x->key58, x->executable ? "true" : "false");
		bad++;
	}
	if (x->has_rent_epoch && x->rent_epoch != a->rent_epoch) {
		fprintf(f, "%s: expect.accounts[%zu] (%s): rent_epoch: expected %" PRIu64
			   ", got %" PRIu64 "\n", fx->path, k, x->key58, x->rent_epoch, a->rent_epoch);
		bad++;
	}
	return bad;
}

size_t sol_fixture_check(const struct sol_fixture *fx, const struct sol_outcome *o,
			 FILE *f)
{
	const struct sol_expect *e = &fx->expect;
	size_t bad = 0;
	const char *want = e->result ? e->result : "success";
	if (strcmp(want, o->result)) {
		fprintf(f, "%s: expect.result: expected %s, got %s%s%s\n", fx->path, want,
			o->result, o->detail[0] ? ": " : "", o->detail);
		bad++;
	}
	if (e->has_cu && e->cu != o->cu) {
		fprintf(f, "%s: expect.compute_units: expected %" PRIu64 ", got %" PRIu64 "\n",
			fx->path, e->cu, o->cu);
		bad++;
	}
	if (e->has_return_data &&
	    (e->return_len != o->return_len ||
	     (o->return_len && memcmp(e->return_data, o->return_data, o->return_len)))) {
		fprintf(f, "%s: expect.return_data: expected ", fx->path);
		hex(f, e->return_data, e->return_len);
		fputs(", got ", f);
		hex(f, o->return_data, o->return_len);
		fputc('\n', f);
		bad++;
	}
	if (e->has_logs)
		bad += check_logs(fx, o, f);
	for (size_t k = 0; k < e->naccounts; k++)
		bad += check_account(fx, k, f);
	return bad;
}
