/*
 * libruby's facts from its exported symbols (lib.h). .dynsym holds ruby_current_ec (a TLS
 * symbol: its value is the offset in the module's block) whose GOT slot .rela.dyn names;
 * ruby_version's bytes are the version. The symbol table, rb_symbols_t global_symbols in
 * symbol.c, is static: rb_id2str (exported) jumps to the function that reads it, which
 * compares the serial with global_symbols.last_id and loads global_symbols.ids, both
 * RIP-relative; the two addresses must be the two fields' or no table is taken.
 */
#include "ruby/lib.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "base/err.h"

bool rb_lib_may_be(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "libruby", 7) && strstr(base, ".so");
}

struct found {
	uint64_t version, version_size, ec_value, id2str, vm_exec, vm_exec_size;
	size_t ec_index;
	bool has_version, has_ec;
};

static void look(const char *name, const Elf64_Sym *s, size_t index, struct found *fd)
{
	if (s->st_shndx == SHN_UNDEF)
		return;
	if (!strcmp(name, "ruby_version")) {
		fd->version = s->st_value;
		fd->version_size = s->st_size;
		fd->has_version = true;
	} else if (!strcmp(name, "ruby_current_ec") && ELF64_ST_TYPE(s->st_info) == STT_TLS) {
		fd->ec_value = s->st_value;
		fd->ec_index = index;
		fd->has_ec = true;
	} else if (!strcmp(name, "rb_id2str")) {
		fd->id2str = s->st_value;
	} else if (!strcmp(name, "rb_vm_exec")) {
		fd->vm_exec = s->st_value;
		fd->vm_exec_size = s->st_size;
	}
}

static int scan_dynsym(struct elf_file *f, struct found *fd)
{
	const uint8_t *syms, *strs;
	size_t nsyms, nstrs;
	if (elf_section_data_by_name(f, ".dynsym", &syms, &nsyms) ||
	    elf_section_data_by_name(f, ".dynstr", &strs, &nstrs)) {
		err_clear();
		return 1;
	}
	for (size_t i = 1; i < nsyms / sizeof(Elf64_Sym); i++) {
		Elf64_Sym s;
		memcpy(&s, syms + i * sizeof(s), sizeof(s));
		if (s.st_name >= nstrs || !memchr(strs + s.st_name, 0, nstrs - s.st_name))
			continue;
		look((const char *)strs + s.st_name, &s, i, fd);
	}
	return fd->has_version && fd->has_ec ? 0 : 1;
}

/* The GOT slot of ruby_current_ec and the model its relocation says. */
static int find_got(struct elf_file *f, const struct found *fd, struct rb_lib *out)
{
	const uint8_t *rela;
	size_t n;
	if (elf_section_data_by_name(f, ".rela.dyn", &rela, &n)) {
		err_clear();
		return -1;
	}
	for (size_t i = 0; i < n / sizeof(Elf64_Rela); i++) {
		Elf64_Rela r;
		memcpy(&r, rela + i * sizeof(r), sizeof(r));
		if (ELF64_R_SYM(r.r_info) != fd->ec_index)
			continue;
		if (ELF64_R_TYPE(r.r_info) == R_X86_64_DTPMOD64)
			out->tls_model = RB_TLS_DYNAMIC;
		else if (ELF64_R_TYPE(r.r_info) == R_X86_64_TPOFF64)
			out->tls_model = RB_TLS_INITIAL_EXEC;
		else
			continue;
		out->ec_got = r.r_offset;
		return 0;
	}
	return -1;
}

static uint64_t rip_target(uint64_t insn_end, const uint8_t *disp)
{
	int32_t d;
	memcpy(&d, disp, 4);
	return insn_end + (uint64_t)(int64_t)d;
}

/* global_symbols from the code rb_id2str jumps to (see the top of the file). */
static uint64_t find_symbols(struct elf_file *f, uint64_t id2str, const struct rb_layout *l)
{
	const uint8_t *b = id2str ? elf_vaddr_bytes(f, id2str, 32) : NULL;
	uint64_t target = 0;
	for (size_t i = 0; b && i + 5 <= 32 && !target; i++)
		if (b[i] == 0xe9)
			target = rip_target(id2str + i + 5, b + i + 1);
	const uint8_t *t = target ? elf_vaddr_bytes(f, target, 192) : NULL;
	uint64_t last_id = 0, ids = 0;
	for (size_t i = 0; t && i + 7 <= 192; i++) {
		if (!last_id && t[i] == 0x39 && t[i + 1] == 0x3d) /* cmp %edi,disp(%rip) */
			last_id = rip_target(target + i + 6, t + i + 2);
		if (!ids && t[i] == 0x48 && t[i + 1] == 0x8b && t[i + 2] == 0x3d) /* mov ,%rdi */
			ids = rip_target(target + i + 7, t + i + 3);
	}
	if (!last_id || ids - last_id != (uint64_t)(l->symbols_ids - l->symbols_last_id))
		return 0;
	return last_id - l->symbols_last_id;
}

int rb_lib_read(struct elf_file *f, struct rb_lib *out)
{
	struct found fd = { 0 };
	memset(out, 0, sizeof(*out));
	if (f->machine != EM_X86_64 || !f->is64 || scan_dynsym(f, &fd))
		return 1;
	uint64_t n = fd.version_size < sizeof(out->version) ? fd.version_size
							     : sizeof(out->version) - 1;
	const uint8_t *v = n ? elf_vaddr_bytes(f, fd.version, n) : NULL;
	if (!v)
		return err_set(-EINVAL, "%s: ruby_version is not in the file", f->path);
	memcpy(out->version, v, n);
	out->version[strnlen(out->version, n)] = 0;
	if (!(out->layout = rb_layout_for(out->version)))
		return err_set(-ENOTSUP,
			       "%s: Ruby %s has no layout in tally (it knows Ruby %s): native frames only",
			       f->path, out->version, rb_layout_versions());
	if (find_got(f, &fd, out))
		return err_set(-EINVAL, "%s: no GOT slot for ruby_current_ec", f->path);
	out->ec_offset = fd.ec_value;
	out->global_symbols = find_symbols(f, fd.id2str, out->layout);
	out->vm_exec_lo = fd.vm_exec;
	out->vm_exec_hi = fd.vm_exec + fd.vm_exec_size;
	return 0;
}
