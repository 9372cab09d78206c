/*
 * Text for the SVG flame graph and the HTML annotation page: escaping and unit words. Names come from
 * binaries and profiles we did not write: they may hold markup characters, control bytes or
 * bytes that are not UTF-8, and XML forbids the last two outright. Invalid bytes become
 * U+FFFD and control characters are dropped, so the document always parses.
 */
#ifndef TALLY_REPORT_FLAMEGRAPH_XML_H
#define TALLY_REPORT_FLAMEGRAPH_XML_H

#include <stddef.h>
#include <stdio.h>

/* Length of the UTF-8 character at s (n bytes available) when it is one XML allows, else 0. */
size_t xml_char_len(const unsigned char *s, size_t n);
/* Writes s escaped for XML/HTML text and attribute values. */
void xml_put(FILE *out, const char *s);
/* Same for at most n bytes of s. */
void xml_putn(FILE *out, const char *s, size_t n);
struct prof;
/* The word for a unit of a metric's weight, as text and script show it: "samples" for
 * samples/count, "CU" for cu/count, else the unit ("nanoseconds"). Only letters, digits and
 * " _-/" survive, so it can be written into a script unescaped. */
void rep_unit_word(const struct prof *p, int metric, char *buf, size_t size);

#endif
