/*
 * What a recording keeps beside its perf.data (keep.h). The kallsyms copy is written beside
 * its place and renamed into it, so a report never reads half of one; without root every
 * address in /proc/kallsyms reads 0, and such a listing is not kept.
 */
#include "perf/keep.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "elf/elf.h"

int perf_jit_dir(const char *data_path, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s.jit", data_path);
	return n < 0 || (size_t)n >= size ? err_set(-ENAMETOOLONG, "%s: name too long", data_path)
					  : 0;
}

bool perf_vm_registry_name(const char *name)
{
	size_t n = strlen(name);
	return !strncmp(name, "tally-vm-", 9) && n > 14 && !strcmp(name + n - 5, ".dump");
}

bool perf_kallsyms_copy_path(char *buf, size_t size)
{
	uint8_t id[20];
	size_t n = elf_kernel_build_id(id);
	return n && !elf_buildid_cache_path(ELF_CACHED_KALLSYMS, id, n, buf, size);
}

/* Writes n bytes of text as path, through a file beside it renamed into place. */
static void replace_file(char *path, const char *text, size_t n)
{
	char tmp[1100];
	char *slash = strrchr(path, '/');
	*slash = 0;
	int r = file_mkdirs(path, 0755);
	*slash = '/';
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	FILE *f = r ? NULL : fopen(tmp, "wb");
	if (!f)
		return;
	bool ok = fwrite(text, 1, n, f) == n;
	ok = !fclose(f) && ok;
	if (!ok || rename(tmp, path))
		remove(tmp);
}

void perf_kallsyms_save(void)
{
	char path[1024];
	size_t n = 0, old_n = 0;
	if (!perf_kallsyms_copy_path(path, sizeof(path)))
		return;
	char *now = file_read_text("/proc/kallsyms", &n);
	bool useful = now && n > 16 && strspn(now, "0") < 16;
	char *old = useful ? file_read_text(path, &old_n) : NULL;
	bool same = old && old_n == n && !memcmp(old, now, n);
	free(old);
	if (useful && !same)
		replace_file(path, now, n);
	free(now);
}
