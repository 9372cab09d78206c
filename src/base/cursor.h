/*
 * Bounds-checked reading of untrusted bytes. A cursor never reads past its end: a read that
 * would returns 0 and marks the cursor bad, and the mark sticks, so a parser can read a whole
 * record and check cur_ok() once (the style of gimli's readers, without Result everywhere).
 */
#ifndef TALLY_BASE_CURSOR_H
#define TALLY_BASE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cur {
	const uint8_t *base; /* start of the whole buffer: offsets in messages count from here */
	const uint8_t *p;
	const uint8_t *end;
	bool big_endian;
	bool bad;
};

static inline struct cur cur_make(const void *data, size_t size, bool big_endian)
{
	const uint8_t *end = size ? (const uint8_t *)data + size : data; /* NULL + 0 is UB */
	struct cur c = { data, data, end, big_endian, false };
	return c;
}

static inline size_t cur_left(const struct cur *c) { return (size_t)(c->end - c->p); }
static inline size_t cur_off(const struct cur *c) { return (size_t)(c->p - c->base); }
static inline bool cur_ok(const struct cur *c) { return !c->bad; }
static inline bool cur_eof(const struct cur *c) { return c->p >= c->end; }

/* A cursor over the next n bytes of c, which c then skips; bad if fewer remain. */
struct cur cur_sub(struct cur *c, uint64_t n);
/* Moves to base + off (which must lie within [base, end]). */
void cur_seek(struct cur *c, uint64_t off);
void cur_skip_slow(struct cur *c, uint64_t n);
static inline void cur_skip(struct cur *c, uint64_t n)
{
	if (!c->bad && n <= (uint64_t)(c->end - c->p))
		c->p += n;
	else
		cur_skip_slow(c, n);
}
const uint8_t *cur_bytes(struct cur *c, uint64_t n);

uint8_t cur_u8_slow(struct cur *c);
static inline uint8_t cur_u8(struct cur *c)
{
	if (!c->bad && c->p < c->end)
		return *c->p++;
	return cur_u8_slow(c);
}
uint16_t cur_u16(struct cur *c);
uint32_t cur_u24(struct cur *c);
uint32_t cur_u32(struct cur *c);
uint64_t cur_u64(struct cur *c);
/* Reads an unsigned value of 1, 2, 4 or 8 bytes. */
uint64_t cur_uN(struct cur *c, unsigned size);
uint64_t cur_uleb_slow(struct cur *c);
/* Most LEB128 values in DWARF fit one byte: that case is inline. */
static inline uint64_t cur_uleb(struct cur *c)
{
	if (!c->bad && c->p < c->end && !(*c->p & 0x80))
		return *c->p++;
	return cur_uleb_slow(c);
}
int64_t cur_sleb(struct cur *c);
/* A NUL-terminated string; NULL (and bad) when no NUL comes before the end. */
const char *cur_str(struct cur *c);

/* Plain readers of in-bounds memory, for callers that checked the length themselves. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CUR_HOST_BIG false
#else
#define CUR_HOST_BIG true
#endif

static inline uint16_t load_u16(const uint8_t *p, bool big_endian)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return big_endian == CUR_HOST_BIG ? v : __builtin_bswap16(v);
}

static inline uint32_t load_u32(const uint8_t *p, bool big_endian)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return big_endian == CUR_HOST_BIG ? v : __builtin_bswap32(v);
}

static inline uint64_t load_u64(const uint8_t *p, bool big_endian)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return big_endian == CUR_HOST_BIG ? v : __builtin_bswap64(v);
}

static inline void store_u32(uint8_t *p, uint32_t v, bool big_endian)
{
	if (big_endian != CUR_HOST_BIG)
		v = __builtin_bswap32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void store_u64(uint8_t *p, uint64_t v, bool big_endian)
{
	if (big_endian != CUR_HOST_BIG)
		v = __builtin_bswap64(v);
	memcpy(p, &v, sizeof(v));
}

#endif
