/*
 * XML text escaping and unit words: see flamegraph_xml.h.
 */
#include "report/flamegraph_xml.h"

#include <stdint.h>
#include <string.h>

#include "base/utf8.h"
#include "profile/profile.h"

size_t xml_char_len(const unsigned char *s, size_t n)
{
	uint32_t cp = 0;
	size_t len = utf8_decode(s, n, &cp);
	/* U+FFFE and U+FFFF are UTF-8 but not XML characters. */
	return cp == 0xfffe || cp == 0xffff ? 0 : len;
}

void xml_putn(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n && s[i]) {
		unsigned char c = s[i];
		size_t len = xml_char_len(s + i, n - i);
		if (!len) {
			fputs("\xef\xbf\xbd", out);
			i++;
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if (c >= 0x20 && c != 0x7f)
				fwrite(s + i, 1, len, out);
			else if (c == '\t')
				fputc(' ', out);
		}
		i += len;
	}
}

void xml_put(FILE *out, const char *s)
{
	xml_putn(out, s, strlen(s));
}

/* "samples" for samples/count, "CU" for cu/count, else the unit ("nanoseconds"). Only
 * plain characters survive: the word is written into the script. */
void rep_unit_word(const struct prof *p, int metric, char *buf, size_t size)
{
	const struct prof_metric *m = prof_metric(p, (size_t)metric);
	const char *type = prof_str(p, m->type), *unit = prof_str(p, m->unit);
	const char *word = !strcmp(unit, "count") || !*unit ? type : unit;
	const char *colon = strchr(word, ':'); /* "after:samples" in a diff model */
	if (colon)
		word = colon + 1;
	if (!strcmp(word, "cu"))
		word = "CU";
	size_t i = 0;
	for (; word[i] && i + 1 < size; i++) {
		char c = word[i];
		buf[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				 c == '_' || c == '-' || c == ' ' || c == '/'
			 ? c
			 : '_';
	}
	buf[i] = 0;
	if (!i)
		snprintf(buf, size, "units");
}
