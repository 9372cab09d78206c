/*
 * The runtime's information syscalls, charged as agave charges them: the stack height,
 * processed sibling instructions and the epoch stake (syscall_base_cost 100, the vote
 * account's form 100 + 32 / cpi_bytes_per_unit + mem_op_base_cost 10), the EpochRewards and
 * LastRestartSlot sysvars (sysvar_base_cost 100 + their size), and SIMD-0127's
 * sol_get_sysvar, which copies a slice of a sysvar's account data (its bincode form, not the
 * repr(C) struct the other sysvar syscalls write).
 *
 * The values are LiteSVM 1.5's: no stake (every epoch stake is 0), EpochRewards and
 * LastRestartSlot at their defaults (zero), SlotHashes holding one entry (the start slot and
 * LiteSVM's first blockhash), an empty StakeHistory; Clock and Rent are the run's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbpf/isa.h"
#include "sbpf/vm.h"
#include "solana/encoding.h"
#include "solana/runtime.h"
#include "solana/syscalls.h"

enum {
	SYSCALL_BASE_COST = 100,
	SYSVAR_BASE_COST = 100,
	CPI_BYTES_PER_UNIT = 250,
	MEM_OP_BASE_COST = 10,
	EPOCH_REWARDS_SIZE = 96,  /* repr(C): 81 bytes of fields, u128 alignment */
	EPOCH_REWARDS_BINCODE = 81,
	SLOT_HASHES_SIZE = 20488, /* 8-byte length, 512 entries of (slot, hash) */
	SYSVAR_NOT_FOUND = 2,
	OFFSET_LENGTH_EXCEEDS_SYSVAR = 1,
};

/* The runtime's invocation running in vm, NULL in a bare run. */
static const struct sol_invocation *invocation(struct sbpf_vm *vm)
{
	return sbpf_vm_user(vm);
}

/* The instruction's height: 1 for the transaction's instruction (and a bare run), one
 * more per CPI. */
static unsigned stack_height(struct sbpf_vm *vm)
{
	const struct sol_invocation *inv = invocation(vm);
	return inv ? inv->rt->depth : 1;
}

static int sys_get_stack_height(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	if (sbpf_vm_consume(vm, SYSCALL_BASE_COST))
		return -1;
	*ret = stack_height(vm);
	return 0;
}

/* The index-th instruction before the running one at its height, walking the trace back
 * to its parent (agave's loop: deeper entries are its siblings' children). NULL when
 * there is none, as in a bare run. */
static const struct sol_trace_entry *sibling(const struct sol_runtime *rt, uint64_t index)
{
	uint64_t seen = 0;
	for (size_t i = rt->ntrace; i-- > 0;) {
		const struct sol_trace_entry *e = &rt->trace[i];
		if (e->height < rt->depth)
			break;
		if (e->height > rt->depth)
			continue;
		if (index + 1 == seen)
			return e;
		seen++;
	}
	return NULL;
}

/* Whether [a, a + an) and [b, b + bn) are apart (agave's is_nonoverlapping). */
static bool apart(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a > b ? a - b >= bn : b - a >= an;
}

enum { ACCOUNT_META_SIZE = 34 }; /* pubkey, is_signer, is_writable */

/* Writes the sibling's program id, data and account metas when the header's lengths are
 * its lengths. */
static int copy_sibling(struct sbpf_vm *vm, const struct sol_runtime *rt,
			const struct sol_trace_entry *e, const uint64_t a[5])
{
	uint64_t dlen = e->data_len, alen = (uint64_t)e->naccounts * ACCOUNT_META_SIZE;
	uint8_t *pid, *data, *metas;
	if (sbpf_vm_map(vm, a[2], 32, true, &pid) || sbpf_vm_map(vm, a[3], dlen, true, &data) ||
	    sbpf_vm_map(vm, a[4], alen, true, &metas))
		return -EFAULT;
	if (!apart(a[1], 16, a[2], 32) || !apart(a[1], 16, a[4], alen) ||
	    !apart(a[1], 16, a[3], dlen) || !apart(a[2], 32, a[3], dlen) ||
	    !apart(a[2], 32, a[4], alen) || !apart(a[3], dlen, a[4], alen))
		return sbpf_vm_syscall_error(vm, "CopyOverlapping", "Overlapping copy");
	memcpy(pid, e->program_id, 32);
	if (dlen)
		memcpy(data, e->data, dlen);
	for (size_t i = 0; i < e->naccounts; i++) {
		uint8_t *m = metas + i * ACCOUNT_META_SIZE;
		memcpy(m, rt->accounts[e->accounts[i].index].key, 32);
		m[32] = e->accounts[i].is_signer;
		m[33] = e->accounts[i].is_writable;
	}
	return 0;
}

/*
 * sol_get_processed_sibling_instruction(index, meta, program_id, data, accounts) -> 1 when
 * the index-th earlier instruction at this height exists: meta ({data_len, accounts_len},
 * 8-byte aligned) gets its lengths, and when meta already held them the program id, the
 * data and the account metas are copied too. The transaction's instruction has no sibling
 * (a fixture is one instruction); under a CPI the caller's earlier invokes are.
 */
static int sys_get_processed_sibling(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, SYSCALL_BASE_COST))
		return -1;
	const struct sol_invocation *inv = invocation(vm);
	const struct sol_trace_entry *e = inv ? sibling(inv->rt, a[0]) : NULL;
	if (!e)
		return 0;
	uint8_t *meta;
	if (sbpf_vm_map(vm, a[1], 16, true, &meta))
		return -EFAULT;
	if (a[1] % 8)
		return sbpf_vm_syscall_error(vm, "UnalignedPointer", "Unaligned pointer");
	uint64_t want[2] = { e->data_len, e->naccounts }, have[2];
	memcpy(have, meta, 16);
	if (have[0] == want[0] && have[1] == want[1]) {
		int rc = copy_sibling(vm, inv->rt, e, a);
		if (rc)
			return rc;
	}
	memcpy(meta, want, 16);
	*ret = 1;
	return 0;
}

/* sol_get_epoch_stake(vote): NULL asks for the cluster's total stake. */
static int sys_get_epoch_stake(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (!a[0])
		return sbpf_vm_consume(vm, SYSCALL_BASE_COST) ? -1 : 0;
	if (sbpf_vm_consume(vm, SYSCALL_BASE_COST + 32 / CPI_BYTES_PER_UNIT + MEM_OP_BASE_COST))
		return -1;
	uint8_t *vote;
	return sbpf_vm_map(vm, a[0], 32, false, &vote) ? -EFAULT : 0;
}

static int sys_get_epoch_rewards(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	static const uint8_t rewards[EPOCH_REWARDS_SIZE];
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], rewards, sizeof(rewards), 16);
}

static int sys_get_last_restart_slot(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	static const uint8_t slot[8];
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], slot, sizeof(slot), 8);
}

/* LiteSVM's first blockhash, the one entry of its SlotHashes. */
static const char GENESIS_BLOCKHASH[] = "CmpNeggWJ4JaWJeJ8YKN1Zypmk7uvQq3PECGUCAEMbky";

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/*
 * Fills buf (SLOT_HASHES_SIZE bytes) with the account data of the sysvar named id and
 * returns its length, or 0 for a sysvar the runtime's cache does not hold (Fees,
 * RecentBlockhashes, SlotHistory, Instructions, anything else).
 */
static size_t sysvar_data(struct sbpf_vm *vm, const uint8_t id[32], uint8_t *buf)
{
	static const char *const names[] = {
		"SysvarC1ock11111111111111111111111111111111",
		SOL_SYSVAR_RENT_ID,
		"SysvarEpochSchedu1e111111111111111111111111",
		"SysvarEpochRewards1111111111111111111111111",
		"SysvarLastRestartS1ot1111111111111111111111",
		"SysvarS1otHashes111111111111111111111111111",
		"SysvarStakeHistory1111111111111111111111111",
	};
	size_t which = sizeof(names) / sizeof(names[0]);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint8_t key[32];
		if (!sol_base58_decode(names[i], key, sizeof(key)) && !memcmp(key, id, 32))
			which = i;
	}
	const struct sol_invocation *inv = invocation(vm);
	uint8_t rent[24], schedule[40];
	memset(buf, 0, SLOT_HASHES_SIZE);
	switch (which) {
	case 0:
		if (inv)
			memcpy(buf, inv->rt->clock, 40);
		else
			sol_default_clock(buf);
		return 40;
	case 1: /* bincode: the 17 bytes of fields without repr(C)'s padding */
		if (inv)
			memcpy(rent, inv->rt->rent, 24);
		else
			sol_default_rent(rent);
		memcpy(buf, rent, 17);
		return 17;
	case 2:
		sol_default_epoch_schedule(schedule);
		memcpy(buf, schedule, 17);
		memcpy(buf + 17, schedule + 24, 16);
		return 33;
	case 3:
		return EPOCH_REWARDS_BINCODE;
	case 4:
		return 8;
	case 5:
		put64(buf, 1);
		put64(buf + 8, SOL_DEFAULT_SLOT);
		sol_base58_decode(GENESIS_BLOCKHASH, buf + 16, 32);
		return SLOT_HASHES_SIZE;
	case 6:
		return 8;
	default:
		return 0;
	}
}

/*
 * sol_get_sysvar(id, var, offset, length) -> 0, 1 when [offset, offset + length) is past
 * the sysvar's data, 2 when the runtime has no such sysvar; charged 100 + 32 / 250 +
 * max(length / 250, 10) first, then var (not in the input region) and id are translated.
 */
static int sys_get_sysvar(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	uint64_t buf_cost = a[3] / CPI_BYTES_PER_UNIT;
	if (sbpf_vm_consume(vm, SYSVAR_BASE_COST + 32 / CPI_BYTES_PER_UNIT +
				(buf_cost > MEM_OP_BASE_COST ? buf_cost : MEM_OP_BASE_COST)))
		return -1;
	if (a[1] >= SBPF_MM_INPUT)
		return sbpf_vm_syscall_error(vm, "InvalidPointer", "Invalid pointer");
	uint8_t *var, *id;
	if (sbpf_vm_map(vm, a[1], a[3], true, &var) || sbpf_vm_map(vm, a[0], 32, false, &id))
		return -EFAULT;
	if (a[2] + a[3] < a[2] || a[1] + a[3] < a[1])
		return sbpf_vm_syscall_error(vm, "ArithmeticOverflow", "Arithmetic overflow");
	uint8_t *buf = malloc(SLOT_HASHES_SIZE);
	if (!buf)
		return -ENOMEM;
	size_t len = sysvar_data(vm, id, buf);
	if (!len)
		*ret = SYSVAR_NOT_FOUND;
	else if (a[2] + a[3] > len)
		*ret = OFFSET_LENGTH_EXCEEDS_SYSVAR;
	else if (a[3])
		memcpy(var, buf + a[2], a[3]);
	free(buf);
	return 0;
}

int sol_syscalls_misc(struct sbpf_syscalls *s)
{
	static const struct {
		const char *name;
		sbpf_syscall_fn fn;
	} misc[] = {
		{ "sol_get_stack_height", sys_get_stack_height },
		{ "sol_get_processed_sibling_instruction", sys_get_processed_sibling },
		{ "sol_get_epoch_stake", sys_get_epoch_stake },
		{ "sol_get_epoch_rewards_sysvar", sys_get_epoch_rewards },
		{ "sol_get_last_restart_slot", sys_get_last_restart_slot },
		{ "sol_get_sysvar", sys_get_sysvar },
	};
	for (size_t i = 0; i < sizeof(misc) / sizeof(misc[0]); i++) {
		int rc = sbpf_syscalls_add(s, misc[i].name, misc[i].fn);
		if (rc)
			return rc;
	}
	return 0;
}
