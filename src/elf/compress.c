/*
 * Compressed sections: SHF_COMPRESSED (ELF gABI: an Elf32/64_Chdr, then zlib or zstd data)
 * and GNU's older .zdebug_* ("ZLIB", 8-byte big-endian size, zlib stream). The declared
 * size is checked against a cap so a hostile header cannot make us allocate terabytes.
 * A whole section is inflated in one call (libdeflate: fastest for that); a section whose
 * front alone is wanted is inflated as a stream (ISA-L's inflate, as fast and resumable),
 * up to where it is needed, and later on to its end.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zstd.h>

#include "base/cursor.h"
#include "base/err.h"
#include "elf/elf_internal.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* No real debug section comes near this; a larger claim is corruption. */
#define MAX_INFLATED ((uint64_t)4 << 30)

static int fail(const struct elf_file *f, const struct elf_section *s, const char *what)
{
	return err_set(-EINVAL, "%s: section %s at 0x%llx: %s", f->path, s->name,
		       (unsigned long long)s->offset, what);
}

/* libdeflate rather than zlib: it decompresses whole buffers of known size about twice as
 * fast, and debug sections are inflated whole. */
static int inflate_zlib(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
	struct libdeflate_decompressor *z = libdeflate_alloc_decompressor();
	if (!z)
		return -ENOMEM;
	size_t got = 0;
	enum libdeflate_result r = libdeflate_zlib_decompress(z, in, in_size, out, out_size, &got);
	libdeflate_free_decompressor(z);
	return r == LIBDEFLATE_SUCCESS && got == out_size ? 0 : -EINVAL;
}

static int inflate_zstd(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
	size_t got = ZSTD_decompress(out, out_size, in, in_size);
	return !ZSTD_isError(got) && got == out_size ? 0 : -EINVAL;
}

struct chdr {
	uint32_t type;
	uint64_t size;
	const uint8_t *data; /* the compressed stream */
	size_t data_size;
};

static int read_chdr(struct elf_file *f, const struct elf_section *s, const uint8_t *raw,
		     size_t raw_size, struct chdr *h)
{
	struct cur c = cur_make(raw, raw_size, f->big_endian);
	if (s->flags & SHF_COMPRESSED) {
		h->type = cur_u32(&c);
		if (f->is64) {
			cur_u32(&c); /* ch_reserved */
			h->size = cur_u64(&c);
			cur_u64(&c);
		} else {
			h->size = cur_u32(&c);
			cur_u32(&c);
		}
	} else {
		const uint8_t *magic = cur_bytes(&c, 4);
		if (!magic || memcmp(magic, "ZLIB", 4))
			return fail(f, s, "no ZLIB header in .zdebug section");
		c.big_endian = true;
		h->size = cur_u64(&c);
		h->type = ELFCOMPRESS_ZLIB;
	}
	if (!cur_ok(&c))
		return fail(f, s, "truncated compression header");
	if (h->type != ELFCOMPRESS_ZLIB && h->type != ELFCOMPRESS_ZSTD)
		return fail(f, s, "unknown compression type");
	if (h->size > MAX_INFLATED || h->size > raw_size * 2048 + 4096)
		return fail(f, s, "implausible uncompressed size");
	h->data = c.p;
	h->data_size = cur_left(&c);
	return 0;
}

static const char *corrupt(uint32_t type)
{
	return type == ELFCOMPRESS_ZLIB ? "corrupt zlib data" : "corrupt zstd data";
}

int elf_decompress(struct elf_file *f, const struct elf_section *s, const uint8_t *raw,
		   size_t raw_size, uint8_t **out, size_t *out_size)
{
	struct chdr h;
	int err = read_chdr(f, s, raw, raw_size, &h);
	if (err)
		return err;
	uint8_t *buf = elf_buf_alloc(f, h.size);
	if (!buf)
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	err = h.type == ELFCOMPRESS_ZLIB ? inflate_zlib(h.data, h.data_size, buf, h.size)
					 : inflate_zstd(h.data, h.data_size, buf, h.size);
	if (err)
		return fail(f, s, corrupt(h.type));
	*out = buf;
	*out_size = h.size;
	return 0;
}

struct elf_stream {
	struct chdr h;
	uint8_t *buf;   /* h.size bytes, the first have of them inflated */
	size_t have;
	struct inflate_state *zlib;
	ZSTD_DStream *zstd;
	ZSTD_inBuffer in;
};

int elf_stream_open(struct elf_file *f, const struct elf_section *s, const uint8_t *raw,
		    size_t raw_size, struct elf_stream **out)
{
	struct elf_stream *st = calloc(1, sizeof(*st));
	if (!st)
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	int err = read_chdr(f, s, raw, raw_size, &st->h);
	if (err) {
		free(st);
		return err;
	}
	st->buf = elf_buf_alloc(f, st->h.size);
	if (st->h.type == ELFCOMPRESS_ZLIB && (st->zlib = malloc(sizeof(*st->zlib)))) {
		isal_inflate_init(st->zlib);
		st->zlib->crc_flag = ISAL_ZLIB; /* parses the header, checks the adler32 */
		st->zlib->next_in = (uint8_t *)st->h.data;
		st->zlib->avail_in = (uint32_t)st->h.data_size;
	} else if (st->h.type == ELFCOMPRESS_ZSTD && (st->zstd = ZSTD_createDStream())) {
		ZSTD_initDStream(st->zstd);
		st->in = (ZSTD_inBuffer){ st->h.data, st->h.data_size, 0 };
	}
	if (st->h.data_size > UINT32_MAX) { /* isa-l counts input in 32 bits */
		elf_stream_free(st);
		return fail(f, s, "compressed section too large");
	}
	if (!st->buf || (!st->zlib && !st->zstd)) {
		elf_stream_free(st);
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	}
	*out = st;
	return 0;
}

/* Inflates up to byte want (or the end). */
int elf_stream_fill(struct elf_file *f, const struct elf_section *s, struct elf_stream *st,
		    size_t want, const uint8_t **data, size_t *have, size_t *total)
{
	if (want > st->h.size)
		want = st->h.size;
	bool bad = false;
	while (st->have < want && !bad) {
		size_t before = st->have;
		if (st->zlib) {
			st->zlib->next_out = st->buf + st->have;
			st->zlib->avail_out = (uint32_t)(want - st->have < UINT32_MAX ? want - st->have
										: UINT32_MAX);
			int r = isal_inflate(st->zlib);
			st->have = st->zlib->total_out;
			bad = r != ISAL_DECOMP_OK;
		} else {
			ZSTD_outBuffer o = { st->buf, want, st->have };
			size_t r = ZSTD_decompressStream(st->zstd, &o, &st->in);
			st->have = o.pos;
			bad = ZSTD_isError(r);
		}
		bad |= st->have == before; /* no progress: the stream ended early */
	}
	if (!bad && st->have == st->h.size && st->zlib &&
	    st->zlib->block_state != ISAL_BLOCK_FINISH) {
		st->zlib->avail_out = 0; /* all output is there: the trailer and its checksum */
		bad = isal_inflate(st->zlib) != ISAL_DECOMP_OK ||
		      st->zlib->block_state != ISAL_BLOCK_FINISH;
	}
	if (bad)
		return fail(f, s, corrupt(st->h.type));
	*data = st->buf;
	*have = st->have;
	*total = st->h.size;
	return 0;
}

void elf_stream_free(struct elf_stream *st)
{
	if (!st)
		return;
	free(st->zlib);
	ZSTD_freeDStream(st->zstd);
	free(st);
}
