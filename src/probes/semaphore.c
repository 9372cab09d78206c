/*
 * Raising a USDT semaphore by hand, for kernels whose uprobes cannot (no ref_ctr_offset):
 * the 16-bit counter is read and written through /proc/PID/mem, which can write the
 * process's private copy of the data page. Racy against another tracer doing the same at
 * the same instant, like every userspace semaphore update (bcc, older bpftrace).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "probes/attach.h"

int usdt_semaphore_add(pid_t pid, const struct usdt_object *obj, uint64_t sem_offset,
		       int delta)
{
	uint64_t addr = 0;
	for (size_t i = 0; i < obj->nmaps && !addr; i++) {
		const struct usdt_mapping *m = &obj->maps[i];
		if (sem_offset >= m->pgoff && sem_offset - m->pgoff < m->end - m->start)
			addr = m->start + (sem_offset - m->pgoff);
	}
	if (!addr)
		return err_set(-ESRCH, "%s: not mapped by process %d", obj->path, (int)pid);
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/mem", (int)pid);
	int fd = open(name, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return err_set(-errno, "%s: %s", name, strerror(errno));
	uint16_t v;
	int e = 0;
	if (pread(fd, &v, sizeof(v), (off_t)addr) != (ssize_t)sizeof(v))
		e = -errno ? -errno : -EIO;
	else {
		v = (uint16_t)(v + delta);
		if (pwrite(fd, &v, sizeof(v), (off_t)addr) != (ssize_t)sizeof(v))
			e = -errno ? -errno : -EIO;
	}
	close(fd);
	if (e)
		return err_set(e, "%s: semaphore at 0x%llx in process %d: %s", obj->path,
			       (unsigned long long)addr, (int)pid, strerror(-e));
	return 0;
}
