/*
 * Protobuf wire format: see pb.h. Groups (wire types 3 and 4, deprecated and absent from
 * profile.proto) are rejected rather than skipped.
 */
#include "profile/pb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"

void pb_raw(struct pb_buf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (!vec_reserve(b, n)) { /* pb_buf has a VEC's v, n and cap */
		b->oom = true;
		return;
	}
	if (n)
		memcpy(b->v + b->n, p, n);
	b->n += n;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_raw(b, tmp, n);
}

void pb_uint(struct pb_buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pb_buf *b, unsigned field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | PB_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

void pb_sub(struct pb_buf *b, unsigned field, const struct pb_buf *sub)
{
	if (sub->oom)
		b->oom = true;
	pb_bytes(b, field, sub->v, sub->n);
}

void pb_free(struct pb_buf *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

int pb_next(struct cur *c, struct pb_field *f)
{
	if (cur_eof(c))
		return 0;
	f->off = cur_off(c);
	uint64_t tag = cur_uleb(c);
	f->num = (unsigned)(tag >> 3);
	f->wire = tag & 7;
	if (tag >> 3 > 536870911 || !f->num)
		return err_set(-EINVAL, "at 0x%zx: bad protobuf field number", f->off);
	switch (f->wire) {
	case PB_VARINT:
		f->v = cur_uleb(c);
		break;
	case PB_I64:
		f->v = cur_u64(c);
		break;
	case PB_I32:
		f->v = cur_u32(c);
		break;
	case PB_LEN:
		f->v = cur_uleb(c);
		f->sub = cur_sub(c, f->v);
		break;
	default:
		return err_set(-EINVAL, "at 0x%zx: unsupported protobuf wire type %u", f->off,
			       f->wire);
	}
	if (!cur_ok(c))
		return err_set(-EINVAL, "at 0x%zx: protobuf field %u runs past the end of its message",
			       f->off, f->num);
	return 1;
}

int pb_each_varint(const struct pb_field *f, int (*fn)(uint64_t v, void *ctx), void *ctx)
{
	if (f->wire == PB_VARINT)
		return fn(f->v, ctx);
	if (f->wire != PB_LEN)
		return err_set(-EINVAL, "at 0x%zx: field %u should hold integers", f->off, f->num);
	struct cur c = f->sub;
	while (!cur_eof(&c)) {
		uint64_t v = cur_uleb(&c);
		if (!cur_ok(&c))
			return err_set(-EINVAL, "at 0x%zx: truncated packed integers in field %u",
				       f->off, f->num);
		int rc = fn(v, ctx);
		if (rc)
			return rc;
	}
	return 0;
}
