/*
 * Bounds-checked cursor: see cursor.h. Every read goes through need(), which is the only
 * place that compares against the end.
 */
#include "base/cursor.h"


static bool need(struct cur *c, uint64_t n)
{
	if (c->bad || n > cur_left(c)) {
		c->bad = true;
		return false;
	}
	return true;
}

struct cur cur_sub(struct cur *c, uint64_t n)
{
	struct cur s = *c;
	if (!need(c, n)) {
		s.bad = true;
		s.end = s.p;
		return s;
	}
	s.end = c->p + n;
	c->p += n;
	return s;
}

void cur_seek(struct cur *c, uint64_t off)
{
	if (off > (uint64_t)(c->end - c->base)) {
		c->bad = true;
		return;
	}
	c->p = c->base + off;
}

void cur_skip_slow(struct cur *c, uint64_t n)
{
	if (need(c, n))
		c->p += n;
}

const uint8_t *cur_bytes(struct cur *c, uint64_t n)
{
	const uint8_t *p = c->p;
	if (!need(c, n))
		return NULL;
	c->p += n;
	return p;
}

uint8_t cur_u8_slow(struct cur *c)
{
	return need(c, 1) ? *c->p++ : 0;
}

uint16_t cur_u16(struct cur *c)
{
	if (!need(c, 2))
		return 0;
	uint16_t v = load_u16(c->p, c->big_endian);
	c->p += 2;
	return v;
}

uint32_t cur_u24(struct cur *c)
{
	if (!need(c, 3))
		return 0;
	const uint8_t *p = c->p;
	c->p += 3;
	if (c->big_endian)
		return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
	return (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

uint32_t cur_u32(struct cur *c)
{
	if (!need(c, 4))
		return 0;
	uint32_t v = load_u32(c->p, c->big_endian);
	c->p += 4;
	return v;
}

uint64_t cur_u64(struct cur *c)
{
	if (!need(c, 8))
		return 0;
	uint64_t v = load_u64(c->p, c->big_endian);
	c->p += 8;
	return v;
}

uint64_t cur_uN(struct cur *c, unsigned size)
{
	switch (size) {
	case 1: return cur_u8(c);
	case 2: return cur_u16(c);
	case 4: return cur_u32(c);
	case 8: return cur_u64(c);
	}
	c->bad = true;
	return 0;
}

uint64_t cur_uleb_slow(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (!need(c, 1))
			return 0;
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

int64_t cur_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (!need(c, 1))
			return 0;
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

const char *cur_str(struct cur *c)
{
	if (c->bad)
		return NULL;
	const uint8_t *nul = memchr(c->p, 0, cur_left(c));
	if (!nul) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}
