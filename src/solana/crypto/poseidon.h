/*
 * Poseidon over BN254's scalar field as Solana's sol_poseidon computes it (light-poseidon's
 * circom-compatible Bn254X5: x^5 S-box, width t = inputs + 1 for 1 to 12 inputs, 8 full
 * rounds, the partial rounds circomlib uses for t). A width's round constants and MDS
 * matrix are computed at its first use, from the Poseidon paper's Grain LFSR (poseidon.c),
 * into a process-wide table that is never freed.
 */
#ifndef TALLY_SOLANA_CRYPTO_POSEIDON_H
#define TALLY_SOLANA_CRYPTO_POSEIDON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	SOL_POSEIDON_BYTES = 32,     /* an input, a field element, the hash */
	SOL_POSEIDON_MAX_INPUTS = 12,
	SOL_POSEIDON_FULL_ROUNDS = 8,
};

/* One input as the program passed it: exactly 32 bytes are required. */
struct sol_poseidon_input {
	const uint8_t *bytes;
	uint64_t len;
};

/* The hash of n inputs, each 32 bytes big-endian (or little-endian) below the field's modulus,
 * into out in the same byte order. 0, or -EINVAL when n is 0 or over 12 or an input is not
 * 32 bytes, -ERANGE when an input is not below the modulus: the cases where the runtime's
 * hashv fails. */
int sol_poseidon_hash(uint8_t out[SOL_POSEIDON_BYTES], const struct sol_poseidon_input *in,
		      size_t n, bool little_endian);

/* The permutation of width t (2..13) on t big-endian field elements, in place (below the
 * modulus: -ERANGE otherwise; -EINVAL for another width). For tests. */
int sol_poseidon_permute(uint8_t *state, size_t t);

/* The partial rounds of width t (2..13), 0 for another width. */
unsigned sol_poseidon_partial_rounds(size_t t);

/* Width t's i-th round constant (i < (8 + partial rounds) * t), or the MDS matrix's entry
 * (row, col), big-endian into out: 0, or -EINVAL past the table. For tests. */
int sol_poseidon_round_constant(size_t t, size_t i, uint8_t out[SOL_POSEIDON_BYTES]);
int sol_poseidon_mds(size_t t, size_t row, size_t col, uint8_t out[SOL_POSEIDON_BYTES]);

#endif
