/*
 * libFuzzer target: type layouts (dwarf/types.c) and the CPython layout built on them
 * (cpython/layout.c), on a whole ELF file. Looks up the types and member paths of the seed
 * programs (tests/dwarf/src/layouts.h and CPython 3.11's names) and their sizes, then
 * loads the CPython layout from the file's own DWARF (no debuginfod).
 */
#include <stddef.h>
#include <stdint.h>

#include "cpython/layout.h"
#include "dwarf/types.h"

static const char *const types[] = {
	"struct outer", "outer_t", "union top_union", "elsewhere_t", "struct _ts",
	"PyASCIIObject", "_PyRuntimeState", "PyCodeObject", "int", "enum e",
};
static const char *const paths[] = {
	"tag", "nested.wide", "nested.u_int", "array", "bits_c", "u.lo", "state.kind",
	"third", "interpreters.head", "threads.head", "cframe", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q",
};

static void look_up(struct dwarf *d)
{
	struct dwarf_types *t;
	if (dwarf_types_open(d, &t))
		return;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		uint64_t type, size, stripped;
		uint16_t tag;
		if (dwarf_type_find(t, types[i], &type))
			continue;
		dwarf_type_size(t, type, &size);
		dwarf_type_strip(t, type, &stripped, &tag);
		for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
			struct dwarf_member m;
			if (!dwarf_type_member(t, type, paths[p], &m) && m.type)
				dwarf_type_size(t, m.type, &size);
		}
	}
	dwarf_types_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *elf;
	if (elf_open_mem("fuzz", data, size, &elf))
		return 0;
	struct dwarf *d;
	if (!dwarf_open(elf, &d)) {
		look_up(d);
		dwarf_close(d);
	}
	struct cpy_layout l = { .sz = sizeof(l) };
	struct cpy_layout_opts opts = { .sz = sizeof(opts), .debug_dir = "/nonexistent",
					.no_debuginfod = true };
	cpy_layout_load_elf(elf, &opts, &l);
	elf_close(elf);
	return 0;
}
