/*
 * Ruby as the ptrace sampler sees an interpreter (record/interp.h): a mapping of libruby
 * makes its process one to read; its facts come from the file once (ruby/lib.h), its load
 * bias from where the mapping lies. The file is opened through /proc/PID/root first, so
 * that a process in another mount namespace gets its own libruby read.
 */
#include "record/ruby_interp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "elf/elf.h"
#include "record/ruby_walk.h"

static int walk(void *self, const struct rec_mem *mem, const struct rec_interp_thread *th,
		rec_interp_emit_fn emit, void *arg)
{
	return rec_rb_walk(self, mem, th, emit, arg);
}

static void regen(void *self)
{
	rec_rb_proc_regen(self);
}

static void free_proc(void *self)
{
	rec_rb_proc_free(self);
	free(self);
}

static const struct rec_interp_ops ruby_ops = { walk, regen, free_proc };

static int open_file(uint32_t pid, const char *path, struct elf_file **f)
{
	char root[4096];
	snprintf(root, sizeof(root), "/proc/%u/root%s", pid, path);
	if (!elf_open(root, f))
		return 0;
	err_clear();
	return elf_open(path, f);
}

int rec_ruby_open(uint32_t pid, const char *path, uint64_t start, uint64_t pgoff,
		  struct rec_interp_proc *out)
{
	struct elf_file *f;
	struct rb_lib lib;
	uint64_t vaddr;
	int r = open_file(pid, path, &f);
	if (r)
		return r;
	r = rb_lib_read(f, &lib);
	if (!r && elf_offset_to_vaddr(f, pgoff, &vaddr))
		r = err_set(-EINVAL, "%s: file offset 0x%llx is in no segment", path,
			    (unsigned long long)pgoff);
	elf_close(f);
	if (r)
		return r;
	struct rec_rb_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(-ENOMEM, "out of memory");
	p->lib = lib;
	p->bias = start - vaddr;
	*out = (struct rec_interp_proc){ &ruby_ops, p };
	return 0;
}

const struct rec_interp_type rec_ruby_interp = { "Ruby", rb_lib_may_be, rec_ruby_open };
