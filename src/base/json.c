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

void json_print_bytes(FILE *out, const char *s, size_t len)
{
	putc('"', out);
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	while (p < end) {
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
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
		} else {
			putc(*p++, out);
		}
	}
	putc('"', out);
}
