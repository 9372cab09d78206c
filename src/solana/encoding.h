/*
 * Small encodings the Solana runtime uses in logs and fixtures: base58 (public keys),
 * base64 (sol_log_data), hex. (UTF-8 validation, which sol_log_ applies, is base/utf8.h.)
 */
#ifndef TALLY_SOLANA_ENCODING_H
#define TALLY_SOLANA_ENCODING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes a NUL-terminated base58 string (44 characters suffice for 32 bytes). */
void sol_base58_encode(const uint8_t *p, size_t len, char *out, size_t out_size);
/* Decodes base58 into exactly out_len bytes; -1 on a bad character or another length. */
int sol_base58_decode(const char *s, uint8_t *out, size_t out_len);
/* Standard base64 with padding; returns the characters written (no NUL). */
size_t sol_base64_encode(const uint8_t *p, size_t len, char *out, size_t out_size);

#endif
