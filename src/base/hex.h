/*
 * Bytes as lowercase hexadecimal text (build-ids in paths and profiles).
 */
#ifndef TALLY_BASE_HEX_H
#define TALLY_BASE_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes two digits per byte of the n at bytes, then a NUL, to out (room for 2 * n + 1);
 * returns out. */
char *hex_encode(const uint8_t *bytes, size_t n, char *out);

#endif
