/*
 * Finding separate debug files, as GDB documents it ("Separate Debug Files"): by build-id
 * under DIR/.build-id/xx/rest.debug, and by .gnu_debuglink next to the file, in its .debug/
 * subdirectory, and under DIR plus the file's own directory. A debuglink candidate counts
 * only if its CRC-32 (the same polynomial zlib's crc32() computes) matches the link's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cursor.h"
#include "base/err.h"
#include "elf/elf_internal.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

int elf_debuglink(struct elf_file *f, const char **name, uint32_t *crc)
{
	const uint8_t *data;
	size_t size;
	if (elf_section_data_by_name(f, ".gnu_debuglink", &data, &size))
		return -ENOENT;
	struct cur c = cur_make(data, size, f->big_endian);
	const char *n = cur_str(&c);
	if (!n || !*n)
		return -ENOENT;
	cur_seek(&c, (cur_off(&c) + 3) & ~(uint64_t)3);
	*crc = cur_u32(&c);
	if (!cur_ok(&c))
		return -ENOENT;
	*name = n;
	return 0;
}

static int file_crc(const char *path, uint32_t *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	uLong crc = crc32(0, Z_NULL, 0);
	unsigned char buf[1 << 16];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	close(fd);
	if (n < 0)
		return -EIO;
	*out = (uint32_t)crc;
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static int try_path(char *cand, char **out)
{
	if (access(cand, R_OK))
		return -ENOENT;
	*out = strdup(cand);
	return *out ? 0 : -ENOMEM;
}

int elf_build_id_path(struct elf_file *f, const char *dir, char *buf, size_t size)
{
	const uint8_t *id;
	size_t len;
	if (elf_build_id(f, &id, &len))
		return -ENOENT;
	return elf_build_id_dir_path(dir, id, len, ".debug", buf, size);
}

static int by_build_id(struct elf_file *f, const char *dir, char **out)
{
	char cand[PATH_MAX];
	if (elf_build_id_path(f, dir, cand, sizeof(cand)) || same_file(cand, f->path))
		return -ENOENT;
	return try_path(cand, out);
}

static bool same_build_id(struct elf_file *a, struct elf_file *b)
{
	const uint8_t *id;
	size_t len;
	return !elf_build_id(a, &id, &len) && elf_build_id_is(b, id, len);
}

/* A copy in the debug cache counts only while its build-id is still the file's: the
 * cache is writable, so unlike /usr/lib/debug it is not taken on trust. Opened to be
 * checked, it is handed out open. */
static int in_cache(struct elf_file *f, const char *dir, struct elf_file **out)
{
	char *path;
	if (by_build_id(f, dir, &path))
		return -ENOENT;
	struct elf_file *copy;
	bool ok = !elf_open(path, &copy);
	free(path);
	if (ok && (!same_build_id(f, copy) || elf_has_compressed_sections(copy))) {
		elf_close(copy);
		ok = false;
	}
	err_clear();
	if (ok)
		*out = copy;
	return ok ? 0 : -ENOENT;
}

static int by_debuglink(struct elf_file *f, const char *dir, char **out)
{
	const char *name;
	uint32_t want;
	if (elf_debuglink(f, &name, &want) || strchr(name, '/'))
		return -ENOENT;
	char self[PATH_MAX], cand[PATH_MAX];
	if (!realpath(f->path, self))
		snprintf(self, sizeof(self), "%s", f->path);
	char *slash = strrchr(self, '/');
	const char *fdir = slash ? self : ".";
	if (slash)
		*slash = 0;
	for (int i = 0; i < 3; i++) {
		int n = i == 0   ? snprintf(cand, sizeof(cand), "%s/%s", fdir, name)
			: i == 1 ? snprintf(cand, sizeof(cand), "%s/.debug/%s", fdir, name)
				 : snprintf(cand, sizeof(cand), "%s%s/%s", dir, fdir, name);
		uint32_t crc = 0;
		if (n < 0 || (size_t)n >= sizeof(cand) || same_file(cand, f->path) ||
		    file_crc(cand, &crc) || crc != want)
			continue;
		return try_path(cand, out);
	}
	return -ENOENT;
}

int elf_open_debug_file(struct elf_file *f, const char *debug_dir, const char *cache_dir,
			struct elf_file **out)
{
	/* The cache first of all: its copy is the file any directory would give, decompressed.
	 * Then build-id, in every directory, then debuglink: an id cannot match by chance. */
	if (cache_dir && !in_cache(f, cache_dir, out))
		return 0;
	char *path;
	int err = debug_dir ? by_build_id(f, debug_dir, &path) : -ENOENT;
	if (err == -ENOENT)
		err = by_build_id(f, SYSTEM_DEBUG_DIR, &path);
	if (err == -ENOENT && debug_dir)
		err = by_debuglink(f, debug_dir, &path);
	if (err == -ENOENT)
		err = by_debuglink(f, SYSTEM_DEBUG_DIR, &path);
	if (err)
		return err == -ENOENT ? err : err_set(err, "%s: out of memory", f->path);
	err = elf_open(path, out);
	free(path);
	return err;
}
