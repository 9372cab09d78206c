/*
 * CPI caller. Accounts: 0 the callee program, 1 the vault, 2 the destination, 3 an
 * authority. Instruction data: mode, bump. Mode 0 invokes the callee with the vault and
 * the destination; mode 1 adds the authority as a signer through the PDA seeds
 * ("vault", bump) of this program; mode 2 adds it as a signer without seeds (privilege
 * escalation); mode 3 invokes this program itself with the same data until the runtime's
 * depth limit stops it (account 0 is then this program: an invoked program must be one of
 * the caller's accounts); mode 4 first writes into the vault's data, which the callee owns,
 * so the runtime refuses the change when the call syncs it. After the call it logs the vault's data length and both balances
 * as the runtime wrote them back.
 */
#include "solana_rt.h"

u64 entrypoint(u8 *input)
{
	struct input in;
	if (deserialize(input, &in) || in.n < 4 || in.data_len < 2)
		return 1;
	u8 mode = in.data[0], bump = in.data[1];
	SolAccountInfo *acc = in.accounts;
	SolAccountMeta metas[4] = { { acc[1].key, 1, 0 }, { acc[2].key, 1, 0 }, { acc[3].key, 0, 1 },
				    { acc[0].key, 0, 0 } };
	u64 amount = 500;
	SolInstruction ix = { acc[0].key, metas, mode == 1 || mode == 2 ? 3 : 2, (u8 *)&amount, 8 };
	if (mode == 3) {
		/* this program again, with the same accounts in the same order */
		for (u64 i = 0; i < 4; i++) {
			metas[i].pubkey = acc[i].key;
			metas[i].is_writable = i == 1 || i == 2;
			metas[i].is_signer = 0;
		}
		ix.program_id = in.program_id;
		ix.account_len = 4;
		ix.data = in.data;
		ix.data_len = 2;
	}
	if (mode == 4)
		acc[1].data[0] = 'Z';
	SolSignerSeed seeds[2] = { { (const u8 *)"vault", 5 }, { &bump, 1 } };
	SolSignerSeeds signer = { seeds, 2 };
	sol_invoke_signed_c(&ix, acc, in.n, &signer, mode == 1 ? 1 : 0);
	sol_log_64_(acc[1].data_len, *acc[1].lamports, *acc[2].lamports, acc[1].data[acc[1].data_len - 1], 0);
	return 0;
}
