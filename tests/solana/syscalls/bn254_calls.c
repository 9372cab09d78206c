/*
 * The alt_bn128 syscalls, one call per case: instruction data[0] picks the case, data[1]
 * is the operation, the rest the input; the results come back as return data (the
 * syscall's u64 result, then its 128-byte output buffer, filled with 0xaa before the call
 * so that what the call wrote, and what it left, shows), so tally and LiteSVM can be
 * compared byte for byte (tests/solana/bn254.test.sh).
 *   0 sol_alt_bn128_group_op(op = data[1], input = data[2..])      -> u64, 128 bytes
 *   1 sol_alt_bn128_compression(op = data[1], input = data[2..])   -> u64, 128 bytes
 *   2 case 0 with the result in read-only memory                    -> u64
 *   3 case 1 with the result in read-only memory                    -> u64
 *   4 case 0 with the input at address 8                            -> (fails)
 *   5 case 0 claiming 64 bytes more input than the data holds      -> u64, 128 bytes
 */
#include "../cpi/solana_rt.h"

extern u64 sol_alt_bn128_group_op(u64 op, const u8 *input, u64 len, u8 *result);
extern u64 sol_alt_bn128_compression(u64 op, const u8 *input, u64 len, u8 *result);

static const u8 read_only[128] = { 1 };

static void put64(u8 *p, u64 v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (u8)(v >> (8 * i));
}

u64 entrypoint(u8 *in)
{
	struct input ix;
	if (deserialize(in, &ix) || ix.data_len < 2)
		return 1;
	const u8 *d = ix.data;
	u64 op = d[1], len = ix.data_len - 2;
	u8 out[136];
	for (int i = 8; i < 136; i++)
		out[i] = 0xaa;
	u64 n = 136;
	switch (d[0]) {
	case 0:
		put64(out, sol_alt_bn128_group_op(op, d + 2, len, out + 8));
		break;
	case 1:
		put64(out, sol_alt_bn128_compression(op, d + 2, len, out + 8));
		break;
	case 2:
		put64(out, sol_alt_bn128_group_op(op, d + 2, len, (u8 *)read_only));
		n = 8;
		break;
	case 3:
		put64(out, sol_alt_bn128_compression(op, d + 2, len, (u8 *)read_only));
		n = 8;
		break;
	case 4:
		put64(out, sol_alt_bn128_group_op(op, (const u8 *)8, len, out + 8));
		break;
	case 5:
		put64(out, sol_alt_bn128_group_op(op, d + 2, len + 64, out + 8));
		break;
	default:
		return 3;
	}
	sol_set_return_data(out, n);
	return 0;
}
