/*
 * JSON string output: see json.h.
 */
#include "base/json.h"

#include <string.h>

#include "base/utf8.h"

void json_print_string(FILE *out, const char *s)
{
	if (s)
		json_print_bytes(out, s, strlen(s));
	else
		fputs("null", out);
}

/* Printable ASCII but the quote and the backslash: written as it is. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void json_print_bytes(FILE *out, const char *s, size_t len)
{
	putc('"', out);
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	while (p < end) {
		/* Runs of plain bytes in one write: putc per byte locks the stream each time,
		 * and took a third of tally symbolize --json's time. */
		const unsigned char *run = p;
		while (p < end && plain(*p))
			p++;
		if (p > run)
			fwrite(run, 1, (size_t)(p - run), out);
		if (p == end)
			break;
		size_t n = utf8_decode(p, (size_t)(end - p), NULL);
		if (n == 0) {
			fputs("\\ufffd", out);
			p++;
		} else if (n > 1) {
			fwrite(p, 1, n, out);
			p += n;
		} else if (*p == '"' || *p == '\\') {
			putc('\\', out);
			putc(*p++, out);
		} else { /* a control character: the plain ones went in the run */
			fprintf(out, "\\u%04x", *p++);
		}
	}
	putc('"', out);
}
