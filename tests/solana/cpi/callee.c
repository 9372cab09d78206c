/*
 * CPI callee. Accounts: 0 a vault it owns (writable), 1 a destination (writable),
 * optionally 2 an authority that must sign. Moves the u64 amount in the instruction data
 * from the vault to the destination, appends "cpi!" to the vault's data (a realloc into
 * the 10 KiB room), logs and sets return data "ok".
 */
#include "solana_rt.h"

u64 entrypoint(u8 *input)
{
	struct input in;
	if (deserialize(input, &in) || in.n < 2 || in.data_len != 8)
		return 1;
	if (in.n > 2 && !in.accounts[2].is_signer)
		return 2;
	u64 amount = *(u64 *)in.data;
	SolAccountInfo *vault = &in.accounts[0], *dest = &in.accounts[1];
	*vault->lamports -= amount;
	*dest->lamports += amount;
	*(u64 *)(vault->data - 8) = vault->data_len + 4;
	for (u64 i = 0; i < 4; i++)
		vault->data[vault->data_len + i] = (u8) "cpi!"[i];
	sol_log_("callee", 6);
	sol_set_return_data((const u8 *)"ok", 2);
	return 0;
}
