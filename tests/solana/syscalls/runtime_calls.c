/*
 * The runtime's information syscalls, one per case: instruction data[0] picks it, the
 * rest are its arguments; the results come back as return data, so tally and LiteSVM can
 * be compared byte for byte (tests/solana/syscalls.test.sh).
 *   0 sol_get_stack_height                      -> u64
 *   1 sol_get_epoch_rewards_sysvar              -> 96 bytes
 *   2 sol_get_last_restart_slot                 -> 8 bytes
 *   3 sol_get_sysvar(id = data[1..33], offset = data[33..41], len = data[41..49])
 *                                               -> u64 result, then len bytes (len <= 120)
 *   4 sol_get_epoch_stake(NULL)                 -> u64
 *   5 sol_get_epoch_stake(vote = data[1..33])   -> u64
 *   6 sol_get_processed_sibling_instruction(data[1]) -> u64 result, data_len, accounts_len
 *   7 sol_get_last_restart_slot into the input region -> the input's first 8 bytes
 *   8 sol_secp256k1_recover(hash = data[1..33], recovery id = data[33..41],
 *                           signature = data[41..105]) -> u64 result, 64-byte key
 */
#include "../cpi/solana_rt.h"

extern u64 sol_get_stack_height(void);
extern u64 sol_get_epoch_rewards_sysvar(u8 *out);
extern u64 sol_get_last_restart_slot(u8 *out);
extern u64 sol_get_sysvar(const u8 *id, u8 *out, u64 offset, u64 len);
extern u64 sol_get_epoch_stake(const u8 *vote);
extern u64 sol_secp256k1_recover(const u8 *hash, u64 recovery_id, const u8 *sig, u8 *out);

struct sibling_meta {
	u64 data_len, accounts_len;
};
extern u64 sol_get_processed_sibling_instruction(u64 index, struct sibling_meta *meta, u8 *program_id,
						  u8 *data, SolAccountMeta *accounts);

static u64 read64(const u8 *p)
{
	u64 v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put64(u8 *p, u64 v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (u8)(v >> (8 * i));
}

u64 entrypoint(u8 *in)
{
	struct input ix;
	if (deserialize(in, &ix) || ix.data_len < 1)
		return 1;
	const u8 *d = ix.data;
	u8 out[128];
	u8 id[32] __attribute__((aligned(8)));
	u64 n = 8;
	switch (d[0]) {
	case 0:
		put64(out, sol_get_stack_height());
		break;
	case 1:
		sol_get_epoch_rewards_sysvar(out);
		n = 96;
		break;
	case 2:
		sol_get_last_restart_slot(out);
		break;
	case 3: {
		if (ix.data_len < 49 || read64(d + 41) > 120)
			return 2;
		for (int i = 0; i < 32; i++)
			id[i] = d[1 + i];
		u64 len = read64(d + 41);
		put64(out, sol_get_sysvar(id, out + 8, read64(d + 33), len));
		n = 8 + len;
		break;
	}
	case 4:
		put64(out, sol_get_epoch_stake(0));
		break;
	case 5:
		if (ix.data_len < 33)
			return 2;
		for (int i = 0; i < 32; i++)
			id[i] = d[1 + i];
		put64(out, sol_get_epoch_stake(id));
		break;
	case 6: {
		struct sibling_meta meta = { 0, 0 };
		SolAccountMeta metas[2];
		u8 data[16];
		put64(out, sol_get_processed_sibling_instruction(d[1], &meta, id, data, metas));
		put64(out + 8, meta.data_len);
		put64(out + 16, meta.accounts_len);
		n = 24;
		break;
	}
	case 7:
		sol_get_last_restart_slot(in);
		for (int i = 0; i < 8; i++)
			out[i] = in[i];
		break;
	case 8:
		if (ix.data_len < 105)
			return 2;
		put64(out, sol_secp256k1_recover(d + 1, read64(d + 33), d + 41, out + 8));
		n = 72;
		break;
	default:
		return 3;
	}
	sol_set_return_data(out, n);
	return 0;
}
