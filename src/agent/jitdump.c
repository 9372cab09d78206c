/*
 * jit-PID.dump, the file perf's `perf inject --jit` reads to give JIT code names and
 * bytes (tools/perf/Documentation/jitdump-specification.txt): a 40-byte header, then one
 * JIT_CODE_LOAD record per region, each with the region's name and a copy of its code.
 * perf finds the file through an executable mapping of it that the recording sees, so it
 * stays mapped (PROT_EXEC, never executed) while the agent lives. Timestamps are
 * CLOCK_MONOTONIC, what `perf record -k 1` uses.
 */
#include "agent/agent_impl.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_VERSION 1
#define JIT_CODE_LOAD 0

struct jit_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jit_code_load {
	uint32_t id, total_size;
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t elf_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__i386__)
	return EM_386;
#else
	return EM_NONE;
#endif
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Under the agent's lock. */
static int open_dump(struct tally_agent *a)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/jit-%d.dump", a->o.jit_dir, (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	struct jit_header h = { JITDUMP_MAGIC, JITDUMP_VERSION, sizeof(h), elf_machine(), 0,
				(uint32_t)getpid(), monotonic_ns(), 0 };
	long page = sysconf(_SC_PAGESIZE);
	void *marker = MAP_FAILED;
	if (!write_all(fd, &h, sizeof(h)))
		marker = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (marker == MAP_FAILED) {
		close(fd);
		unlink(path);
		return err_set(-EIO, "%s: cannot write or map the jitdump", path);
	}
	a->jitdump_fd = fd;
	a->jitdump_map = marker;
	a->jitdump_map_len = (size_t)page;
	return 0;
}

int agent_jitdump_add(struct tally_agent *a, const char *name, const void *addr, size_t size)
{
	int rc = a->jitdump_fd < 0 ? open_dump(a) : 0;
	if (rc)
		return rc;
	size_t name_len = strlen(name) + 1;
	struct jit_code_load r = {
		.id = JIT_CODE_LOAD,
		.total_size = (uint32_t)(sizeof(r) + name_len + size),
		.timestamp = monotonic_ns(),
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)gettid(),
		.vma = (uint64_t)(uintptr_t)addr,
		.code_addr = (uint64_t)(uintptr_t)addr,
		.code_size = size,
		.code_index = a->jitdump_index++,
	};
	if (sizeof(r) + name_len + size > UINT32_MAX)
		return err_set(-E2BIG, "agent: JIT region %s too large for jitdump", name);
	if (write_all(a->jitdump_fd, &r, sizeof(r)) || write_all(a->jitdump_fd, name, name_len) ||
	    write_all(a->jitdump_fd, addr, size))
		return err_set(-EIO, "agent: jitdump: write failed");
	return 0;
}

void agent_jitdump_close(struct tally_agent *a)
{
	if (a->jitdump_map)
		munmap(a->jitdump_map, a->jitdump_map_len);
	if (a->jitdump_fd >= 0)
		close(a->jitdump_fd);
	a->jitdump_map = NULL;
	a->jitdump_fd = -1;
}
