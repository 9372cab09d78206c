/*
 * jit-PID.dump, the file perf's `perf inject --jit` reads to give JIT code names and
 * bytes (tools/perf/Documentation/jitdump-specification.txt): a 40-byte header, then one
 * JIT_CODE_LOAD record per region, each with the region's name and a copy of its code.
 * perf finds the file through an executable mapping of it that the recording sees, so it
 * stays mapped (PROT_EXEC, never executed) while the agent lives. Timestamps are
 * CLOCK_MONOTONIC, what `perf record -k 1` uses.
 *
 * Mixed mode's registry is a jitdump too, tally-vm-PID-N.dump, in the VM's pc space: one
 * JIT_CODE_LOAD per function (code_addr its first pc, code_size its pc range, code_index
 * its id, no bytes: pcs need not be bytes), after a JIT_CODE_DEBUG_INFO with its pc ->
 * line table. It is never mapped, so perf inject does not take VM pcs for addresses.
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
#define JIT_CODE_DEBUG_INFO 2
/* Line entries' addresses count from a 64-byte ELF header before the code (what perf
 * inject makes of a dump; replay/sources/jitdump/read.c says more). */
#define JIT_ELF_HEADER 64

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

struct jit_debug_info {
	uint32_t id, total_size;
	uint64_t timestamp, code_addr, nr_entry;
};

struct jit_debug_entry {
	uint64_t addr;
	int32_t lineno, discrim;
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

/* A new dump at path with its header: the descriptor, or a negative code (message set). */
static int create_dump(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	struct jit_header h = { JITDUMP_MAGIC, JITDUMP_VERSION, sizeof(h), elf_machine(), 0,
				(uint32_t)getpid(), monotonic_ns(), 0 };
	if (write_all(fd, &h, sizeof(h))) {
		close(fd);
		unlink(path);
		return err_set(-EIO, "%s: cannot write the jitdump", path);
	}
	return fd;
}

/* Under the agent's lock. */
static int open_dump(struct tally_agent *a)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/jit-%d.dump", a->o.jit_dir, (int)getpid());
	int fd = create_dump(path);
	if (fd < 0)
		return fd;
	long page = sysconf(_SC_PAGESIZE);
	void *marker = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (marker == MAP_FAILED) {
		close(fd);
		unlink(path);
		return err_set(-EIO, "%s: cannot map the jitdump", path);
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

/* f's line table as a JIT_CODE_DEBUG_INFO: its entries, or one for its first line when it
 * has none (the frame's file and line are still known). The file name is written in full
 * once, then as "\xff", the specification's "same as before". */
static int write_lines(int fd, const struct agent_fn *f, uint64_t time)
{
	const char *file = f->file ? f->file : "";
	size_t n = f->nlines ? f->nlines : 1, flen = strlen(file) + 1;
	struct jit_debug_info h = { JIT_CODE_DEBUG_INFO, 0, time, f->start, n };
	uint64_t size = sizeof(h) + n * (sizeof(struct jit_debug_entry) + 2) + flen - 2;
	if (size > UINT32_MAX)
		return err_set(-E2BIG, "agent: %s: line table too large for jitdump", f->name);
	h.total_size = (uint32_t)size;
	if (write_all(fd, &h, sizeof(h)))
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		uint64_t pc = f->nlines ? f->lines[i].pc : f->start;
		uint32_t line = f->nlines ? f->lines[i].line : f->line;
		/* An entry before the function's start would wrap: it is at the start. */
		struct jit_debug_entry e = { f->start + JIT_ELF_HEADER + (pc > f->start ? pc - f->start : 0),
					     (int32_t)line, 0 };
		if (write_all(fd, &e, sizeof(e)) ||
		    (i ? write_all(fd, "\xff", 2) : write_all(fd, file, flen)))
			return -EIO;
	}
	return 0;
}

static int vmdump_open(struct tally_agent *a)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tally-vm-%d-%u.dump", a->o.jit_dir, (int)getpid(),
		 a->number);
	int fd = create_dump(path);
	if (fd < 0)
		return fd;
	a->vmdump_fd = fd;
	return 0;
}

int agent_vmdump_add(struct tally_agent *a, uint32_t id, const struct agent_fn *f)
{
	int rc = a->vmdump_fd < 0 ? vmdump_open(a) : 0;
	if (rc)
		return rc;
	uint64_t time = monotonic_ns();
	size_t name_len = strlen(f->name) + 1;
	/* A function of no pcs is still one: a range of one pc keeps the load valid. */
	uint64_t size = f->end > f->start ? f->end - f->start : 1;
	struct jit_code_load r = {
		.id = JIT_CODE_LOAD,
		.total_size = (uint32_t)(sizeof(r) + name_len),
		.timestamp = time,
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)gettid(),
		.vma = f->start,
		.code_addr = f->start,
		.code_size = size,
		.code_index = id,
	};
	if (name_len > UINT32_MAX - sizeof(r))
		return err_set(-E2BIG, "agent: function name too long for jitdump");
	if (write_lines(a->vmdump_fd, f, time) || write_all(a->vmdump_fd, &r, sizeof(r)) ||
	    write_all(a->vmdump_fd, f->name, name_len))
		return err_set(-EIO, "agent: the registry of mixed mode: write failed");
	return 0;
}

int agent_vmdump_rewrite(struct tally_agent *a)
{
	int rc = vmdump_open(a);
	for (uint32_t id = 1; !rc && id < a->next_id; id++) {
		const struct agent_fn *f = agent_fn_get(a, id);
		if (f)
			rc = agent_vmdump_add(a, id, f);
	}
	return rc;
}

void agent_vmdump_close(struct tally_agent *a)
{
	if (a->vmdump_fd >= 0)
		close(a->vmdump_fd);
	a->vmdump_fd = -1;
}
