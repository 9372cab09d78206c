/*
 * Symbolizer corpus, shared library: exported functions calling static inline chains and
 * header inlines, a hidden noinline helper reached through an always_inline wrapper, an
 * exported function that another exported function calls (through the PLT unless the
 * symbol binds locally), and an unlikely error path that gcc splits into a .cold part.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

__attribute__((visibility("hidden"), noinline)) int lib_hidden_step(int x)
{
	return x * 31 + (x >> 3);
}

static ALWAYS_INLINE int lib_step_twice(int x)
{
	return lib_hidden_step(lib_hidden_step(x));
}

static inline int lib_inner(const int *v, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += scaled(v[i], i + 1);
	return s;
}

static inline int lib_outer(const int *v, int n)
{
	return lib_inner(v, n) + lib_step_twice(n);
}

int lib_sum(const int *v, int n)
{
	if (unlikely(v == NULL || n < 0)) {
		fprintf(stderr, "lib_sum: bad arguments (%p, %d)\n", (const void *)v, n);
		abort();
	}
	return lib_outer(v, n);
}

int lib_hash(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return (int)hash_bytes((const unsigned char *)s, n) + lib_sum((const int *)(const void *)s, (int)(n / sizeof(int)));
}

unsigned lib_gcd(unsigned a, unsigned b)
{
	return b == 0 ? a : lib_gcd(b, a % b);
}
