/*
 * The segments pprof address translation needs (see pprof_segments.h). The path comes from
 * a profile, which may be hostile: only regular files are opened (elf_open_build_id), and a
 * file whose build-id differs from the profile's is not the one the addresses belong to; a
 * file missing or rebuilt since is looked for under its build-id in perf's build-id cache,
 * where tally record and perf record keep copies.
 */
#include "report/pprof_segments.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/hex.h"
#include "elf/elf.h"
#include "profile/read.h"

#define MAX_ID 64

/* The build-id a profile gives in hex (either case): its length, or -1 when it is not
 * whole bytes of hex or longer than any build-id. */
static int parse_build_id(const char *hex, uint8_t id[MAX_ID])
{
	size_t len = strlen(hex);
	if (len % 2 || len > 2 * MAX_ID)
		return -1;
	for (size_t i = 0; i < len; i += 2) {
		int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		id[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(len / 2);
}

int rep_pprof_segments(const char *path, const char *build_id_hex, struct pprof_seg **out,
		       size_t *n)
{
	uint8_t id[MAX_ID];
	int len = parse_build_id(build_id_hex ? build_id_hex : "", id);
	struct elf_file *f = NULL;
	*out = NULL;
	*n = 0;
	if (len < 0 || elf_open_build_id(ELF_CACHED_FILE, path, id, (size_t)len, &f, NULL))
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

int rep_read_pprof(const char *name, const void *data, size_t size, struct prof **out)
{
	return prof_read_pprof_files(name, data, size, rep_pprof_segments, out);
}
