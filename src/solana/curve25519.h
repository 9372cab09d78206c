/*
 * Solana's on-curve test for program-derived addresses (curve25519.c says how).
 */
#ifndef TALLY_SOLANA_CURVE25519_H
#define TALLY_SOLANA_CURVE25519_H

#include <stdbool.h>
#include <stdint.h>

/* Whether 32 bytes decompress as an ed25519 point. */
bool sol_on_curve(const uint8_t bytes[32]);

#endif
