/*
 * libFuzzer target for the alt_bn128 syscalls' arithmetic (solana/crypto/bn254.c) on
 * hostile encodings: the first byte picks the operation, the rest (zero-padded to its size)
 * is its input. Whatever the bytes, nothing reads or writes out of bounds (ASan) and: a
 * point that decompresses compresses back to the same bytes (unless it had the infinity
 * flag, which decompresses to all zeroes), a sum or product is a point (it compresses and
 * decompresses to itself), and a pairing check of at most two pairs returns 0 or -1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solana/crypto/bn254.h"

enum {
	FP = SOL_BN254_FIELD_BYTES,
	G1 = SOL_BN254_G1_BYTES,
	G2 = SOL_BN254_G2_BYTES,
	INPUT = 2 * SOL_BN254_PAIR_BYTES, /* room for two pairs */
};

static void check(int ok)
{
	if (!ok)
		abort();
}

static bool all_zero(const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* A point the arithmetic produced round-trips through compression. */
static void round_trips(const uint8_t *p, bool g2)
{
	uint8_t c[2 * FP], back[G2];
	if (g2) {
		check(sol_bn254_g2_compress(c, p) == 0 && sol_bn254_g2_decompress(back, c) == 0);
		check(memcmp(back, p, G2) == 0);
	} else {
		check(sol_bn254_g1_compress(c, p) == 0 && sol_bn254_g1_decompress(back, c) == 0);
		check(memcmp(back, p, G1) == 0);
	}
}

/* Decompression's output compresses back to its input. */
static void decompresses_back(const uint8_t *c, bool g2)
{
	size_t len = g2 ? 2 * FP : FP;
	uint8_t p[G2], again[2 * FP];
	int rc = g2 ? sol_bn254_g2_decompress(p, c) : sol_bn254_g1_decompress(p, c);
	if (rc) {
		check(rc == -1);
		return;
	}
	if (c[len - 1] & 0x40) {
		check(all_zero(p, 2 * len));
		return;
	}
	check((g2 ? sol_bn254_g2_compress(again, p) : sol_bn254_g1_compress(again, p)) == 0);
	check(memcmp(again, c, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t in[INPUT] = { 0 }, out[G2];
	bool one;
	if (size < 1)
		return 0;
	size_t len = size - 1 < INPUT ? size - 1 : INPUT;
	memcpy(in, data + 1, len);
	switch (data[0] % 8) {
	case 0:
		if (sol_bn254_g1_add(out, in, in + G1) == 0)
			round_trips(out, false);
		break;
	case 1:
		if (sol_bn254_g1_mul(out, in, in + G1) == 0)
			round_trips(out, false);
		break;
	case 2:
		if (sol_bn254_g2_add(out, in, in + G2) == 0)
			round_trips(out, true);
		break;
	case 3:
		if (sol_bn254_g2_mul(out, in, in + G2) == 0)
			round_trips(out, true);
		break;
	case 4:
		check(sol_bn254_pairing_is_one(in, len / SOL_BN254_PAIR_BYTES, &one) <= 0);
		break;
	case 5:
		decompresses_back(in, false);
		break;
	case 6:
		decompresses_back(in, true);
		break;
	default:
		check(sol_bn254_g1_compress(out, in) >= -1 && sol_bn254_g2_compress(out, in) >= -1);
		break;
	}
	return 0;
}
