/*
 * Cross-program invocation: sol_invoke_signed_c and sol_invoke_signed_rust as agave runs
 * them without direct mapping. The caller pays invoke_units (1000) and one CU per
 * cpi_bytes_per_unit (250) bytes of instruction data and of every account's data; the
 * callee runs on what is left. Before the call the accounts the caller changed through
 * its account infos are written into the transaction (with the runtime's checks, as the
 * caller); the callee may only get writable or signer privileges the caller has, or that
 * a PDA signer (seeds hashed with the caller's id) grants; after it, the callee's changes
 * to writable accounts are written back into the caller's memory: lamports, owner, data
 * and its length, within the caller's 10 KiB realloc room.
 */
#include "solana/runtime.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <tally/trace.h>

#include "solana/crypto/curve25519.h"
#include "solana/encoding.h"
#include "solana/runtime_log.h"
#include "solana/system_program.h"

enum {
	CPI_BYTES_PER_UNIT = 250,
	MAX_DATA_LEN = 10 * 1024,
	/* SIMD-0339 (increase_cpi_account_info_limit, active on mainnet): 255 account infos,
	 * each billed as 80 bytes, and each account meta as 34 */
	MAX_ACCOUNT_INFOS = 255,
	ACCOUNT_INFO_BYTES = 80,
	ACCOUNT_META_BYTES = 34,
	MAX_SIGNERS = 16,
	MAX_SEEDS = 16,
	MAX_SEED_LEN = 32,
};

/* The instruction as the caller wrote it, in either language's layout. */
struct cpi_meta {
	uint8_t key[32];
	bool is_signer, is_writable;
};
struct cpi_ix {
	uint8_t program_id[32];
	struct cpi_meta metas[SOL_MAX_INSTRUCTION_ACCOUNTS];
	size_t n;
	const uint8_t *data;
	uint64_t data_len;
};

/* Where an account info points: lamports, owner, data (and its length field). */
struct caller_account {
	uint32_t index; /* into the transaction's accounts */
	uint64_t lamports_addr, owner_addr, data_addr, data_len, len_addr;
	uint64_t original_len; /* at the caller's serialization */
	uint64_t max_len;      /* what the caller's input has room for */
	bool write_back;
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static int map(struct sbpf_vm *vm, uint64_t addr, uint64_t len, bool store, uint8_t **p)
{
	return sbpf_vm_map(vm, addr, len, store, p) ? -EFAULT : 0;
}

static int check_sizes(struct sbpf_vm *vm, uint64_t naccounts, uint64_t data_len)
{
	if (data_len > MAX_DATA_LEN)
		return sbpf_vm_syscall_error(vm, "MaxInstructionDataLenExceeded", "%llu bytes",
					     (unsigned long long)data_len);
	if (naccounts > SOL_MAX_INSTRUCTION_ACCOUNTS)
		return sbpf_vm_syscall_error(vm, "MaxInstructionAccountsExceeded", "%llu accounts",
					     (unsigned long long)naccounts);
	uint64_t cost = data_len / CPI_BYTES_PER_UNIT +
			naccounts * ACCOUNT_META_BYTES / CPI_BYTES_PER_UNIT;
	return sbpf_vm_consume(vm, cost) ? -1 : 0;
}

/* Sizes are checked before anything is mapped, so no length product can wrap.
 * StableInstruction { accounts: (ptr, cap, len), data: (ptr, cap, len), program_id };
 * AccountMeta { pubkey, is_signer, is_writable } (34 bytes). */
static int read_ix_rust(struct sbpf_vm *vm, uint64_t addr, struct cpi_ix *ix)
{
	uint8_t *p, *metas;
	if (map(vm, addr, 80, false, &p))
		return -EFAULT;
	uint64_t n = rd64(p + 16);
	ix->data_len = rd64(p + 40);
	memcpy(ix->program_id, p + 48, 32);
	if (check_sizes(vm, n, ix->data_len) || map(vm, rd64(p), n * 34, false, &metas) ||
	    map(vm, rd64(p + 24), ix->data_len, false, (uint8_t **)&ix->data))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *m = metas + i * 34;
		if (m[32] > 1 || m[33] > 1)
			return sbpf_vm_syscall_error(vm, "InvalidArgument", "account meta flag > 1");
		memcpy(ix->metas[i].key, m, 32);
		ix->metas[i].is_signer = m[32];
		ix->metas[i].is_writable = m[33];
	}
	ix->n = n;
	return 0;
}

/* SolInstruction { program_id*, accounts*, account_len, data*, data_len };
 * SolAccountMeta { pubkey*, is_writable, is_signer } (16 bytes). */
static int read_ix_c(struct sbpf_vm *vm, uint64_t addr, struct cpi_ix *ix)
{
	uint8_t *p, *metas, *id;
	if (map(vm, addr, 40, false, &p))
		return -EFAULT;
	uint64_t n = rd64(p + 16);
	ix->data_len = rd64(p + 32);
	if (check_sizes(vm, n, ix->data_len) || map(vm, rd64(p), 32, false, &id) ||
	    map(vm, rd64(p + 8), n * 16, false, &metas) ||
	    map(vm, rd64(p + 24), ix->data_len, false, (uint8_t **)&ix->data))
		return -1;
	memcpy(ix->program_id, id, 32);
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *m = metas + i * 16;
		uint8_t *key;
		if (map(vm, rd64(m), 32, false, &key))
			return -EFAULT;
		memcpy(ix->metas[i].key, key, 32);
		ix->metas[i].is_writable = m[8];
		ix->metas[i].is_signer = m[9];
	}
	ix->n = n;
	return 0;
}

/* Signer seeds, the same shape in both languages: [(ptr, len)] of [(ptr, len)] slices.
 * Each signer becomes create_program_address(seeds, caller program id). */
static int read_signers(struct sbpf_vm *vm, uint64_t addr, uint64_t n, const uint8_t *caller,
			uint8_t out[][32], size_t *nout)
{
	if (n > MAX_SIGNERS)
		return sbpf_vm_syscall_error(vm, "TooManySigners", "%llu signers",
					     (unsigned long long)n);
	uint8_t *signers;
	if (map(vm, addr, n * 16, false, &signers))
		return -EFAULT;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t nseeds = rd64(signers + i * 16 + 8);
		uint8_t *seeds;
		if (nseeds > MAX_SEEDS)
			return sbpf_vm_syscall_error(vm, "MaxSeedLengthExceeded", "%llu seeds",
						     (unsigned long long)nseeds);
		if (map(vm, rd64(signers + i * 16), nseeds * 16, false, &seeds))
			return -EFAULT;
		crypto_hash_sha256_state st;
		crypto_hash_sha256_init(&st);
		for (uint64_t j = 0; j < nseeds; j++) {
			uint64_t len = rd64(seeds + j * 16 + 8);
			uint8_t *seed;
			if (len > MAX_SEED_LEN)
				return sbpf_vm_syscall_error(vm, "BadSeeds", "MaxSeedLengthExceeded");
			if (map(vm, rd64(seeds + j * 16), len, false, &seed))
				return -EFAULT;
			crypto_hash_sha256_update(&st, seed, len);
		}
		crypto_hash_sha256_update(&st, caller, 32);
		crypto_hash_sha256_update(&st, (const uint8_t *)"ProgramDerivedAddress", 21);
		crypto_hash_sha256_final(&st, out[i]);
		if (sol_on_curve(out[i]))
			return sbpf_vm_syscall_error(vm, "BadSeeds", "InvalidSeeds");
	}
	*nout = n;
	return 0;
}

static long caller_position(const struct sol_invocation *c, const uint8_t key[32])
{
	for (size_t i = 0; i < c->n; i++)
		if (!memcmp(c->rt->accounts[c->ix[i].index].key, key, 32))
			return (long)i;
	return -1;
}

/* The runtime logs why it refuses the call (its ic_msg: a bare line), then fails with
 * error; the line is the failure's detail too. */
static int refuse(struct sbpf_vm *vm, const char *error, const char *line)
{
	if (sbpf_vm_log(vm, line, strlen(line)))
		return -ENOMEM;
	return sbpf_vm_syscall_error(vm, error, "%s", line);
}

/* "Unknown program KEY", "Instruction references an unknown account KEY". */
static int missing(struct sbpf_vm *vm, const char *what, const uint8_t key[32])
{
	char line[128], key58[64];
	sol_base58_encode(key, 32, key58, sizeof(key58));
	snprintf(line, sizeof(line), "%s %s", what, key58);
	return refuse(vm, "MissingAccount", line);
}

/* "KEY's signer privilege escalated" */
static int escalated(struct sbpf_vm *vm, const uint8_t key[32], const char *what)
{
	char line[128], key58[64];
	sol_base58_encode(key, 32, key58, sizeof(key58));
	snprintf(line, sizeof(line), "%s's %s privilege escalated", key58, what);
	return refuse(vm, "PrivilegeEscalation", line);
}

/* The callee's instruction accounts: duplicates merged, privileges checked against the
 * caller's and the PDA signers. */
static int prepare(struct sbpf_vm *vm, const struct sol_invocation *caller,
		   const struct cpi_ix *ix, uint8_t pdas[][32], size_t npdas,
		   struct sol_ix_account *out)
{
	for (size_t i = 0; i < ix->n; i++) {
		long at = caller_position(caller, ix->metas[i].key);
		if (at < 0)
			return missing(vm, "Instruction references an unknown account",
				       ix->metas[i].key);
		out[i] = (struct sol_ix_account){ caller->ix[at].index, ix->metas[i].is_signer,
						   ix->metas[i].is_writable };
	}
	for (size_t i = 0; i < ix->n; i++) {
		for (size_t j = 0; j < ix->n; j++) {
			if (out[j].index == out[i].index) {
				out[i].is_signer |= ix->metas[j].is_signer;
				out[i].is_writable |= ix->metas[j].is_writable;
			}
		}
		long at = caller_position(caller, ix->metas[i].key);
		bool pda = false;
		for (size_t k = 0; k < npdas; k++)
			pda |= !memcmp(pdas[k], ix->metas[i].key, 32);
		const char *what = out[i].is_writable && !caller->ix[at].is_writable ? "writable"
				   : out[i].is_signer && !caller->ix[at].is_signer && !pda ? "signer"
											   : NULL;
		if (what)
			return escalated(vm, ix->metas[i].key, what);
	}
	/* the callee program must be one of the caller's instruction accounts */
	if (caller_position(caller, ix->program_id) < 0)
		return missing(vm, "Unknown program", ix->program_id);
	return 0;
}

/* Reads one account info: C SolAccountInfo (56 bytes) or Rust AccountInfo (48 bytes, its
 * lamports and data behind Rc<RefCell<..>>: the value sits 24 bytes into the Rc box). */
static int read_info(struct sbpf_vm *vm, const uint8_t *info, uint64_t info_addr, bool rust,
		     struct caller_account *ca)
{
	if (!rust) {
		ca->lamports_addr = rd64(info + 8);
		ca->data_len = rd64(info + 16);
		ca->data_addr = rd64(info + 24);
		ca->owner_addr = rd64(info + 32);
		ca->len_addr = info_addr + 16;
		return 0;
	}
	uint8_t *lam, *data;
	if (map(vm, rd64(info + 8) + 24, 8, false, &lam) ||
	    map(vm, rd64(info + 16) + 24, 16, false, &data))
		return -EFAULT;
	ca->lamports_addr = rd64(lam);
	ca->data_addr = rd64(data);
	ca->data_len = rd64(data + 8);
	ca->owner_addr = rd64(info + 24);
	ca->len_addr = rd64(info + 16) + 32;
	return 0;
}

/* The caller's view of one account, written into the transaction before the call. */
static int update_callee(struct sbpf_vm *vm, const struct sol_invocation *caller, long pos,
			 struct caller_account *ca)
{
	uint8_t *lam, *owner, *data;
	if (sbpf_vm_consume(vm, ca->data_len / CPI_BYTES_PER_UNIT))
		return -1;
	if (map(vm, ca->lamports_addr, 8, true, &lam) || map(vm, ca->owner_addr, 32, true, &owner) ||
	    map(vm, ca->data_addr, ca->data_len, true, &data))
		return -EFAULT;
	struct sol_borrow b = { &caller->rt->accounts[ca->index], caller->ix[pos].is_writable,
				 caller->program_id };
	const char *e = NULL;
	bool oom = false;
	if (rd64(lam) != b.a->lamports)
		e = sol_account_set_lamports(&b, rd64(lam));
	if (!e)
		e = sol_account_set_data(&b, data, ca->data_len, &oom);
	if (oom)
		return -ENOMEM;
	if (!e && memcmp(owner, b.a->owner, 32))
		e = sol_account_set_owner(&b, owner);
	return e ? sbpf_vm_syscall_error(vm, e, "account %zu before the call", (size_t)pos) : 0;
}

static int translate_accounts(struct sbpf_vm *vm, const struct sol_invocation *caller,
			      const struct sol_ix_account *callee_ix, size_t n, uint64_t infos,
			      uint64_t ninfos, bool rust, struct caller_account *out)
{
	size_t size = rust ? 48 : 56;
	uint8_t *p;
	if (ninfos > MAX_ACCOUNT_INFOS)
		return sbpf_vm_syscall_error(vm, "MaxCpiAccountInfos", "%llu account infos",
					     (unsigned long long)ninfos);
	if (sbpf_vm_consume(vm, ninfos * ACCOUNT_INFO_BYTES / CPI_BYTES_PER_UNIT))
		return -1;
	if (map(vm, infos, ninfos * size, false, &p))
		return -EFAULT;
	for (size_t i = 0; i < n; i++) {
		struct caller_account *ca = &out[i];
		struct sol_account *a = &caller->rt->accounts[callee_ix[i].index];
		memset(ca, 0, sizeof(*ca));
		ca->index = callee_ix[i].index;
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= callee_ix[j].index == callee_ix[i].index;
		if (seen)
			continue;
		if (a->executable) {
			if (sbpf_vm_consume(vm, a->len / CPI_BYTES_PER_UNIT))
				return -1;
			continue;
		}
		size_t k = 0;
		for (; k < ninfos; k++) {
			uint8_t *key;
			if (map(vm, rd64(p + k * size), 32, false, &key))
				return -EFAULT;
			if (!memcmp(key, a->key, 32))
				break;
		}
		if (k == ninfos)
			return sbpf_vm_syscall_error(vm, "MissingAccount",
						     "no account info for instruction account %zu", i);
		long pos = caller_position(caller, a->key);
		ca->original_len = caller->input.pre_len[pos];
		ca->max_len = ca->original_len +
			      (caller->input.aligned ? SOL_MAX_PERMITTED_DATA_INCREASE : 0);
		ca->write_back = callee_ix[i].is_writable;
		int rc = read_info(vm, p + k * size, infos + k * size, rust, ca);
		if (!rc)
			rc = update_callee(vm, caller, pos, ca);
		if (rc)
			return rc;
	}
	return 0;
}

/* The callee's changes, written into the caller's memory. */
static int update_caller(struct sbpf_vm *vm, const struct sol_runtime *rt,
			 const struct caller_account *ca)
{
	const struct sol_account *a = &rt->accounts[ca->index];
	uint8_t *lam, *owner, *len_ref, *ser_len, *data;
	if (map(vm, ca->lamports_addr, 8, true, &lam) || map(vm, ca->owner_addr, 32, true, &owner) ||
	    map(vm, ca->len_addr, 8, true, &len_ref))
		return -EFAULT;
	memcpy(lam, &a->lamports, 8);
	memcpy(owner, a->owner, 32);
	uint64_t prev = rd64(len_ref), post = a->len;
	if (prev != post) {
		if (post > ca->max_len)
			return refuse(vm, "InvalidRealloc",
				      "Account data size realloc limited to 10240 in inner instructions");
		if (post < prev) {
			if (map(vm, ca->data_addr, prev, true, &data))
				return -EFAULT;
			memset(data + post, 0, prev - post);
		}
		if (map(vm, ca->data_addr - 8, 8, true, &ser_len))
			return -EFAULT;
		memcpy(len_ref, &post, 8);
		memcpy(ser_len, &post, 8);
	}
	if (map(vm, ca->data_addr, post, true, &data))
		return -EFAULT;
	if (post)
		memcpy(data, a->data, post);
	return 0;
}

static int check_stack(struct sbpf_vm *vm, const struct sol_runtime *rt, const uint8_t *id)
{
	if (rt->depth >= SOL_MAX_INVOKE_DEPTH)
		return sbpf_vm_syscall_error(vm, "CallDepth", "more than %d nested instructions",
					     SOL_MAX_INVOKE_DEPTH);
	for (unsigned i = 0; i + 1 < rt->depth; i++)
		if (!memcmp(rt->stack[i]->program_id, id, 32) &&
		    memcmp(rt->stack[rt->depth - 1]->program_id, id, 32))
			return sbpf_vm_syscall_error(vm, "ReentrancyNotAllowed", "re-entering a caller");
	for (size_t i = 0; i < rt->nprograms; i++)
		if (!memcmp(rt->programs[i].id, id, 32))
			return 0;
	if (sol_is_system_program(id))
		return 0;
	return sbpf_vm_syscall_error(vm, "MissingAccount", "the callee is not a fixture program");
}

/* Everything one invocation reads from the caller; on the heap, as CPIs nest. */
struct cpi_call {
	struct cpi_ix ix;
	struct sol_ix_account callee_ix[SOL_MAX_INSTRUCTION_ACCOUNTS];
	struct caller_account cas[SOL_MAX_INSTRUCTION_ACCOUNTS];
	uint8_t pdas[MAX_SIGNERS][32];
	size_t npdas;
};

static int call(struct sbpf_vm *vm, const uint64_t a[5], bool rust, struct cpi_call *c)
{
	struct sol_invocation *caller = sbpf_vm_user(vm);
	if (sbpf_vm_consume(vm, SOL_INVOKE_UNITS))
		return -1;
	int rc = rust ? read_ix_rust(vm, a[0], &c->ix) : read_ix_c(vm, a[0], &c->ix);
	if (!rc)
		rc = read_signers(vm, a[3], a[4], caller->program_id, c->pdas, &c->npdas);
	if (!rc)
		rc = prepare(vm, caller, &c->ix, c->pdas, c->npdas, c->callee_ix);
	if (!rc)
		rc = translate_accounts(vm, caller, c->callee_ix, c->ix.n, a[1], a[2], rust, c->cas);
	if (!rc)
		rc = check_stack(vm, caller->rt, c->ix.program_id);
	if (rc)
		return rc;
	struct sol_invoke_result res;
	unsigned depth = caller->rt->depth + 1;
	TALLY_TRACEPOINT(tally_sbpf, cpi_enter, c->ix.program_id, depth, sbpf_vm_remaining(vm));
	rc = sol_runtime_invoke(caller->rt, vm, c->ix.program_id, c->callee_ix, c->ix.n,
				c->ix.data, c->ix.data_len, sbpf_vm_remaining(vm), &res);
	if (rc)
		return rc;
	TALLY_TRACEPOINT(tally_sbpf, cpi_exit, c->ix.program_id, depth, res.cu, res.error);
	if (sbpf_vm_consume(vm, res.cu))
		return -1;
	/* An InstructionError reaches the caller as it is; any other failure (the VM's, or a
	 * syscall's own) as ProgramFailedToComplete, as agave's process_executable_chain
	 * turns it. */
	char text[400];
	if (res.error[0])
		return sbpf_vm_syscall_error(vm,
					     sol_instruction_error_text(res.error, text, sizeof(text))
					     ? res.error : "ProgramFailedToComplete",
					     "in the invoked program: %s", res.detail);
	for (size_t i = 0; i < c->ix.n; i++)
		if (c->cas[i].write_back && (rc = update_caller(vm, caller->rt, &c->cas[i])))
			return rc;
	return 0;
}

static int invoke(struct sbpf_vm *vm, const uint64_t a[5], bool rust)
{
	struct cpi_call *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	int rc = call(vm, a, rust, c);
	free(c);
	return rc;
}

static int sys_invoke_c(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	return invoke(vm, a, false);
}

static int sys_invoke_rust(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	return invoke(vm, a, true);
}

int sol_syscalls_cpi(struct sbpf_syscalls *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->v[i].name, "sol_invoke_signed_c"))
			s->v[i].fn = sys_invoke_c;
		else if (!strcmp(s->v[i].name, "sol_invoke_signed_rust"))
			s->v[i].fn = sys_invoke_rust;
	}
	return 0;
}
