/*
 * BN254 (alt_bn128) as Solana's runtime computes it (solana-bn254 over arkworks): the G1 and
 * G2 group operations, the pairing check and point compression behind sol_alt_bn128_group_op
 * and sol_alt_bn128_compression. Every encoding here is arkworks' little-endian one: a field
 * element is 32 bytes, least significant first; a G1 point is x then y; a G2 point is
 * x.c0, x.c1, y.c0, y.c1 (the syscalls turn EIP-197's big-endian order into this one). All
 * zeroes is the point at infinity. The last field element of an encoding carries arkworks'
 * two flag bits in its top byte: 0x40 the point at infinity, 0x80 "y is the larger root"
 * (read only by decompression); both set is invalid. Each operation returns 0, or -1 when
 * an input is not what it must be (a coordinate not below p, a point off the curve, a G2
 * point outside the prime-order subgroup where arkworks checks it), writing nothing then.
 *
 * The arithmetic is GMP's mpn layer under a tower Fp2 = Fp[u]/(u^2 - beta),
 * Fp6 = Fp2[v]/(v^3 - xi), Fp12 = Fp6[w]/(w^2 - v) whose modulus and non-residues are
 * parameters (struct bn254_tower), so that another curve of embedding degree 12 can reuse it.
 */
#ifndef TALLY_SOLANA_CRYPTO_BN254_H
#define TALLY_SOLANA_CRYPTO_BN254_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	SOL_BN254_FIELD_BYTES = 32,
	SOL_BN254_G1_BYTES = 64,
	SOL_BN254_G2_BYTES = 128,
	SOL_BN254_PAIR_BYTES = SOL_BN254_G1_BYTES + SOL_BN254_G2_BYTES,
	SOL_BN254_SCALAR_BYTES = 32,
	SOL_BN254_G1_COMPRESSED_BYTES = SOL_BN254_FIELD_BYTES,
	SOL_BN254_G2_COMPRESSED_BYTES = 2 * SOL_BN254_FIELD_BYTES,
};

/* p + q; k p for any 256-bit k (not reduced: arkworks' mul_bigint). */
int sol_bn254_g1_add(uint8_t r[SOL_BN254_G1_BYTES], const uint8_t p[SOL_BN254_G1_BYTES],
		 const uint8_t q[SOL_BN254_G1_BYTES]);
int sol_bn254_g1_mul(uint8_t r[SOL_BN254_G1_BYTES], const uint8_t p[SOL_BN254_G1_BYTES],
		 const uint8_t k[SOL_BN254_SCALAR_BYTES]);
/* G2 addition checks only that its inputs are on the curve; multiplication checks the
 * subgroup too. */
int sol_bn254_g2_add(uint8_t r[SOL_BN254_G2_BYTES], const uint8_t p[SOL_BN254_G2_BYTES],
		 const uint8_t q[SOL_BN254_G2_BYTES]);
int sol_bn254_g2_mul(uint8_t r[SOL_BN254_G2_BYTES], const uint8_t p[SOL_BN254_G2_BYTES],
		 const uint8_t k[SOL_BN254_SCALAR_BYTES]);
/* Whether the product of e(P_i, Q_i) over the n (G1, G2) pairs at pairs is one (n = 0: it
 * is); *one is set only on success. */
int sol_bn254_pairing_is_one(const uint8_t *pairs, size_t n, bool *one);
/* Point compression: x with the flags (Validate::No: compression does not check that the
 * point is on the curve, decompression not that a G2 point is in the subgroup). */
int sol_bn254_g1_compress(uint8_t r[SOL_BN254_G1_COMPRESSED_BYTES],
			  const uint8_t p[SOL_BN254_G1_BYTES]);
int sol_bn254_g1_decompress(uint8_t r[SOL_BN254_G1_BYTES],
			    const uint8_t c[SOL_BN254_G1_COMPRESSED_BYTES]);
int sol_bn254_g2_compress(uint8_t r[SOL_BN254_G2_COMPRESSED_BYTES],
			  const uint8_t p[SOL_BN254_G2_BYTES]);
int sol_bn254_g2_decompress(uint8_t r[SOL_BN254_G2_BYTES],
			    const uint8_t c[SOL_BN254_G2_COMPRESSED_BYTES]);

#endif
