/*
 * curve25519 as Solana's runtime sees it (curve25519-dalek's rules): the on-curve test for
 * program-derived addresses, and the Edwards and Ristretto group operations behind the
 * curve syscalls (curve25519.c says how each is computed). Points and scalars are 32-byte
 * encodings; the operations return 0, or -1 when an input is not a point.
 */
#ifndef TALLY_SOLANA_CRYPTO_CURVE25519_H
#define TALLY_SOLANA_CRYPTO_CURVE25519_H

#include <stdbool.h>
#include <stdint.h>

enum { SOL_CURVE_POINT_BYTES = 32 };

/* Whether 32 bytes decompress as an ed25519 point. */
bool sol_on_curve(const uint8_t bytes[32]);

/* Whether k, little-endian, is below the group order l (Scalar::from_canonical_bytes). */
bool sol_scalar_canonical(const uint8_t k[32]);

/* The Edwards identity (y = 1) and Ristretto's (all zeroes). */
extern const uint8_t sol_edwards_identity[32], sol_ristretto_identity[32];

/* Edwards points: any encoding that decompresses (sol_on_curve); results are canonical. k
 * must be canonical. */
int sol_edwards_add(uint8_t r[32], const uint8_t p[32], const uint8_t q[32]);
int sol_edwards_sub(uint8_t r[32], const uint8_t p[32], const uint8_t q[32]);
int sol_edwards_mul(uint8_t r[32], const uint8_t k[32], const uint8_t p[32]);

/* Ristretto points: canonical encodings only. k must be canonical. */
bool sol_ristretto_valid(const uint8_t p[32]);
int sol_ristretto_add(uint8_t r[32], const uint8_t p[32], const uint8_t q[32]);
int sol_ristretto_sub(uint8_t r[32], const uint8_t p[32], const uint8_t q[32]);
int sol_ristretto_mul(uint8_t r[32], const uint8_t k[32], const uint8_t p[32]);

#endif
