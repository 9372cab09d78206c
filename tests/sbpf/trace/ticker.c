/*
 * Tracepoint and log-framing test program: logs "tick" N times, then invokes the CPI
 * callee (tests/solana/cpi/callee.c) M times, each moving 100 lamports from the vault to the
 * destination. Accounts: 0 the callee program, 1 the vault, 2 the destination. Instruction
 * data: N, M, and a third byte that, when 1, sends the callee 7 bytes of data instead of 8
 * (the callee then fails with Custom(1), and so does this program's invoke).
 * Syscalls made on success: N + M here, 2 per invocation in the callee (sol_log_,
 * sol_set_return_data).
 */
#include "../../solana/cpi/solana_rt.h"

u64 entrypoint(u8 *input)
{
	struct input in;
	if (deserialize(input, &in) || in.n < 3 || in.data_len < 3)
		return 1;
	u8 n = in.data[0], m = in.data[1], bad = in.data[2];
	SolAccountInfo *acc = in.accounts;
	SolAccountMeta metas[2] = { { acc[1].key, 1, 0 }, { acc[2].key, 1, 0 } };
	u64 amount = 100;
	SolInstruction ix = { acc[0].key, metas, 2, (u8 *)&amount, bad == 1 ? 7 : 8 };
	for (u8 i = 0; i < n; i++)
		sol_log_("tick", 4);
	for (u8 i = 0; i < m; i++)
		sol_invoke_signed_c(&ix, acc, in.n, 0, 0);
	return 0;
}
