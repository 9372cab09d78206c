/*
 * Symbolizer corpus: inline helpers that live in a header, so their line rows and inline
 * frames name this file while the caller's frame names the .c file that includes it (GNU
 * addr2line reports the wrong file for such code). Included by main.c, util.c and lib.c.
 */
#ifndef CORPUS_HELPERS_H
#define CORPUS_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#define unlikely(x) __builtin_expect(!!(x), 0)

static inline uint32_t hash_mix(uint32_t h, uint32_t v)
{
	h ^= v;
	h *= 0x01000193u;
	h ^= h >> 13;
	return h;
}

static inline uint32_t hash_bytes(const unsigned char *p, size_t n)
{
	uint32_t h = 0x811c9dc5u;
	for (size_t i = 0; i < n; i++)
		h = hash_mix(h, p[i]);
	return h;
}

/* Forced inline even at -O0, so every build has inline frames from a header. */
static ALWAYS_INLINE int clamp_int(int v, int lo, int hi)
{
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return v;
}

static ALWAYS_INLINE int scaled(int v, int k)
{
	return clamp_int(v * k, -1000000, 1000000) + (int)hash_mix((uint32_t)v, (uint32_t)k) % 7;
}

#endif
