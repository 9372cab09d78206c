/*
 * The segments pprof address translation needs (see pprof_addr.h). The path comes from a
 * profile, which may be hostile: only regular files are opened (a FIFO named by a profile
 * would block the open forever), and a file whose build-id differs from the profile's is
 * not the one the addresses belong to. A file missing or rebuilt since is looked for under
 * its build-id in perf's build-id cache, where tally record and perf record keep copies.
 */
#include "profile/pprof_addr.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/hex.h"
#include "base/err.h"
#include "elf/elf.h"
#include "unwind/unwind.h"

static bool same_build_id(struct elf_file *f, const char *want)
{
	const uint8_t *id;
	size_t len;
	if (!want || !*want)
		return true;
	if (elf_build_id(f, &id, &len) || len > 64)
		return false;
	char hex[2 * 64 + 1];
	return !strcasecmp(hex_encode(id, len, hex), want);
}

/* The ELF file at path with that build-id, or NULL. */
static struct elf_file *open_file(const char *path, const char *build_id_hex)
{
	struct stat st;
	struct elf_file *f;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || elf_open(path, &f)) {
		err_clear();
		return NULL;
	}
	if (same_build_id(f, build_id_hex))
		return f;
	elf_close(f);
	err_clear();
	return NULL;
}

/* The file, else its copy in the build-id cache (.build-id/xx/rest/elf). */
static struct elf_file *find_file(const char *path, const char *build_id_hex)
{
	struct elf_file *f = open_file(path, build_id_hex);
	size_t len = build_id_hex ? strlen(build_id_hex) : 0;
	char id[129], dir[512], cached[800];
	if (f || len < 4 || len >= sizeof(id) || strspn(build_id_hex, "0123456789abcdefABCDEF") != len)
		return f;
	for (size_t i = 0; i <= len; i++)
		id[i] = (char)tolower((unsigned char)build_id_hex[i]);
	snprintf(cached, sizeof(cached), "%s/.build-id/%.2s/%s/elf",
		 unw_buildid_dir(dir, sizeof(dir)), id, id + 2);
	return open_file(cached, id);
}

int pprof_segments(const char *path, const char *build_id_hex, struct pprof_seg **out,
		   size_t *n)
{
	struct elf_file *f = find_file(path, build_id_hex);
	*out = NULL;
	*n = 0;
	if (!f)
		return -ENOENT;
	int rc = 0;
	if (f->nsegments && !(*out = calloc(f->nsegments, sizeof(**out))))
		rc = err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < f->nsegments; i++) {
		const struct elf_segment *s = &f->segments[i];
		if (s->type == PT_LOAD && s->filesz)
			(*out)[(*n)++] = (struct pprof_seg){ s->vaddr, s->offset, s->filesz, s->memsz };
	}
	elf_close(f);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
