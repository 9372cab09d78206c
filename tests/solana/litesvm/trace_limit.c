/*
 * The instruction trace's limit (agave's max_instruction_trace_length, 64 instructions: the
 * transaction's and every one invoked), run in tally and in LiteSVM by litesvm.test.sh.
 * Instruction data: [count, how]: count 0 is a leaf that returns at once; otherwise the
 * program invokes, count times in a loop, itself as a leaf (how 0) or the System program
 * (how 1: a Transfer of 0 lamports from account 1 to account 2), logging how many invokes
 * returned. Accounts: the program itself, a signer, another writable account, the System
 * program.
 */
#include "../cpi/solana_rt.h"

u64 entrypoint(u8 *input)
{
	struct input in;
	if (deserialize(input, &in) || in.data_len < 2)
		return 1;
	if (!in.data[0])
		return 0;
	if (in.n < 4)
		return 1;
	u8 leaf[2] = { 0, 0 };
	u8 transfer[12] = { 2 };
	SolAccountMeta both[2] = { { in.accounts[1].key, 1, 1 }, { in.accounts[2].key, 1, 0 } };
	SolInstruction self = { in.program_id, 0, 0, leaf, 2 };
	SolInstruction system = { in.accounts[3].key, both, 2, transfer, 12 };
	for (u64 i = 0; i < in.data[0]; i++) {
		sol_invoke_signed_c(in.data[1] ? &system : &self, in.accounts, in.n, 0, 0);
		if ((i + 1) % 16 == 0)
			sol_log_64_(i + 1, 0, 0, 0, 0);
	}
	return 0;
}
