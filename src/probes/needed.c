/*
 * The shared libraries a command will load, found before it runs so that their probes can
 * be attached from the first instruction: DT_NEEDED entries, transitively, searched as
 * ld.so does (DT_RPATH when there is no DT_RUNPATH, LD_LIBRARY_PATH, DT_RUNPATH, then the
 * system directories; $ORIGIN expanded). /etc/ld.so.cache is not read: a library only
 * found through it is missed, and `-p PID` on the running process sees it.
 */
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/err.h"
#include "elf/elf.h"
#include "probes/attach.h"

static const char *const system_dirs[] = {
#if defined(__x86_64__)
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL,
};

struct dyn {
	char needed[64][256];
	size_t nneeded;
	char rpath[1024], runpath[1024];
};

/* Reads DT_NEEDED, DT_RPATH and DT_RUNPATH of f (strings from the section .dynamic links). */
static void read_dynamic(struct elf_file *f, struct dyn *d)
{
	struct elf_section *dyn = elf_section_by_name(f, ".dynamic");
	const uint8_t *data, *str;
	size_t size, strsize;
	if (!dyn || dyn->link >= f->nsections ||
	    elf_section_data(f, dyn, &data, &size) ||
	    elf_section_data(f, &f->sections[dyn->link], &str, &strsize))
		return;
	struct cur c = cur_make(data, size, f->big_endian);
	unsigned w = f->is64 ? 8 : 4;
	while (cur_left(&c) >= 2 * w) {
		uint64_t tag = cur_uN(&c, w), val = cur_uN(&c, w);
		if (tag == DT_NULL)
			break;
		if (val >= strsize || !memchr(str + val, 0, strsize - val))
			continue;
		const char *s = (const char *)str + val;
		if (tag == DT_NEEDED && d->nneeded < 64)
			snprintf(d->needed[d->nneeded++], sizeof(d->needed[0]), "%s", s);
		else if (tag == DT_RPATH)
			snprintf(d->rpath, sizeof(d->rpath), "%s", s);
		else if (tag == DT_RUNPATH)
			snprintf(d->runpath, sizeof(d->runpath), "%s", s);
	}
}

/* Looks for name in the colon-separated dirs ($ORIGIN = origin); 0 and out on success. */
static int search(const char *dirs, const char *origin, const char *name, char *out, size_t len)
{
	char list[2048];
	snprintf(list, sizeof(list), "%s", dirs);
	for (char *save, *dir = strtok_r(list, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char expanded[1024];
		if (!strncmp(dir, "$ORIGIN", 7))
			snprintf(expanded, sizeof(expanded), "%s%s", origin, dir + 7);
		else if (!strncmp(dir, "${ORIGIN}", 9))
			snprintf(expanded, sizeof(expanded), "%s%s", origin, dir + 9);
		else
			snprintf(expanded, sizeof(expanded), "%s", dir);
		if (snprintf(out, len, "%s/%s", expanded, name) < (int)len && !access(out, R_OK))
			return 0;
	}
	return -ENOENT;
}

static int find_library(const struct dyn *d, const char *origin, const char *name, char *out,
			size_t len)
{
	if (strchr(name, '/'))
		return snprintf(out, len, "%s", name) < (int)len && !access(out, R_OK) ? 0 : -ENOENT;
	const char *llp = getenv("LD_LIBRARY_PATH");
	if ((!d->runpath[0] && d->rpath[0] && !search(d->rpath, origin, name, out, len)) ||
	    (llp && !search(llp, origin, name, out, len)) ||
	    (d->runpath[0] && !search(d->runpath, origin, name, out, len)))
		return 0;
	for (size_t i = 0; system_dirs[i]; i++)
		if (!search(system_dirs[i], origin, name, out, len))
			return 0;
	return -ENOENT;
}

static bool have(const struct usdt_objects *o, const char *path)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->v[i].path, path))
			return true;
	return false;
}

int usdt_objects_add_needed(struct usdt_objects *o, const char *exe)
{
	/* Breadth-first over the objects list itself: each added library is visited later. */
	size_t first = o->n;
	for (size_t i = 0; i < o->n; i++) {
		if (i < first && strcmp(o->v[i].path, exe))
			continue;
		struct elf_file *f;
		if (elf_open(o->v[i].open_path, &f))
			continue;
		struct dyn d;
		memset(&d, 0, sizeof(d));
		read_dynamic(f, &d);
		elf_close(f);
		char copy[1024], origin[1024];
		snprintf(copy, sizeof(copy), "%s", o->v[i].path);
		snprintf(origin, sizeof(origin), "%s", dirname(copy));
		for (size_t k = 0; k < d.nneeded; k++) {
			char path[2048], real[4096];
			if (find_library(&d, origin, d.needed[k], path, sizeof(path)))
				continue;
			if (!realpath(path, real) || have(o, real))
				continue;
			if (usdt_objects_add_file(o, real, real) == -ENOMEM)
				return -ENOMEM;
		}
	}
	return 0;
}
