/*
 * XML text escaping with UTF-8 validation, and unit words: see flamegraph_xml.h. The validation follows
 * RFC 3629 (no overlongs, no surrogates, nothing above U+10FFFF).
 */
#include "report/flamegraph_xml.h"

#include <stdint.h>
#include <string.h>

#include "profile/profile.h"

size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t min, cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* U+FFFE and U+FFFF are not XML characters either. */
	if (cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

void xml_putn(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n && s[i]) {
		unsigned char c = s[i];
		size_t len = utf8_seq(s + i, n - i);
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

size_t utf8_prefix(const char *str, size_t max_chars, size_t *chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, k = 0;
	while (i < n && k < max_chars) {
		size_t len = utf8_seq(s + i, n - i);
		i += len ? len : 1;
		k++;
	}
	*chars = k;
	return i;
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
