/*
 * perf's build-id cache, the one place its layout is written down: copies of what a
 * recording mapped, kept under their build-id by tally record and perf record, so that a
 * later reader finds the bytes the recording saw even when the file was rebuilt, deleted,
 * in another mount namespace, or never a file (the vDSO). A copy is used only when its own
 * build-id is the one asked for: the cache is writable by anyone who records.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/cursor.h"
#include "base/err.h"
#include "base/file.h"
#include "base/hex.h"
#include "elf/elf_internal.h"

#define MAX_ID 64

const char *elf_buildid_cache_dir(char *buf, size_t size)
{
	const char *d = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	if (d && *d)
		snprintf(buf, size, "%s", d);
	else
		snprintf(buf, size, "%s/.debug", home && *home ? home : "/root");
	return buf;
}

int elf_build_id_dir_path(const char *dir, const uint8_t *id, size_t len, const char *suffix,
			  char *buf, size_t size)
{
	if (len < 2 || len > MAX_ID)
		return -ENOENT;
	char hex[2 * MAX_ID + 1];
	hex_encode(id, len, hex);
	int n = snprintf(buf, size, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffix);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int elf_buildid_cache_path(enum elf_cached kind, const uint8_t *id, size_t len, char *buf,
			   size_t size)
{
	char dir[512], hex[2 * MAX_ID + 1];
	elf_buildid_cache_dir(dir, sizeof(dir));
	if (kind == ELF_CACHED_FILE)
		return elf_build_id_dir_path(dir, id, len, "/elf", buf, size);
	if (!len || len > MAX_ID)
		return -ENOENT;
	hex_encode(id, len, hex);
	int n = kind == ELF_CACHED_VDSO
			? snprintf(buf, size, "%s/[vdso]/%s/vdso", dir, hex)
			: snprintf(buf, size, "%s/[kernel.kallsyms]/%s/kallsyms", dir, hex);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void elf_buildid_cache_store(enum elf_cached kind, const uint8_t *id, size_t len,
			     const void *data, size_t size)
{
	char path[1024];
	if (elf_buildid_cache_path(kind, id, len, path, sizeof(path)))
		return;
	char *slash = strrchr(path, '/');
	*slash = 0;
	int r = file_mkdirs(path, 0755);
	*slash = '/';
	struct afile *a;
	/* A copy there already is the same bytes; a copy being made appears whole or not at
	 * all, so a recording cut short never leaves a truncated one for later runs to trust. */
	if (r || !access(path, F_OK) || afile_open(path, 0, &a))
		return;
	FILE *out = afile_stream(a);
	if (out && fwrite(data, 1, size, out) == size)
		afile_commit(a);
	else
		afile_abort(a);
}

bool elf_build_id_is(struct elf_file *f, const uint8_t *id, size_t len)
{
	const uint8_t *have;
	size_t n;
	if (elf_build_id(f, &have, &n)) {
		err_clear();
		return false;
	}
	return n == len && !memcmp(have, id, len);
}

int elf_open_vdso(struct elf_file **out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh)
		return -ENOENT;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return elf_open_mem("[vdso]", eh, size, out);
}

/* path when it is a regular file (a FIFO would block the open forever) with that build-id,
 * or any build-id when len is 0. */
static int open_as(const char *path, const uint8_t *id, size_t len, struct elf_file **out)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || elf_open(path, out))
		return -ENOENT;
	if (!len || elf_build_id_is(*out, id, len))
		return 0;
	elf_close(*out);
	return -ENOENT;
}

int elf_open_build_id(enum elf_cached kind, const char *path, const uint8_t *id, size_t len,
		      struct elf_file **out, char **opened)
{
	bool vdso = kind == ELF_CACHED_VDSO;
	char cached[1024];
	const char *found = vdso ? NULL : path;
	int r = vdso ? elf_open_vdso(out) : open_as(path, NULL, 0, out);
	if (!r && len && !elf_build_id_is(*out, id, len)) {
		elf_close(*out);
		r = -ENOENT;
	}
	if (r && len &&
	    !elf_buildid_cache_path(kind, id, len, cached, sizeof(cached))) {
		r = open_as(cached, id, len, out);
		found = cached;
	}
	err_clear();
	if (r) {
		*out = NULL;
		return -ENOENT;
	}
	if (opened && !(*opened = found ? strdup(found) : NULL) && found) {
		elf_close(*out);
		*out = NULL;
		return err_set(-ENOMEM, "out of memory");
	}
	return 0;
}

size_t elf_kernel_build_id(uint8_t id[20])
{
	/* A few hundred bytes of notes; what lies past 64 KiB is not looked at. */
	uint8_t *notes = malloc(1 << 16);
	FILE *f = notes ? fopen("/sys/kernel/notes", "rb") : NULL;
	size_t len = f ? fread(notes, 1, 1 << 16, f) : 0, found = 0;
	if (f)
		fclose(f);
	struct cur c = cur_make(notes, len, false);
	while (!found && cur_left(&c) >= 12) {
		uint32_t namesz = cur_u32(&c), descsz = cur_u32(&c), type = cur_u32(&c);
		const uint8_t *name = cur_bytes(&c, (namesz + 3u) & ~3u);
		const uint8_t *desc = cur_bytes(&c, (descsz + 3u) & ~3u);
		if (!cur_ok(&c) || namesz > 64 || descsz > 1024)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) && descsz &&
		    descsz <= 20) {
			memcpy(id, desc, descsz);
			found = descsz;
		}
	}
	free(notes);
	return found;
}
