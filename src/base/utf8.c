/*
 * UTF-8 validation: see utf8.h.
 */
#include "base/utf8.h"

#include <string.h>

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t min, v;
	if (c < 0x80)
		len = 1, min = 0, v = c;
	else if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, v = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	if (cp)
		*cp = v;
	return len;
}

bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0, len; i < n; i += len)
		if (!(len = utf8_decode(s + i, n - i, NULL)))
			return false;
	return true;
}

size_t utf8_prefix(const char *str, size_t max_chars, size_t *chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, k = 0;
	while (i < n && k < max_chars) {
		size_t len = utf8_decode(s + i, n - i, NULL);
		i += len ? len : 1;
		k++;
	}
	*chars = k;
	return i;
}
