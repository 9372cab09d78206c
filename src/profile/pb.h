/*
 * The protobuf wire format, just what profile.proto needs: varints, length-delimited fields
 * and packed repeated scalars. Hand-written rather than protobuf-c: profile.proto is 14
 * small messages, protobuf-c would add generated code and a library for them, and a reader
 * of hostile bytes has to go through our bounds-checked cursor anyway. Used by the pprof
 * reader here and the pprof writer in src/report.
 */
#ifndef TALLY_PROFILE_PB_H
#define TALLY_PROFILE_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cursor.h"

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* A growing output buffer; after a failed allocation it stays failed (oom) and ignores
 * writes, so an encoder checks once at the end. */
struct pb_buf {
	uint8_t *v;
	size_t n, cap;
	bool oom;
};

void pb_raw(struct pb_buf *b, const void *p, size_t n);
void pb_varint(struct pb_buf *b, uint64_t v);
/* Varint field; proto3 leaves zero values out, and so do these. */
void pb_uint(struct pb_buf *b, unsigned field, uint64_t v);
void pb_bytes(struct pb_buf *b, unsigned field, const void *p, size_t n);
/* A nested message (or packed array) held in sub. */
void pb_sub(struct pb_buf *b, unsigned field, const struct pb_buf *sub);
void pb_free(struct pb_buf *b);

struct pb_field {
	unsigned num;
	unsigned wire;
	uint64_t v;	/* PB_VARINT, PB_I64, PB_I32 */
	struct cur sub; /* PB_LEN: the payload */
	size_t off;	/* offset of the field's tag */
};

/* Reads the next field: 1 when one was read, 0 at the end, negative (message set, naming
 * what and the offset) on malformed input. */
int pb_next(struct cur *c, struct pb_field *f);
/* Values of a repeated scalar field, which may be packed (PB_LEN) or not (one PB_VARINT):
 * calls fn for each; stops at its first non-zero return. */
int pb_each_varint(const struct pb_field *f, int (*fn)(uint64_t v, void *ctx), void *ctx);

#endif
