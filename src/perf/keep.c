/*
 * What a recording keeps beside its perf.data (keep.h). The kallsyms copy is written beside
 * its place and renamed into it, so a report never reads half of one; without root every
 * address in /proc/kallsyms reads 0, and such a listing is not kept.
 */
#include "perf/keep.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

int perf_series_name(const char *data_path, uint64_t ms, char *buf, size_t size)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&sec, &tm);
	int n = snprintf(buf, size, "%s.%04d%02d%02dT%02d%02d%02d.%03uZ", data_path,
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (unsigned)(ms % 1000));
	return n < 0 || (size_t)n >= size ? err_set(-ENAMETOOLONG, "%s: name too long", data_path)
					  : 0;
}

/* Whether s is a series suffix: YYYYMMDDTHHMMSS.mmmZ. */
static bool is_series_time(const char *s)
{
	static const char form[] = "########T######.###Z";
	for (size_t i = 0; i < sizeof(form) - 1; i++)
		if (form[i] == '#' ? !isdigit((unsigned char)s[i]) : s[i] != form[i])
			return false;
	return s[sizeof(form) - 1] == 0;
}

bool perf_series_newest(const char *data_path, char *buf, size_t size)
{
	const char *slash = strrchr(data_path, '/');
	const char *base = slash ? slash + 1 : data_path;
	size_t nbase = strlen(base);
	char dir[4096];
	if (snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - data_path + 1) : 1,
		     slash ? data_path : ".") >= (int)sizeof(dir))
		return false;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	char best[256] = "";
	for (struct dirent *e; (e = readdir(d));)
		if (!strncmp(e->d_name, base, nbase) && e->d_name[nbase] == '.' &&
		    is_series_time(e->d_name + nbase + 1) && strcmp(e->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", e->d_name);
	closedir(d);
	if (!best[0])
		return false;
	int n = snprintf(buf, size, "%.*s%s", slash ? (int)(slash - data_path + 1) : 0, data_path,
			 best);
	return n > 0 && (size_t)n < size;
}

bool perf_vm_registry_name(const char *name)
{
	size_t n = strlen(name);
	return !strncmp(name, "tally-vm-", 9) && n > 14 && !strcmp(name + n - 5, ".dump");
}

bool perf_jitdump_marker(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4))
		return false;
	const char *p = base + 4, *digits = p;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > digits && !strcmp(p, ".dump");
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
