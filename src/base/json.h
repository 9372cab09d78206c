/*
 * Writing JSON strings: escaping, and bytes that are not UTF-8 replaced by U+FFFD so that
 * names from hostile files never make a broken document.
 */
#ifndef TALLY_BASE_JSON_H
#define TALLY_BASE_JSON_H

#include <stdio.h>

/* Writes s as a JSON string with its quotes (control characters and DEL as \u escapes),
 * or null when s is NULL. */
void json_print_string(FILE *out, const char *s);

#endif
