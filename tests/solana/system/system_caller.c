/*
 * Invokes the System program with what its instruction data says, so that every System
 * instruction can be run through CPI. Accounts: 0 the System program, then up to three
 * more. Instruction data: n (the callee's account count), n meta bytes (bits 0-3 the
 * account's position, bit 4 signer, bit 5 writable), a flag and a bump (flag 1: sign for
 * this program's PDA of the seeds "system", bump), then the System instruction itself.
 * After the call it logs what the runtime wrote back: the lamports of accounts 1 and 2 and
 * the data length of account 1.
 */
#include "../cpi/solana_rt.h"

u64 entrypoint(u8 *input)
{
	struct input in;
	if (deserialize(input, &in) || in.n < 2 || in.data_len < 1)
		return 1;
	u64 n = in.data[0];
	if (n > 3 || in.data_len < 3 + n)
		return 2;
	SolAccountMeta metas[3];
	for (u64 i = 0; i < n; i++) {
		u8 b = in.data[1 + i];
		if ((b & 15) >= in.n)
			return 3;
		metas[i].pubkey = in.accounts[b & 15].key;
		metas[i].is_signer = (b >> 4) & 1;
		metas[i].is_writable = (b >> 5) & 1;
	}
	u8 pda = in.data[1 + n], bump = in.data[2 + n];
	SolInstruction ix = { in.accounts[0].key, metas, n, in.data + 3 + n, in.data_len - 3 - n };
	SolSignerSeed seeds[2] = { { (const u8 *)"system", 6 }, { &bump, 1 } };
	SolSignerSeeds signer = { seeds, 2 };
	sol_invoke_signed_c(&ix, in.accounts, in.n, &signer, pda ? 1 : 0);
	SolAccountInfo *a = in.accounts;
	sol_log_64_(*a[1].lamports, in.n > 2 ? *a[2].lamports : 0, a[1].data_len, 0, 0);
	return 0;
}
