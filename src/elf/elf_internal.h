/*
 * Shared between the files of src/elf only.
 */
#ifndef TALLY_ELF_INTERNAL_H
#define TALLY_ELF_INTERNAL_H

#include "elf/elf.h"

/* A zeroed buffer that lives as long as f, or NULL. */
void *elf_buf_alloc(struct elf_file *f, size_t size);
void elf_bufs_free(struct elf_file *f);
/* Makes block, from malloc, f's: freed with f's buffers. 0, or -ENOMEM (block stays the
 * caller's). */
int elf_buf_adopt(struct elf_file *f, void *block);
/* Inflates s (SHF_COMPRESSED or .zdebug_*) into a buffer of f's. */
int elf_decompress(struct elf_file *f, const struct elf_section *s, const uint8_t *raw,
		   size_t raw_size, uint8_t **out, size_t *out_size);
/* The same as a stream, inflated front to back by elf_stream_fill() up to byte want
 * (*have may be more; the whole section once want reaches its size). */
int elf_stream_open(struct elf_file *f, const struct elf_section *s, const uint8_t *raw,
		    size_t raw_size, struct elf_stream **out);
int elf_stream_fill(struct elf_file *f, const struct elf_section *s, struct elf_stream *st,
		    size_t want, const uint8_t **data, size_t *have, size_t *total);
void elf_stream_free(struct elf_stream *st);
/* Applies the relocations that target section s (an ET_REL .debug_* section) to buf. */
int elf_relocate(struct elf_file *f, const struct elf_section *s, uint8_t *buf, size_t size);
/* DIR/.build-id/xx/restSUFFIX for build-id id: 0, -ENOENT for fewer than 2 or more than
 * 64 bytes, -ENAMETOOLONG. perf's cache and GDB's debug directories share the layout. */
int elf_build_id_dir_path(const char *dir, const uint8_t *id, size_t len, const char *suffix,
			  char *buf, size_t size);

#endif
