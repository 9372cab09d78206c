/*
 * libFuzzer target for sol_poseidon's hash (solana/crypto/poseidon.c): byte 0 picks the
 * byte order (bit 0: little-endian), byte 1 the number of inputs (any), then one length
 * byte per input and the inputs' bytes, as a program could pass them. The hash succeeds
 * exactly when there are 1 to 12 inputs of 32 bytes, each below the modulus (else -EINVAL
 * for the count or a length, -ERANGE for a value); a success is the width's permutation of
 * (0, inputs), the same hash twice, and in the other byte order the byte-reversed hash of
 * reversed inputs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solana/crypto/poseidon.h"

enum { MAX_FUZZ_INPUTS = 255 };

static const uint8_t MODULUS_BE[32] = {
	0x30, 0x64, 0x4e, 0x72, 0xe1, 0x31, 0xa0, 0x29, 0xb8, 0x50, 0x45, 0xb6, 0x81, 0x81, 0x58, 0x5d,
	0x28, 0x33, 0xe8, 0x48, 0x79, 0xb9, 0x70, 0x91, 0x43, 0xe1, 0xf5, 0x93, 0xf0, 0x00, 0x00, 0x01,
};

static void check(int ok)
{
	if (!ok)
		abort();
}

static void reverse32(const uint8_t *in, uint8_t *out)
{
	for (size_t i = 0; i < 32; i++)
		out[i] = in[31 - i];
}

/* What the hash must answer, from the rules alone. */
static int expected(const struct sol_poseidon_input *in, size_t n, bool little_endian)
{
	if (n == 0 || n > SOL_POSEIDON_MAX_INPUTS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (in[i].len != 32)
			return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint8_t be[32];
		if (little_endian)
			reverse32(in[i].bytes, be);
		else
			memcpy(be, in[i].bytes, 32);
		if (memcmp(be, MODULUS_BE, 32) >= 0)
			return -ERANGE;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	bool le = data[0] & 1;
	size_t n = data[1], pos = 2 + n;
	if (pos > size)
		return 0;
	static struct sol_poseidon_input in[MAX_FUZZ_INPUTS];
	for (size_t i = 0; i < n; i++) {
		size_t len = data[2 + i];
		if (len > size - pos)
			return 0;
		in[i] = (struct sol_poseidon_input){ data + pos, len };
		pos += len;
	}
	uint8_t h[32], again[32];
	int rc = sol_poseidon_hash(h, in, n, le);
	check(rc == expected(in, n, le));
	if (rc)
		return 0;
	check(sol_poseidon_hash(again, in, n, le) == 0 && memcmp(h, again, 32) == 0);

	uint8_t state[(SOL_POSEIDON_MAX_INPUTS + 1) * 32] = { 0 }, flipped[SOL_POSEIDON_MAX_INPUTS][32];
	struct sol_poseidon_input other[SOL_POSEIDON_MAX_INPUTS];
	for (size_t i = 0; i < n; i++) {
		reverse32(in[i].bytes, flipped[i]);
		other[i] = (struct sol_poseidon_input){ flipped[i], 32 };
		memcpy(state + 32 * (i + 1), le ? flipped[i] : in[i].bytes, 32);
	}
	check(sol_poseidon_permute(state, n + 1) == 0);
	uint8_t be_hash[32], h_other[32], reversed[32];
	if (le)
		reverse32(h, be_hash);
	else
		memcpy(be_hash, h, 32);
	check(memcmp(state, be_hash, 32) == 0);
	check(sol_poseidon_hash(h_other, other, n, !le) == 0);
	reverse32(h_other, reversed);
	check(memcmp(reversed, h, 32) == 0);
	return 0;
}
