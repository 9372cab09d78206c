/*
 * What a program may ask about where it runs, charged as agave charges it: its
 * instruction's stack height and the sibling instructions processed before it
 * (syscall_base_cost 100), and the epoch stake (100, the vote account's form 100 + 32 /
 * cpi_bytes_per_unit + mem_op_base_cost 10). The values are LiteSVM 1.5's: no stake (every
 * epoch stake is 0); a bare run is the transaction's one instruction.
 */
#include <errno.h>
#include <string.h>

#include "sbpf/vm.h"
#include "solana/runtime.h"
#include "solana/syscalls.h"

enum {
	SYSCALL_BASE_COST = 100,
	CPI_BYTES_PER_UNIT = 250,
	MEM_OP_BASE_COST = 10,
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

int sol_syscalls_context(struct sbpf_syscalls *s)
{
	static const struct sol_syscall_def calls[] = {
		{ "sol_get_stack_height", sys_get_stack_height },
		{ "sol_get_processed_sibling_instruction", sys_get_processed_sibling },
		{ "sol_get_epoch_stake", sys_get_epoch_stake },
	};
	return sol_syscalls_add_all(s, calls, sizeof(calls) / sizeof(calls[0]));
}
