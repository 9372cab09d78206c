/*
 * Compressed sections: SHF_COMPRESSED (ELF gABI: an Elf32/64_Chdr, then zlib or zstd data)
 * and GNU's older .zdebug_* ("ZLIB", 8-byte big-endian size, zlib stream). The declared
 * size is checked against a cap so a hostile header cannot make us allocate terabytes.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>
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

int elf_decompress(struct elf_file *f, const struct elf_section *s, const uint8_t *raw,
		   size_t raw_size, uint8_t **out, size_t *out_size)
{
	struct cur c = cur_make(raw, raw_size, f->big_endian);
	uint32_t type;
	uint64_t size;
	if (s->flags & SHF_COMPRESSED) {
		type = cur_u32(&c);
		if (f->is64) {
			cur_u32(&c); /* ch_reserved */
			size = cur_u64(&c);
			cur_u64(&c);
		} else {
			size = cur_u32(&c);
			cur_u32(&c);
		}
	} else {
		const uint8_t *magic = cur_bytes(&c, 4);
		if (!magic || memcmp(magic, "ZLIB", 4))
			return fail(f, s, "no ZLIB header in .zdebug section");
		c.big_endian = true;
		size = cur_u64(&c);
		type = ELFCOMPRESS_ZLIB;
	}
	if (!cur_ok(&c))
		return fail(f, s, "truncated compression header");
	if (type != ELFCOMPRESS_ZLIB && type != ELFCOMPRESS_ZSTD)
		return fail(f, s, "unknown compression type");
	if (size > MAX_INFLATED || size > raw_size * 2048 + 4096)
		return fail(f, s, "implausible uncompressed size");
	uint8_t *buf = elf_buf_alloc(f, size);
	if (!buf)
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	int err = type == ELFCOMPRESS_ZLIB ? inflate_zlib(c.p, cur_left(&c), buf, size)
					   : inflate_zstd(c.p, cur_left(&c), buf, size);
	if (err)
		return fail(f, s, type == ELFCOMPRESS_ZLIB ? "corrupt zlib data" : "corrupt zstd data");
	*out = buf;
	*out_size = size;
	return 0;
}
