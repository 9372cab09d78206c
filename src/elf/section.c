/*
 * Section lookup and contents. Contents are returned in place when they can be, and
 * otherwise (compressed, or a relocatable object's debug section that needs relocating)
 * built once into an owned buffer and cached on the section.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bulk.h"
#include "base/err.h"
#include "base/vec.h"
#include "elf/elf.h"
#include "elf/elf_internal.h"

struct elf_buf {
	void *map;
	size_t len; /* of map; 0: map is a block from malloc */
};

static int remember(struct elf_file *f, void *map, size_t len)
{
	pthread_mutex_lock(&f->bufs_lock);
	/* VEC's growth, on the fields elf.h declares for the file */
	struct elf_buf *b = vec_push_raw((void **)&f->bufs, &f->nbufs, &f->capbufs, sizeof(*b));
	if (b)
		*b = (struct elf_buf){ map, len };
	pthread_mutex_unlock(&f->bufs_lock);
	return b ? 0 : -1;
}

void *elf_buf_alloc(struct elf_file *f, size_t size)
{
	/* Debug sections inflate to megabytes: on huge pages, a fifth of the time of
	 * symbolizing a large library otherwise goes to page faults. A smaller one comes from
	 * malloc, where the tally command's heap is on huge pages too (base/bulk.h): ld.so's
	 * seven sections, 940 KB, took 235 faults of a first report as mappings of their own. */
	struct elf_buf b = { NULL, 0 };
	void *p = huge_map(size, &b.map, &b.len);
	if (!p)
		return NULL;
	if (remember(f, b.map, b.len)) {
		huge_unmap(b.map, b.len);
		return NULL;
	}
	return p;
}

int elf_buf_adopt(struct elf_file *f, void *block)
{
	return remember(f, block, 0) ? -ENOMEM : 0;
}

void elf_bufs_free(struct elf_file *f)
{
	for (size_t i = 0; i < f->nsections; i++)
		elf_stream_free(f->sections[i].stream);
	for (size_t i = 0; i < f->nbufs; i++)
		huge_unmap(f->bufs[i].map, f->bufs[i].len);
	free(f->bufs);
	pthread_mutex_destroy(&f->bufs_lock);
}

static bool is_zdebug(const struct elf_section *s)
{
	return !strncmp(s->name, ".zdebug", 7);
}

struct elf_section *elf_section_by_name(struct elf_file *f, const char *name)
{
	for (size_t i = 0; i < f->nsections; i++)
		if (!strcmp(f->sections[i].name, name))
			return &f->sections[i];
	if (!strncmp(name, ".debug", 6)) {
		for (size_t i = 0; i < f->nsections; i++) {
			struct elf_section *s = &f->sections[i];
			if (is_zdebug(s) && !strcmp(s->name + 7, name + 6))
				return s;
		}
	}
	return NULL;
}

static bool needs_relocation(const struct elf_file *f, const struct elf_section *s)
{
	if (f->type != ET_REL || s->flags & SHF_ALLOC)
		return false;
	for (size_t i = 0; i < f->nsections; i++) {
		const struct elf_section *r = &f->sections[i];
		if ((r->type == SHT_REL || r->type == SHT_RELA) && r->info == s->index)
			return true;
	}
	return false;
}

static bool is_compressed(const struct elf_section *s)
{
	return (s->flags & SHF_COMPRESSED) || is_zdebug(s);
}

/* Finishes a section inflated in part. */
static int finish_stream(struct elf_file *f, struct elf_section *s)
{
	size_t total;
	int err = elf_stream_fill(f, s, s->stream, SIZE_MAX, &s->data, &s->data_size, &total);
	elf_stream_free(s->stream);
	s->stream = NULL;
	return err;
}

static int load(struct elf_file *f, struct elf_section *s)
{
	if (s->stream)
		return finish_stream(f, s);
	/* A NOBITS section's offset is never checked against the file: not a place to point. */
	size_t size = s->type == SHT_NOBITS ? 0 : s->size;
	const uint8_t *raw = size ? f->map + s->offset : f->map;
	bool compressed = is_compressed(s);
	bool reloc = needs_relocation(f, s);
	if (!compressed && !reloc) {
		s->data = raw;
		s->data_size = size;
		return 0;
	}
	uint8_t *buf;
	size_t n;
	if (compressed) {
		int err = elf_decompress(f, s, raw, size, &buf, &n);
		if (err)
			return err;
	} else {
		buf = elf_buf_alloc(f, size);
		if (!buf)
			return err_set(-ENOMEM, "%s: out of memory", f->path);
		memcpy(buf, raw, size);
		n = size;
	}
	if (reloc) {
		int err = elf_relocate(f, s, buf, n);
		if (err)
			return err;
	}
	s->data = buf;
	s->data_size = n;
	return 0;
}

int elf_section_data(struct elf_file *f, struct elf_section *s, const uint8_t **data,
		     size_t *size)
{
	if (!s->loaded) {
		int err = load(f, s);
		if (err)
			return err;
		s->loaded = true;
	}
	*data = s->data;
	*size = s->data_size;
	return 0;
}

int elf_section_prefix(struct elf_file *f, struct elf_section *s, size_t want,
		       const uint8_t **data, size_t *avail, size_t *total)
{
	if (s->loaded || s->type == SHT_NOBITS || !is_compressed(s) || needs_relocation(f, s)) {
		int err = elf_section_data(f, s, data, avail);
		*total = *avail;
		return err;
	}
	if (!s->stream) {
		int err = elf_stream_open(f, s, f->map + s->offset, s->size, &s->stream);
		if (err)
			return err;
	}
	int err = elf_stream_fill(f, s, s->stream, want, data, avail, total);
	if (!err && *avail == *total) {
		elf_stream_free(s->stream);
		s->stream = NULL;
		s->data = *data;
		s->data_size = *avail;
		s->loaded = true;
	}
	return err;
}

bool elf_section_stored_at(const struct elf_file *f, const struct elf_section *s,
			   uint64_t *off)
{
	if (s->type == SHT_NOBITS || is_compressed(s) || needs_relocation(f, s))
		return false;
	*off = s->offset;
	return true;
}

int elf_section_data_by_name(struct elf_file *f, const char *name, const uint8_t **data,
			     size_t *size)
{
	struct elf_section *s = elf_section_by_name(f, name);
	if (!s)
		return -ENOENT;
	return elf_section_data(f, s, data, size);
}
