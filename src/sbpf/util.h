/*
 * Small encodings the Solana runtime uses in logs and fixtures: base58 (public keys),
 * base64 (sol_log_data), UTF-8 validation (sol_log_ rejects invalid strings), hex.
 */
#ifndef TALLY_SBPF_UTIL_H
#define TALLY_SBPF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool sbpf_utf8_valid(const uint8_t *p, size_t len);
/* Writes a NUL-terminated base58 string (44 characters suffice for 32 bytes). */
void sbpf_base58_encode(const uint8_t *p, size_t len, char *out, size_t out_size);
/* Standard base64 with padding; returns the characters written (no NUL). */
size_t sbpf_base64_encode(const uint8_t *p, size_t len, char *out, size_t out_size);

#endif
