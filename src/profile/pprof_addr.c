/*
 * The segments pprof address translation needs (see pprof_addr.h). The path comes from a
 * profile, which may be hostile: only regular files are opened (a FIFO named by a profile
 * would block the open forever), and a file whose build-id differs from the profile's is
 * not the one the addresses belong to.
 */
#include "profile/pprof_addr.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/err.h"
#include "elf/elf.h"

static bool same_build_id(struct elf_file *f, const char *want)
{
	const uint8_t *id;
	size_t len;
	if (!want || !*want)
		return true;
	if (elf_build_id(f, &id, &len) || len > 64)
		return false;
	char hex[2 * 64 + 1];
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * len] = 0;
	return !strcasecmp(hex, want);
}

int pprof_segments(const char *path, const char *build_id_hex, struct pprof_seg **out,
		   size_t *n)
{
	struct stat st;
	struct elf_file *f;
	*out = NULL;
	*n = 0;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || elf_open(path, &f)) {
		err_clear();
		return -ENOENT;
	}
	int rc = 0;
	if (!same_build_id(f, build_id_hex))
		rc = -ENOENT;
	else if (f->nsegments && !(*out = calloc(f->nsegments, sizeof(**out))))
		rc = err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < f->nsegments; i++) {
		const struct elf_segment *s = &f->segments[i];
		if (s->type == PT_LOAD && s->filesz)
			(*out)[(*n)++] = (struct pprof_seg){ s->vaddr, s->offset, s->filesz, s->memsz };
	}
	elf_close(f);
	if (rc == -ENOENT)
		err_clear();
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
