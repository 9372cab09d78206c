/*
 * Opening an ELF file: the header, the section table and the program headers. Everything is
 * validated against the file size here, so later readers can trust offsets and sizes of
 * sections and segments (not their contents).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/err.h"
#include "elf/elf.h"
#include "elf/elf_internal.h"

static int bad(struct elf_file *f, uint64_t off, const char *what)
{
	return err_set(-EINVAL, "%s: at 0x%llx: %s", f->path, (unsigned long long)off, what);
}

/* Where the tables are, from the ELF header. */
struct tables {
	uint64_t shoff, phoff;
	uint16_t shentsize, phentsize;
	uint32_t shnum, shstrndx, phnum;
};

static int read_header(struct elf_file *f, struct cur *c, struct tables *t)
{
	const uint8_t *id = cur_bytes(c, EI_NIDENT);
	if (!id || memcmp(id, ELFMAG, SELFMAG))
		return err_set(-EINVAL, "%s: not an ELF file", f->path);
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return bad(f, EI_CLASS, "unknown ELF class");
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
		return bad(f, EI_DATA, "unknown byte order");
	f->is64 = id[EI_CLASS] == ELFCLASS64;
	f->big_endian = id[EI_DATA] == ELFDATA2MSB;
	c->big_endian = f->big_endian;
	f->type = cur_u16(c);
	f->machine = cur_u16(c);
	cur_u32(c); /* e_version */
	unsigned w = f->is64 ? 8 : 4;
	f->entry = cur_uN(c, w);
	t->phoff = cur_uN(c, w);
	t->shoff = cur_uN(c, w);
	f->flags = cur_u32(c);
	cur_u16(c); /* e_ehsize */
	t->phentsize = cur_u16(c);
	t->phnum = cur_u16(c);
	t->shentsize = cur_u16(c);
	t->shnum = cur_u16(c);
	t->shstrndx = cur_u16(c);
	if (!cur_ok(c))
		return bad(f, 0, "truncated ELF header");
	return 0;
}

static int read_section_header(struct elf_file *f, struct cur *c, struct elf_section *s)
{
	unsigned w = f->is64 ? 8 : 4;
	s->name = (const char *)(uintptr_t)cur_u32(c); /* an offset until names are resolved */
	s->type = cur_u32(c);
	s->flags = cur_uN(c, w);
	s->addr = cur_uN(c, w);
	s->offset = cur_uN(c, w);
	s->size = cur_uN(c, w);
	s->link = cur_u32(c);
	s->info = cur_u32(c);
	s->addralign = cur_uN(c, w);
	s->entsize = cur_uN(c, w);
	return cur_ok(c) ? 0 : -EINVAL;
}

static int read_sections(struct elf_file *f, uint64_t shoff, uint16_t shentsize, uint32_t shnum,
			 uint32_t shstrndx)
{
	if (shoff == 0)
		return 0;
	struct cur c = cur_make(f->map, f->size, f->big_endian);
	unsigned want = f->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (shentsize < want)
		return bad(f, shoff, "section header entries too small");
	/* Section count and string-table index escape to section 0 when they overflow 16 bits. */
	struct elf_section s0;
	cur_seek(&c, shoff);
	if (read_section_header(f, &c, &s0))
		return bad(f, shoff, "section header table runs past the end of the file");
	if (shnum == 0)
		shnum = s0.size > UINT32_MAX ? UINT32_MAX : (uint32_t)s0.size;
	if (shstrndx == SHN_XINDEX)
		shstrndx = s0.link;
	if ((uint64_t)shnum * shentsize > f->size - shoff)
		return bad(f, shoff, "section header table runs past the end of the file");
	f->sections = arena_alloc(&f->arena, shnum * sizeof(*f->sections));
	if (!f->sections)
		return -ENOMEM;
	f->nsections = shnum;
	for (uint32_t i = 0; i < shnum; i++) {
		struct elf_section *s = &f->sections[i];
		cur_seek(&c, shoff + (uint64_t)i * shentsize);
		read_section_header(f, &c, s);
		s->index = i;
		if (s->type != SHT_NOBITS && (s->offset > f->size || s->size > f->size - s->offset))
			return bad(f, shoff + (uint64_t)i * shentsize, "section runs past the end of the file");
	}
	const struct elf_section *strs = shstrndx < shnum ? &f->sections[shstrndx] : NULL;
	for (uint32_t i = 0; i < shnum; i++) {
		struct elf_section *s = &f->sections[i];
		uint64_t off = (uintptr_t)s->name;
		s->name = "";
		if (strs && strs->type != SHT_NOBITS && off < strs->size) {
			const char *p = (const char *)f->map + strs->offset + off;
			if (memchr(p, 0, strs->size - off))
				s->name = p;
		}
	}
	return 0;
}

static int read_segments(struct elf_file *f, uint64_t phoff, uint16_t phentsize, uint32_t phnum)
{
	if (phoff == 0 || phnum == 0)
		return 0;
	unsigned want = f->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	if (phentsize < want)
		return bad(f, phoff, "program header entries too small");
	if (phoff > f->size || (uint64_t)phnum * phentsize > f->size - phoff)
		return bad(f, phoff, "program header table runs past the end of the file");
	f->segments = arena_alloc(&f->arena, phnum * sizeof(*f->segments));
	if (!f->segments)
		return -ENOMEM;
	f->nsegments = phnum;
	struct cur c = cur_make(f->map, f->size, f->big_endian);
	for (uint32_t i = 0; i < phnum; i++) {
		struct elf_segment *p = &f->segments[i];
		cur_seek(&c, phoff + (uint64_t)i * phentsize);
		p->type = cur_u32(&c);
		if (f->is64) {
			p->flags = cur_u32(&c);
			p->offset = cur_u64(&c);
			p->vaddr = cur_u64(&c);
			cur_u64(&c); /* p_paddr */
			p->filesz = cur_u64(&c);
			p->memsz = cur_u64(&c);
			p->align = cur_u64(&c);
		} else {
			p->offset = cur_u32(&c);
			p->vaddr = cur_u32(&c);
			cur_u32(&c);
			p->filesz = cur_u32(&c);
			p->memsz = cur_u32(&c);
			p->flags = cur_u32(&c);
			p->align = cur_u32(&c);
		}
	}
	return 0;
}

static int parse(struct elf_file *f)
{
	struct cur c = cur_make(f->map, f->size, false);
	struct tables t = { 0 };
	int err = read_header(f, &c, &t);
	if (err)
		return err;
	if (t.shoff > f->size)
		return bad(f, 0, "section header offset lies past the end of the file");
	err = read_sections(f, t.shoff, t.shentsize, t.shnum, t.shstrndx);
	if (!err)
		err = read_segments(f, t.phoff, t.phentsize, t.phnum);
	return err;
}

static int make(const char *name, const void *data, size_t size, bool owns,
		struct elf_file **out)
{
	struct elf_file *f = calloc(1, sizeof(*f));
	if (!f)
		return err_set(-ENOMEM, "%s: out of memory", name);
	pthread_mutex_init(&f->bufs_lock, NULL);
	f->path = arena_strdup(&f->arena, name);
	f->map = data;
	f->size = size;
	f->owns_map = owns;
	int err = f->path ? parse(f) : -ENOMEM;
	if (err) {
		if (err == -ENOMEM)
			err_set(err, "%s: out of memory", name);
		elf_close(f);
		return err;
	}
	*out = f;
	return 0;
}

int elf_open_mem(const char *name, const void *data, size_t size, struct elf_file **out)
{
	return make(name, data, size, false, out);
}

int elf_open(const char *path, struct elf_file **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return err_set(-e, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(-EINVAL, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return err_set(-EINVAL, "%s: not an ELF file (empty)", path);
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (map == MAP_FAILED)
		return err_set(-e, "%s: cannot map: %s", path, strerror(e));
	int err = make(path, map, (size_t)st.st_size, true, out);
	if (!err) {
		(*out)->dev = st.st_dev;
		(*out)->ino = st.st_ino;
	}
	return err;
}

/* The mapping holds the file's inode: while it lives, no other file has its device and
 * inode numbers, so a match is the same file. */
int elf_reopen(const struct elf_file *f)
{
	if (!f->owns_map)
		return -1;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) || st.st_dev != f->dev || st.st_ino != f->ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void elf_close(struct elf_file *f)
{
	if (!f)
		return;
	elf_close(f->minidebug); /* before the buffer it lies in */
	if (f->owns_map)
		munmap((void *)f->map, f->size);
	elf_bufs_free(f);
	arena_free(&f->arena);
	free(f);
}
