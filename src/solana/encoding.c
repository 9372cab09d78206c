/*
 * Encodings for logs and fixtures: see encoding.h.
 */
#include "solana/encoding.h"

#include <string.h>

void sol_base58_encode(const uint8_t *p, size_t len, char *out, size_t out_size)
{
	static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
	uint8_t digits[128] = { 0 };
	size_t ndigits = 0, zeros = 0;
	if (len > 90)
		len = 90;
	while (zeros < len && !p[zeros])
		zeros++;
	for (size_t i = zeros; i < len; i++) {
		unsigned carry = p[i];
		for (size_t j = 0; j < ndigits; j++) {
			carry += (unsigned)digits[j] << 8;
			digits[j] = (uint8_t)(carry % 58);
			carry /= 58;
		}
		while (carry) {
			digits[ndigits++] = (uint8_t)(carry % 58);
			carry /= 58;
		}
	}
	size_t o = 0;
	for (size_t i = 0; i < zeros && o + 1 < out_size; i++)
		out[o++] = '1';
	for (size_t i = ndigits; i > 0 && o + 1 < out_size; i--)
		out[o++] = alphabet[digits[i - 1]];
	if (out_size)
		out[o] = 0;
}

int sol_base58_decode(const char *s, uint8_t *out, size_t out_len)
{
	static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
	uint8_t buf[128] = { 0 };
	size_t n = 0, zeros = 0;
	while (s[zeros] == '1')
		zeros++;
	for (const char *c = s + zeros; *c; c++) {
		const char *at = strchr(alphabet, *c);
		if (!at || !*c)
			return -1;
		unsigned carry = (unsigned)(at - alphabet);
		for (size_t j = 0; j < n; j++) {
			carry += (unsigned)buf[j] * 58;
			buf[j] = (uint8_t)carry;
			carry >>= 8;
		}
		while (carry) {
			if (n == sizeof(buf))
				return -1;
			buf[n++] = (uint8_t)carry;
			carry >>= 8;
		}
	}
	if (zeros + n != out_len)
		return -1;
	memset(out, 0, zeros);
	for (size_t i = 0; i < n; i++)
		out[zeros + i] = buf[n - 1 - i];
	return 0;
}

size_t sol_base64_encode(const uint8_t *p, size_t len, char *out, size_t out_size)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < len && o + 4 <= out_size; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		out[o++] = tbl[v >> 18 & 63];
		out[o++] = tbl[v >> 12 & 63];
		out[o++] = i + 1 < len ? tbl[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? tbl[v & 63] : '=';
	}
	return o;
}
