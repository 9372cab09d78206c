/*
 * The debug cache: copies of separate debug files with their compressed sections stored
 * decompressed, under DIR/.build-id/xx/rest.debug, the layout of /usr/lib/debug.
 *
 * Debian's -dbg packages (and debuginfod servers) ship zlib-compressed DWARF. Symbolizing
 * one libc address means inflating megabytes of libc6-dbg's .debug_info first, and that
 * was most of the time of a whole report. A decompressed copy, written once, turns it into
 * reads from the page cache. The copy is an ordinary ELF debug file that gdb and readelf
 * read like the original: nothing of tally's own is stored. Where it lives is taken from
 * the environment, as debuginfod's client does: $TALLY_CACHE/debug, else
 * $XDG_CACHE_HOME/tally/debug, else $HOME/.cache/tally/debug; TALLY_CACHE=off (or empty)
 * turns the cache off. The folder above debug/ is tally's cache as a whole (debuginfod.c
 * keeps its downloads there too).
 *
 * Layout of a copy: the file's headers and allocated sections keep their offsets (program
 * headers point at them), every other section follows them, decompressed when it was
 * compressed, and a new section header table comes last. It is written to an unnamed file
 * (O_TMPFILE) linked into place, else to a temporary file renamed into place, so a reader
 * sees a whole copy or none.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/cursor.h"
#include "base/file.h"
#include "elf/elf.h"

static char cache_root[PATH_MAX], cache_dir[PATH_MAX];
static pthread_once_t cache_dir_once = PTHREAD_ONCE_INIT;

static void find_cache_dir(void)
{
	const char *t = getenv("TALLY_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n = 0;
	if (t) {
		if (*t && strcmp(t, "off"))
			n = snprintf(cache_root, sizeof(cache_root), "%s", t);
	} else if (xdg && *xdg == '/') {
		n = snprintf(cache_root, sizeof(cache_root), "%s/tally", xdg);
	} else if (home && *home == '/') {
		n = snprintf(cache_root, sizeof(cache_root), "%s/.cache/tally", home);
	}
	if (n < 0 || (size_t)n >= sizeof(cache_root))
		cache_root[0] = 0;
	n = snprintf(cache_dir, sizeof(cache_dir), "%s/debug", cache_root);
	if (!cache_root[0] || n < 0 || (size_t)n >= sizeof(cache_dir))
		cache_dir[0] = 0;
}

const char *elf_cache_root(void)
{
	pthread_once(&cache_dir_once, find_cache_dir);
	return cache_root[0] ? cache_root : NULL;
}

const char *elf_debug_cache_dir(void)
{
	pthread_once(&cache_dir_once, find_cache_dir);
	return cache_dir[0] ? cache_dir : NULL;
}

bool elf_has_compressed_sections(const struct elf_file *f)
{
	for (size_t i = 1; i < f->nsections; i++) { /* entry 0 is no section */
		const struct elf_section *s = &f->sections[i];
		if (s->flags & SHF_COMPRESSED && s->type != SHT_NOBITS)
			return true;
	}
	return false;
}

/* Field offsets of what a copy changes in a section header, and their width. */
struct shdr_layout {
	unsigned flags, offset, size, align, width;
};
static const struct shdr_layout shdr64 = { 8, 24, 32, 48, 8 };
static const struct shdr_layout shdr32 = { 8, 16, 20, 32, 4 };

static void put(uint8_t *p, uint64_t v, unsigned width, bool big_endian)
{
	for (unsigned i = 0; i < width; i++)
		p[big_endian ? width - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* One section of the copy: where it goes and what it holds. */
struct piece {
	bool moved;
	const uint8_t *data;
	uint64_t size, offset, align;
};

struct copy {
	struct elf_file *f;
	uint64_t shoff;      /* of the original table */
	unsigned shentsize;
	uint64_t head;       /* bytes kept at their offsets */
	struct piece *pieces; /* per section */
	uint64_t new_shoff;
};

static int read_header(struct copy *c)
{
	struct elf_file *f = c->f;
	struct cur h = cur_make(f->map, f->size, f->big_endian);
	cur_seek(&h, f->is64 ? 0x20 : 0x1c);
	uint64_t phoff = f->is64 ? cur_u64(&h) : cur_u32(&h);
	c->shoff = f->is64 ? cur_u64(&h) : cur_u32(&h);
	cur_seek(&h, f->is64 ? 0x36 : 0x2a);
	uint16_t phentsize = cur_u16(&h), phnum = cur_u16(&h);
	c->shentsize = cur_u16(&h);
	if (!cur_ok(&h) || c->shentsize < (f->is64 ? 64 : 40) ||
	    c->shoff + (uint64_t)f->nsections * c->shentsize > f->size)
		return -EINVAL;
	c->head = f->is64 ? 64 : 52;
	if (phnum && phoff + (uint64_t)phnum * phentsize <= f->size &&
	    phoff + (uint64_t)phnum * phentsize > c->head)
		c->head = phoff + (uint64_t)phnum * phentsize;
	for (size_t i = 1; i < f->nsections; i++) {
		const struct elf_section *s = &f->sections[i];
		if (s->flags & SHF_ALLOC && s->type != SHT_NOBITS && s->offset + s->size > c->head)
			c->head = s->offset + s->size;
	}
	return c->head <= f->size ? 0 : -EINVAL;
}

/* The compressed section's own alignment, from its Chdr (the section header's is the
 * header's). */
static uint64_t inflated_align(const struct elf_file *f, const struct elf_section *s)
{
	struct cur h = cur_make(f->map + s->offset, s->size, f->big_endian);
	cur_seek(&h, f->is64 ? 16 : 8);
	uint64_t a = f->is64 ? cur_u64(&h) : cur_u32(&h);
	return cur_ok(&h) ? a : 1;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* Where every section not kept in place goes, with its (decompressed) contents. */
static int lay_out(struct copy *c)
{
	struct elf_file *f = c->f;
	uint64_t at = c->head;
	/* Entry 0 is no section, but readers check its bounds like any other's: kept as it
	 * is, they must hold in the copy too (a fuzzer's find). */
	const struct elf_section *zero = &f->sections[0];
	if (zero->type != SHT_NOBITS && zero->offset + zero->size > c->head)
		return -EINVAL;
	for (size_t i = 1; i < f->nsections; i++) {
		struct elf_section *s = &f->sections[i];
		struct piece *p = &c->pieces[i];
		if (s->type == SHT_NOBITS)
			continue;
		bool compressed = s->flags & SHF_COMPRESSED;
		/* The gABI rules out compressing allocated sections; decompressed, a .zdebug_*
		 * section would be read as GNU's compressed kind. */
		if (compressed && (s->flags & SHF_ALLOC || !strncmp(s->name, ".zdebug", 7)))
			return -EINVAL;
		if (s->flags & SHF_ALLOC)
			continue;
		p->moved = true;
		if (compressed) {
			p->align = inflated_align(f, s);
			size_t n;
			int err = elf_section_data(f, s, &p->data, &n);
			if (err)
				return err;
			p->size = n;
		} else { /* in the file: checked at open */
			p->align = s->addralign;
			p->data = f->map + s->offset;
			p->size = s->size;
		}
		if (p->align > 4096 || (p->align & (p->align - 1)))
			return -EINVAL;
		p->offset = at = align_up(at, p->align);
		at += p->size;
	}
	c->new_shoff = align_up(at, 8);
	return 0;
}

/* The original section header table with each moved section's fields rewritten. */
static uint8_t *section_headers(const struct copy *c)
{
	const struct elf_file *f = c->f;
	size_t len = f->nsections * c->shentsize;
	uint8_t *t = malloc(len ? len : 1);
	if (!t)
		return NULL;
	memcpy(t, f->map + c->shoff, len);
	const struct shdr_layout *l = f->is64 ? &shdr64 : &shdr32;
	for (size_t i = 1; i < f->nsections; i++) {
		const struct piece *p = &c->pieces[i];
		const struct elf_section *s = &f->sections[i];
		if (!p->moved)
			continue;
		uint8_t *h = t + i * c->shentsize;
		put(h + l->flags, s->flags & ~(uint64_t)SHF_COMPRESSED, l->width, f->big_endian);
		put(h + l->offset, p->offset, l->width, f->big_endian);
		put(h + l->size, p->size, l->width, f->big_endian);
		put(h + l->align, p->align, l->width, f->big_endian);
	}
	return t;
}

static int write_all(int fd, const void *p, uint64_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = write(fd, b, n < (1u << 30) ? n : (1u << 30));
		if (w <= 0)
			return -EIO;
		b += w;
		n -= (uint64_t)w;
	}
	return 0;
}

static int pad_to(int fd, uint64_t *at, uint64_t to)
{
	static const uint8_t zeros[4096];
	while (*at < to) {
		uint64_t n = to - *at < sizeof(zeros) ? to - *at : sizeof(zeros);
		if (write_all(fd, zeros, n))
			return -EIO;
		*at += n;
	}
	return 0;
}

static int write_copy(const struct copy *c, int fd)
{
	const struct elf_file *f = c->f;
	uint8_t *shdrs = section_headers(c);
	if (!shdrs)
		return -ENOMEM;
	uint8_t ehdr[64];
	memcpy(ehdr, f->map, f->is64 ? 64 : 52);
	put(ehdr + (f->is64 ? 0x28 : 0x20), c->new_shoff, f->is64 ? 8 : 4, f->big_endian);
	uint64_t ehsize = f->is64 ? 64 : 52, at = c->head;
	int err = write_all(fd, ehdr, ehsize) ||
		  write_all(fd, f->map + ehsize, c->head - ehsize) ? -EIO : 0;
	for (size_t i = 1; i < f->nsections && !err; i++) {
		const struct piece *p = &c->pieces[i];
		if (!p->moved)
			continue;
		err = pad_to(fd, &at, p->offset) || write_all(fd, p->data, p->size) ? -EIO : 0;
		at += p->size;
	}
	if (!err)
		err = pad_to(fd, &at, c->new_shoff) ||
		      write_all(fd, shdrs, f->nsections * c->shentsize) ? -EIO : 0;
	free(shdrs);
	return err;
}

/* Writes the copy into an unnamed file in dir (O_TMPFILE) and links it in at path: a
 * store killed half-way (the background one: debug_cache_background.c) leaves nothing.
 * 1 when that cannot be done here (no unnamed files on this file system, no /proc, or a
 * passed-over copy at path to replace), else 0 or the write's error. */
static int store_unnamed(struct copy *c, const char *dir, const char *path)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0)
		return 1;
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int err = write_copy(c, fd);
	if (!err && linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW))
		err = 1;
	close(fd);
	return err;
}

static int store_at(struct copy *c, const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	*slash = 0;
	int err = file_mkdirs(dir, 0700);
	if (!err)
		err = store_unnamed(c, dir, path);
	if (err <= 0)
		return err;
	struct afile *a;
	err = afile_open(path, 0, &a);
	if (err)
		return err;
	err = write_copy(c, afile_fd(a));
	if (err) {
		afile_abort(a);
		return err;
	}
	return afile_commit(a);
}

int elf_debug_cache_store(struct elf_file *f, const char *dir)
{
	char path[PATH_MAX];
	if (f->type == ET_REL || !elf_has_compressed_sections(f) ||
	    elf_build_id_path(f, dir, path, sizeof(path)))
		return -ENOENT;
	struct copy c = { .f = f, .pieces = calloc(f->nsections, sizeof(struct piece)) };
	if (!c.pieces)
		return -ENOMEM;
	int err = read_header(&c);
	if (!err)
		err = lay_out(&c);
	if (!err)
		err = store_at(&c, path);
	free(c.pieces);
	return err;
}
