/*
 * The uprobe PMU of perf_event_open (Linux 4.17): attr.config1 points at the path,
 * attr.config2 is the probe's file offset, and since 4.20 the semaphore's file offset goes
 * in the bits of attr.config that /sys/bus/event_source/devices/uprobe/format/ref_ctr_offset
 * names ("config:32-63"). Counting mode: no ring buffer, read() gives the hits. One task
 * per event and no inheritance (see attach.h).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "probes/attach.h"

#define UPROBE_SYSFS "/sys/bus/event_source/devices/uprobe"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *ok = fgets(buf, (int)len, f);
	fclose(f);
	return ok ? 0 : -EIO;
}

int uprobe_pmu_probe(struct uprobe_pmu *pmu)
{
	char buf[64];
	if (read_line(UPROBE_SYSFS "/type", buf, sizeof(buf)))
		return err_set(-ENOENT, "this kernel has no uprobe PMU (" UPROBE_SYSFS
					"/type is missing): it needs CONFIG_UPROBE_EVENTS, Linux 4.17 or later");
	pmu->type = atoi(buf);
	pmu->ref_ctr_shift = -1;
	int lo, hi;
	const char *force = getenv("TALLY_PROBES_NO_REFCTR");
	if ((!force || !*force || !strcmp(force, "0")) &&
	    !read_line(UPROBE_SYSFS "/format/ref_ctr_offset", buf, sizeof(buf)) &&
	    sscanf(buf, "config:%d-%d", &lo, &hi) == 2 && lo >= 0 && lo < 64)
		pmu->ref_ctr_shift = lo;
	return 0;
}

int uprobe_open_attr(const struct uprobe_pmu *pmu, struct perf_event_attr *attr,
		     const char *path, uint64_t offset, uint64_t ref_ctr_offset, pid_t tid, int *fd)
{
	attr->size = sizeof(*attr);
	attr->type = (uint32_t)pmu->type;
	attr->config1 = (uint64_t)(uintptr_t)path;
	attr->config2 = offset;
	attr->config = ref_ctr_offset && pmu->ref_ctr_shift >= 0
			       ? ref_ctr_offset << pmu->ref_ctr_shift : 0;
	int r = (int)syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (r >= 0) {
		*fd = r;
		return 0;
	}
	int e = errno;
	if (e == EACCES || e == EPERM)
		return err_set(-e, "perf_event_open: permission denied: attaching uprobes needs root "
				   "or CAP_PERFMON (setcap cap_perfmon+ep tally), and read access to %s",
			       path);
	if (e == ESRCH)
		return err_set(-e, "thread %d is gone", (int)tid);
	if (e == EINVAL && ref_ctr_offset)
		return err_set(-e, "%s: the kernel refused a uprobe at 0x%llx with semaphore at 0x%llx: "
				   "another tracer may hold this probe with a different semaphore offset",
			       path, (unsigned long long)offset, (unsigned long long)ref_ctr_offset);
	if (e == EMFILE)
		return err_set(-e, "perf_event_open: too many open files (the limit, ulimit -n, is "
				   "%llu): tally takes one per thread and probe site",
			       file_fd_limit());
	return err_set(-e, "%s: uprobe at offset 0x%llx: perf_event_open: %s", path,
		       (unsigned long long)offset, strerror(e));
}

int uprobe_open(const struct uprobe_pmu *pmu, const char *path, uint64_t offset,
		uint64_t ref_ctr_offset, pid_t tid, bool on_exec,
		const struct uprobe_sampling *sampling, int *fd)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.disabled = on_exec;
	attr.enable_on_exec = on_exec;
	if (sampling) {
		attr.sample_period = 1;
		attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER;
		attr.sample_regs_user = sampling->regs_mask;
		if (sampling->stack_bytes) {
			attr.sample_type |= PERF_SAMPLE_STACK_USER;
			attr.sample_stack_user = sampling->stack_bytes;
		}
		attr.wakeup_events = 1;
	}
	return uprobe_open_attr(pmu, &attr, path, offset, ref_ctr_offset, tid, fd);
}

int uprobe_count(int fd, uint64_t *count)
{
	if (read(fd, count, sizeof(*count)) != (ssize_t)sizeof(*count))
		return err_set(-errno ? -errno : -EIO, "reading a uprobe counter: %s",
			       strerror(errno ? errno : EIO));
	return 0;
}
