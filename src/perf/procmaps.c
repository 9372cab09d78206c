/*
 * /proc/PID/maps, for the mappings of processes that were running before recording began
 * (-p): the kernel reports only the mappings made after the events are enabled.
 */
#include "perf/perf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "base/err.h"

int perf_proc_maps(int pid, int (*fn)(const struct perf_map_entry *m, void *arg), void *arg)
{
	char path[64], line[4096 + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		struct perf_map_entry m = { 0 };
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m.start, &m.end, perms, &m.pgoff, &m.maj, &m.min, &m.ino, &name_at) < 7)
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = 0;
		m.path = name;
		m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			 (perms[2] == 'x' ? PROT_EXEC : 0);
		m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		rc = fn(&m, arg);
	}
	fclose(f);
	return rc;
}
