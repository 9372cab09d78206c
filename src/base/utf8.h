/*
 * UTF-8 validation for names we did not write (symbols, profiles, logs). Every writer of a
 * text format (JSON, XML, the terminal) decides what to do with bytes that are not UTF-8;
 * this is where "is it UTF-8" is answered, once, by RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF.
 */
#ifndef TALLY_BASE_UTF8_H
#define TALLY_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 character at s (n bytes available), or 0 when there is none;
 * *cp gets its code point when cp is not NULL. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Whether all n bytes of s are UTF-8 (NUL bytes included: they are ASCII), as Rust's
 * str::from_utf8 decides it. */
bool utf8_valid(const unsigned char *s, size_t n);

/* Length in bytes of the longest prefix of s that is whole characters and at most max_chars
 * characters long (an invalid byte counts as one character); *chars gets the count. */
size_t utf8_prefix(const char *s, size_t max_chars, size_t *chars);

#endif
