/*
 * sol_get_stack_height and sol_get_processed_sibling_instruction across CPI, run in tally
 * and in LiteSVM by litesvm.test.sh. Instruction data[0] is the mode:
 *   0  the transaction's instruction: logs its height and asks for a sibling (it has
 *      none), invokes itself (mode 1), the System program (Transfer of 5 lamports from
 *      account 1 to account 2), then itself four times (mode 2 with indexes 0, 0, 3, 5:
 *      the Transfer, the first of these, the mode 1 call, none);
 *   1  logs its height and invokes itself (mode 3), a grandchild (the accounts: the payer
 *      and the program, whose account info an invoke needs);
 *   2  logs its height and asks for sibling data[1] (its caller's earlier invokes);
 *   3  logs its height and asks for siblings 0 and 1 (it has none: its parent's
 *      siblings are not its own).
 * Accounts: the program itself, a signer to pay, another writable account, the System
 * program.
 */
#include "../cpi/solana_rt.h"

extern u64 sol_get_stack_height(void);
extern u64 sol_get_processed_sibling_instruction(u64 index, u64 *meta, u8 *program_id,
						 u8 *data, u8 *accounts);
extern void sol_log_pubkey(const u8 *key);

/* Asks twice, as the SDK does: once for the lengths, then with them for the contents. */
static void query(u64 index)
{
	u64 meta[2] = { 0, 0 };
	u8 pid[32] = { 0 }, data[16] = { 0 }, metas[34 * 4] = { 0 };
	u64 r = sol_get_processed_sibling_instruction(index, meta, pid, data, metas);
	sol_log_64_(index, r, meta[0], meta[1], 0);
	if (!r || meta[0] > sizeof(data) || meta[1] > 4)
		return;
	r = sol_get_processed_sibling_instruction(index, meta, pid, data, metas);
	sol_log_pubkey(pid);
	sol_log_64_(r, data[0], data[1], metas[32], metas[33]);
	if (meta[1])
		sol_log_pubkey(metas);
}

static void invoke(struct input *in, u8 *program, SolAccountMeta *metas, u64 nmetas, u8 *data,
		   u64 len)
{
	SolInstruction ix = { program, metas, nmetas, data, len };
	sol_invoke_signed_c(&ix, in->accounts, in->n, 0, 0);
}

u64 entrypoint(u8 *input)
{
	struct input in;
	if (deserialize(input, &in) || !in.data_len)
		return 1;
	sol_log_64_(in.data[0], sol_get_stack_height(), 0, 0, 0);
	if (in.data[0] == 0) {
		query(0);
		u8 child[2] = { 1, 0xaa };
		SolAccountMeta payer[2] = { { in.accounts[1].key, 1, 1 }, { in.program_id, 0, 0 } };
		invoke(&in, in.program_id, payer, 2, child, 2);
		u8 transfer[12] = { 2, 0, 0, 0, 5 };
		SolAccountMeta both[2] = { { in.accounts[1].key, 1, 1 }, { in.accounts[2].key, 1, 0 } };
		invoke(&in, in.accounts[3].key, both, 2, transfer, 12);
		static const u8 index[4] = { 0, 0, 3, 5 };
		for (u8 k = 0; k < 4; k++) {
			u8 ask[2] = { 2, index[k] };
			SolAccountMeta other[1] = { { in.accounts[2].key, 1, 0 } };
			invoke(&in, in.program_id, other, 1, ask, 2);
		}
	} else if (in.data[0] == 1) {
		u8 grandchild[1] = { 3 };
		invoke(&in, in.program_id, 0, 0, grandchild, 1);
	} else if (in.data[0] == 2 && in.data_len > 1) {
		query(in.data[1]);
	} else if (in.data[0] == 3) {
		query(0);
		query(1);
	}
	return 0;
}
