/*
 * Writing JSON strings: escaping, and bytes that are not UTF-8 replaced by U+FFFD so that
 * names from hostile files never make a broken document.
 */
#ifndef TALLY_BASE_JSON_H
#define TALLY_BASE_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes s as a JSON string with its quotes (control characters and DEL as \u escapes),
 * or null when s is NULL. */
void json_print_string(FILE *out, const char *s);
/* The same for len bytes, which may hold NULs (written as \u0000). */
void json_print_bytes(FILE *out, const char *s, size_t len);

#endif
