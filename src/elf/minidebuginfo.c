/*
 * MiniDebugInfo (GDB's name, Fedora's practice): a stripped file's .gnu_debugdata holds an
 * xz-compressed ELF file whose .symtab has the function symbols .dynsym lacks. It is
 * inflated (liblzma) into a buffer the outer file owns and opened from there; the outer
 * file's symbol readers (symbols.c) then take its .symtab as their own.
 */
#include <elf.h>
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "elf/elf.h"
#include "elf/elf_internal.h"

/* The inner file holds symbols of the outer file's code: a symbol and its name take a few
 * dozen bytes, a function at least a few, so a real one is a fraction of the outer file
 * (GDB's recipe on build/tally: 3,555 functions in 155 KB, beside 3.3 MB stripped; on the
 * test's small program 3.6 KB beside 15 KB). Eight times the outer file, plus a megabyte
 * for tiny files, leaves room for long C++ names and stops an xz bomb (a few KB of xz
 * inflate to gigabytes of zeros) before it costs memory; the absolute cap stops it on a
 * huge file. */
#define MAX_INFLATED_ABS ((uint64_t)1 << 30)
static uint64_t max_inflated(const struct elf_file *f)
{
	uint64_t cap = (uint64_t)f->size * 8 + ((uint64_t)1 << 20);
	return cap < MAX_INFLATED_ABS ? cap : MAX_INFLATED_ABS;
}

/* What the decoder may allocate: xz -9, the largest preset, needs 65 MiB to decompress
 * (its 64 MiB dictionary: xz(1)'s table of presets); a stream asking for more than twice
 * that is not MiniDebugInfo. */
#define DECODER_MEMLIMIT ((uint64_t)128 << 20)

static int fail(const struct elf_file *f, const char *what)
{
	return err_set(-EINVAL, "%s: .gnu_debugdata: %s", f->path, what);
}

static const char *lzma_what(lzma_ret r)
{
	switch (r) {
	case LZMA_FORMAT_ERROR:
		return "not xz data";
	case LZMA_OPTIONS_ERROR:
		return "unsupported xz options";
	case LZMA_DATA_ERROR:
		return "corrupt xz data";
	case LZMA_BUF_ERROR:
		return "truncated xz data";
	case LZMA_MEMLIMIT_ERROR:
		return "xz stream needs too much memory to decode";
	default:
		return "cannot decode xz data";
	}
}

/* Inflates in[0..n) into a malloc'd block of at most cap bytes. */
static int unxz(const struct elf_file *f, const uint8_t *in, size_t n, uint64_t cap,
		uint8_t **out, size_t *out_size)
{
	lzma_stream z = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&z, DECODER_MEMLIMIT, 0) != LZMA_OK)
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	size_t room = (uint64_t)n * 4 + 4096 < cap ? n * 4 + 4096 : (size_t)cap;
	uint8_t *buf = NULL;
	int err = 0;
	z.next_in = in;
	z.avail_in = n;
	for (;;) {
		if (z.total_out == room) {
			if (room >= cap) {
				err = fail(f, "inflates past the size a symbol table could have");
				break;
			}
			room = room * 2 < cap ? room * 2 : (size_t)cap;
		}
		if (!buf || z.avail_out == 0) {
			uint8_t *grown = realloc(buf, room ? room : 1);
			if (!grown) {
				err = err_set(-ENOMEM, "%s: out of memory", f->path);
				break;
			}
			buf = grown;
			z.next_out = buf + z.total_out;
			z.avail_out = room - z.total_out;
		}
		lzma_ret r = lzma_code(&z, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r == LZMA_MEM_ERROR) {
			err = err_set(-ENOMEM, "%s: out of memory", f->path);
			break;
		}
		if (r != LZMA_OK) {
			err = fail(f, lzma_what(r));
			break;
		}
	}
	size_t got = z.total_out;
	lzma_end(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_size = got;
	return 0;
}

int elf_attach_minidebuginfo(struct elf_file *f)
{
	if (f->minidebug)
		return 0;
	for (size_t i = 0; i < f->nsections; i++)
		if (f->sections[i].type == SHT_SYMTAB)
			return -ENOENT;
	struct elf_section *s = elf_section_by_name(f, ".gnu_debugdata");
	if (!s || s->type == SHT_NOBITS || !s->size)
		return -ENOENT;
	const uint8_t *raw = f->map + s->offset; /* within the file: checked at open */
	uint8_t *buf = NULL;
	size_t size = 0;
	int err = unxz(f, raw, s->size, max_inflated(f), &buf, &size);
	if (err)
		return err;
	if (elf_buf_adopt(f, buf)) {
		free(buf);
		return err_set(-ENOMEM, "%s: out of memory", f->path);
	}
	char name[4096];
	snprintf(name, sizeof(name), "%s: .gnu_debugdata", f->path);
	struct elf_file *inner;
	err = elf_open_mem(name, buf, size, &inner);
	if (err)
		return err;
	if (inner->is64 != f->is64 || inner->big_endian != f->big_endian ||
	    inner->machine != f->machine) {
		elf_close(inner);
		return fail(f, "holds an ELF file for another machine");
	}
	f->minidebug = inner;
	return 0;
}
