/*
 * Symbolizer corpus, second unit of the main program: loops that -O3 vectorizes and unrolls
 * (many addresses sharing few lines), header inlines used from a second unit, and no
 * unlikely paths, so gcc and clang put all of it in .text (it is also built as a relocatable
 * object, where a second code section at address 0 would make addresses ambiguous).
 */
#include "helpers.h"
#include "util.h"

static inline int cell(int i, int j, int n)
{
	return clamp_int(i * n + j, 0, n * n) ^ (int)hash_mix((uint32_t)i, (uint32_t)j);
}

static inline void fill(int *m, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			m[i * n + j] = cell(i, j, n);
}

static inline int trace_of_square(const int *m, int n)
{
	int t = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++)
			t += m[i * n + k] * m[k * n + i];
	return t;
}

int util_matrix(int n)
{
	int m[32 * 32];
	n = clamp_int(n, 1, 32);
	fill(m, n);
	return trace_of_square(m, n);
}

int util_checksum(const char *s, size_t n)
{
	uint32_t h = hash_bytes((const unsigned char *)s, n);
	return scaled((int)(h & 0xffff), (int)(n & 0xff));
}

/* Called by nobody: -ffunction-sections -Wl,--gc-sections drops it, leaving DWARF that
 * describes code at a tombstone address (0 for ld.bfd, lld's own values), which must not
 * capture real addresses. */
int util_unused(int n)
{
	int m[8 * 8];
	fill(m, clamp_int(n, 1, 8));
	return trace_of_square(m, 8) + (int)hash_bytes((const unsigned char *)m, sizeof m);
}
