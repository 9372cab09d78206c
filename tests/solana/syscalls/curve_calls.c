/*
 * The curve25519 syscalls, one call per case: instruction data[0] picks the case, the rest
 * are its arguments; the results come back as return data (the syscall's u64 result, then
 * its 32-byte output buffer, filled with 0xaa before the call so that an untouched buffer
 * shows), so tally and LiteSVM can be compared byte for byte (tests/solana/curve.test.sh).
 *   0 sol_curve_validate_point(curve = data[1], point = data[2..34])          -> u64
 *   1 sol_curve_group_op(curve = data[1], op = data[2], left = data[3..35],
 *                        right = data[35..67])                                -> u64, 32 bytes
 *   2 sol_curve_multiscalar_mul(curve = data[1], n = data[2..4] (u16 LE),
 *                               scalars = data[4..], points = the 32 * n bytes after them;
 *                               n may claim more than the data holds)        -> u64, 32 bytes
 *   3 case 1 with the result in read-only memory                              -> u64
 *   4 case 0 with the point at address 0                                      -> (fails)
 *   5 case 1 with the left input at address 8                                 -> (fails)
 */
#include "../cpi/solana_rt.h"

extern u64 sol_curve_validate_point(u64 curve, const u8 *point, u8 *result);
extern u64 sol_curve_group_op(u64 curve, u64 op, const u8 *left, const u8 *right, u8 *result);
extern u64 sol_curve_multiscalar_mul(u64 curve, const u8 *scalars, const u8 *points, u64 n,
				     u8 *result);

static const u8 read_only[32] = { 1 };

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
	u8 out[40];
	for (int i = 8; i < 40; i++)
		out[i] = 0xaa;
	u64 n = 40;
	switch (d[0]) {
	case 0:
		if (ix.data_len < 34)
			return 2;
		put64(out, sol_curve_validate_point(d[1], d + 2, out + 8));
		n = 8;
		break;
	case 1:
		if (ix.data_len < 67)
			return 2;
		put64(out, sol_curve_group_op(d[1], d[2], d + 3, d + 35, out + 8));
		break;
	case 2: {
		if (ix.data_len < 4)
			return 2;
		u64 count = (u64)d[2] | (u64)d[3] << 8;
		put64(out, sol_curve_multiscalar_mul(d[1], d + 4, d + 4 + 32 * count, count, out + 8));
		break;
	}
	case 3:
		if (ix.data_len < 67)
			return 2;
		put64(out, sol_curve_group_op(d[1], d[2], d + 3, d + 35, (u8 *)read_only));
		n = 8;
		break;
	case 4:
		put64(out, sol_curve_validate_point(d[1], 0, out + 8));
		n = 8;
		break;
	case 5:
		if (ix.data_len < 67)
			return 2;
		put64(out, sol_curve_group_op(d[1], d[2], (const u8 *)8, d + 35, out + 8));
		break;
	default:
		return 3;
	}
	sol_set_return_data(out, n);
	return 0;
}
