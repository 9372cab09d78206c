/*
 * JSON string output for the writers in src/report. Names come from binaries and files we
 * do not control, so they may hold quotes, control characters or bytes that are not UTF-8:
 * the first two are escaped, invalid UTF-8 becomes U+FFFD (JSON must be valid UTF-8).
 */
#ifndef TALLY_REPORT_JSON_H
#define TALLY_REPORT_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes s as a quoted JSON string. */
void rep_json_string(FILE *f, const char *s);
/* Length of the valid UTF-8 sequence at s (1-4), or 0 when the bytes there are not one. */
size_t rep_utf8_len(const unsigned char *s);

#endif
