/*
 * Hexadecimal text: bytes written as lowercase digits (build-ids in paths and profiles),
 * and one digit of either case read back (addresses, build-ids, map and kallsyms lines).
 */
#ifndef TALLY_BASE_HEX_H
#define TALLY_BASE_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes two digits per byte of the n at bytes, then a NUL, to out (room for 2 * n + 1);
 * returns out. */
char *hex_encode(const uint8_t *bytes, size_t n, char *out);

/* The value of one hexadecimal digit (0-9, a-f, A-F), or -1. Inline: address parsers call
 * it per character on the one thread that runs before a batch's lookups. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

#endif
