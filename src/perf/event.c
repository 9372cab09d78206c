/*
 * perf_event_open and the questions asked before it: does an event exist, does a PMU.
 * Permission failures are explained with the knob to turn, since the kernel only says
 * EACCES.
 */
#include "perf/perf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"

static long sys_perf_event_open(struct perf_event_attr *attr, int pid, int cpu, int group,
				unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

int perf_paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 2;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

int perf_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd, unsigned long flags,
	      int *fd_out)
{
	long fd = sys_perf_event_open(attr, pid, cpu, group_fd, flags);
	if (fd < 0 && errno == EINVAL && attr->use_clockid) {
		/* Kernels before 4.1 know no clockid: the perf clock then (JIT code is named
		 * by the last code at each address, replay says). */
		attr->use_clockid = 0;
		attr->clockid = 0;
		fd = sys_perf_event_open(attr, pid, cpu, group_fd, flags);
	}
	if (fd >= 0) {
		*fd_out = (int)fd;
		return 0;
	}
	int e = errno;
	if (e == EACCES || e == EPERM)
		return err_set(-e, "perf_event_open: permission denied (perf_event_paranoid is %d): "
				   "run as root, give tally CAP_PERFMON, or set "
				   "/proc/sys/kernel/perf_event_paranoid to 1 or lower",
			       perf_paranoid_level());
	if (e == ESRCH)
		return err_set(-e, "perf_event_open: no process %d", pid);
	if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
		return err_set(-e, "perf_event_open: event not supported on this machine (%s)",
			       strerror(e));
	if (e == EMFILE)
		return err_set(-e, "perf_event_open: too many open files (the limit, ulimit -n, is "
				   "%llu): tally takes one per CPU, and with -p one per thread and CPU",
			       file_fd_limit());
	return err_set(-e, "perf_event_open: %s", strerror(e));
}

bool perf_event_available(uint32_t type, uint64_t config)
{
	struct perf_event_attr a = { .type = type, .size = sizeof(a), .config = config,
				     .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1 };
	long fd = sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

bool perf_sample_id(const void *rec, size_t size, uint64_t *id)
{
	const struct perf_event_header *h = rec;
	if (size < sizeof(*h) + 8 || h->type != PERF_RECORD_SAMPLE)
		return false;
	memcpy(id, (const uint8_t *)rec + sizeof(*h), 8);
	return true;
}

bool perf_pmu_exists(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", name);
	return access(path, F_OK) == 0;
}

int perf_pmu_type(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	FILE *f = fopen(path, "r");
	int type = -1;
	if (f && fscanf(f, "%d", &type) != 1)
		type = -1;
	if (f)
		fclose(f);
	return type;
}
