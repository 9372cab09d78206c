/*
 * Test driver of replay's Ruby splice (replay/sources/ruby/) on a live ruby held stopped
 * by gdb: reads the main thread's Ruby frames with tally's reader (the thread's FS base as
 * gdb gives it), and names the native stack gdb unwound (its pcs, innermost first) with
 * tally's namer, the Ruby source first, then the ELF source, as replay names a recording's
 * sample. Prints the named stack, outermost first, one frame a line:
 *   KIND<TAB>NAME<TAB>FILE<TAB>LINE
 * Usage: rb_splice PID FS_BASE PC...   (hex FS_BASE and PCs)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "base/err.h"
#include "dwarf/cfi.h"
#include "elf/elf.h"
#include "record/ruby_interp.h"
#include "replay/namer.h"
#include "replay/sources/ruby/ruby.h"

#define MAX_PCS 512
#define MAX_RECORDS 4096

struct rec {
	uint8_t *b;
	size_t n;
};
static struct rec recs[MAX_RECORDS];
static size_t nrecs;

static int keep(const void *payload, size_t size, void *arg)
{
	(void)arg;
	if (nrecs == MAX_RECORDS || !(recs[nrecs].b = malloc(size)))
		return 1;
	memcpy(recs[nrecs].b, payload, size);
	recs[nrecs++].n = size;
	return 0;
}

static int read_mem(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
	return process_vm_readv((pid_t)(uintptr_t)arg, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The module mapped at pc (executable, in /proc/PID/maps) into m, with its load bias. */
static int module_at(int pid, uint64_t pc, struct unw_module *m, uint64_t *bias)
{
	char file[64], line[4352], perms[8], path[4096];
	unsigned long long s, e, off;
	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	FILE *f = fopen(file, "r");
	int r = -1;
	while (f && r && fgets(line, sizeof(line), f)) {
		uint64_t vaddr;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, path) != 5 ||
		    perms[2] != 'x' || pc < s || pc >= e)
			continue;
		memset(m, 0, sizeof(*m));
		m->path = strdup(path);
		m->file = m->path;
		if (!m->path || elf_open(path, &m->elf) || elf_offset_to_vaddr(m->elf, off, &vaddr) ||
		    dwarf_cfi_open_elf(m->elf, NULL, &m->cfi))
			break;
		*bias = s - vaddr;
		r = 0;
	}
	if (f)
		fclose(f);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc - 3 > MAX_PCS)
		return 2;
	int pid = atoi(argv[1]);
	static struct unw_module mods[MAX_PCS];
	static struct unw_frame frames[MAX_PCS];
	size_t n = 0;
	for (int i = 3; i < argc; i++) {
		uint64_t pc = strtoull(argv[i], NULL, 16), bias;
		if (module_at(pid, pc, &mods[n], &bias)) {
			printf("E no module at %llx\n", (unsigned long long)pc);
			return 1;
		}
		frames[n] = (struct unw_frame){ .pc = pc, .mod = &mods[n], .rel = pc - bias };
		n++;
	}
	/* The reader, as the sampler would run it on this stopped thread */
	struct rec_interp_proc proc;
	const struct unw_module *lib = NULL;
	uint64_t lib_start = 0;
	for (size_t i = 0; i < n && !lib; i++)
		if (rec_ruby_interp.may_be(mods[i].path))
			lib = &mods[i];
	char file[64], line[4352], perms[8], path[4096];
	unsigned long long s, e, off, pgoff = 0;
	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	FILE *f = fopen(file, "r");
	while (f && lib && !lib_start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, path) == 5 &&
		    perms[2] == 'x' && !strcmp(path, lib->path)) {
			lib_start = s;
			pgoff = off;
		}
	if (f)
		fclose(f);
	if (!lib || rec_ruby_interp.open((uint32_t)pid, lib->path, lib_start, pgoff, &proc)) {
		printf("E no Ruby to read: %s\n", err_msg());
		return 1;
	}
	struct user_regs_struct regs = { 0 };
	regs.fs_base = strtoull(argv[2], NULL, 16);
	uint64_t cache = 0;
	struct rec_interp_thread th = { (uint32_t)pid, (uint32_t)pid, (uint64_t)pid, &regs, &cache };
	struct rec_mem mem = { read_mem, (void *)(uintptr_t)pid };
	if (proc.ops->walk(proc.self, &mem, &th, keep, NULL)) {
		printf("E the walk failed\n");
		return 1;
	}
	/* Replay: the records, then the sample, through a namer with the Ruby source */
	struct perf_attr_info attr = { 0 };
	attr.attr.type = PERF_TYPE_SOFTWARE;
	attr.attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	struct perf_data d = { 0 };
	d.path = "rb_splice";
	d.attrs = &attr;
	d.nattrs = 1;
	struct replay_frame_source src;
	struct replay_namer *nm;
	if (replay_ruby_source_new(&d, NULL, &src) || !src.ops || replay_namer_new(&src, 1, &nm)) {
		printf("E %s\n", err_msg());
		return 1;
	}
	for (size_t i = 0; i < nrecs; i++) {
		struct perf_event_rec ev = { .type = PERF_RECORD_SAMPLE, .time = 1, .pid = (uint32_t)pid,
					     .tid = (uint32_t)pid, .attr = &attr, .raw_data = recs[i].b,
					     .raw_size = (uint32_t)recs[i].n };
		replay_namer_record(nm, &ev);
	}
	struct perf_attr_info cpu = { 0 };
	struct perf_event_rec sample = { .type = PERF_RECORD_SAMPLE, .time = 1, .pid = (uint32_t)pid,
					 .tid = (uint32_t)pid, .attr = &cpu };
	struct replay_stack st = { .ev = &sample, .frames = frames, .n = n,
				   .end = UNW_END_OUTERMOST, .comm = "" };
	struct replay_sym_stack out;
	if (replay_namer_name(nm, &st, &out)) {
		printf("E %s\n", err_msg());
		return 1;
	}
	for (size_t i = 0; i < out.n; i++) {
		const struct replay_sym_frame *fr = &out.frames[i];
		printf("%s\t%s\t%s\t%u\n", prof_kind_name(fr->kind), fr->function ? fr->function : "?",
		       fr->file ? fr->file : "", fr->line);
	}
	struct replay_quality q = { 0 };
	replay_namer_counters(nm, &q);
	for (size_t i = 0; i < q.ncounted; i++)
		printf("N %s %llu\n", q.counted[i].name, (unsigned long long)q.counted[i].value);
	replay_namer_free(nm);
	proc.ops->free(proc.self);
	return 0;
}
