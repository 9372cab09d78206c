/*
 * CPython 3.11's layout from the interpreter's debug information (see layout.h). The
 * version comes first, from the Py_Version constant (3.11 added it), so that another
 * version is refused by name before anything is looked up; then every offset comes from
 * the DWARF by a table of (type, member path, field, size), and a field whose size is not
 * the one the readers assume is refused too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/opts.h"
#include "cpython/layout.h"
#include "dwarf/dwarf.h"
#include "dwarf/types.h"

#define SYM_SIZE 24 /* sizeof(Elf64_Sym) */
#define SHT_SYMTAB_ 2
#define SHT_DYNSYM_ 11
#define SHN_UNDEF_ 0

enum wanted_sym {
	SYM_RUNTIME,
	SYM_CODE_TYPE,
	SYM_VERSION,
	SYM_EVAL,
	SYM_EVAL_COLD,
	SYM_INITIALIZE,
	NSYMS
};
static const char *const sym_names[NSYMS] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_VERSION] = "Py_Version",
	[SYM_EVAL] = "_PyEval_EvalFrameDefault",
	[SYM_EVAL_COLD] = "_PyEval_EvalFrameDefault.cold",
	[SYM_INITIALIZE] = "Py_Initialize", /* every CPython: tells an old one from no Python */
};

struct found_sym {
	bool found;
	uint64_t addr, size;
};

/* Looks up the wanted names among the defined symbols of one table (SHT_SYMTAB or
 * SHT_DYNSYM), keeping what an earlier table found: false when the file has no such
 * table. Only 64-bit little-endian files come here. */
static bool scan_symbols(struct elf_file *elf, uint32_t type, struct found_sym *found,
			 size_t nwanted)
{
	for (size_t i = 0; i < elf->nsections; i++) {
		struct elf_section *s = &elf->sections[i];
		if (s->type != type || s->link >= elf->nsections)
			continue;
		const uint8_t *syms, *strs;
		size_t nbytes, strsize;
		if (elf_section_data(elf, s, &syms, &nbytes) ||
		    elf_section_data(elf, &elf->sections[s->link], &strs, &strsize))
			return true;
		struct cur c = cur_make(syms, nbytes, false);
		while (cur_left(&c) >= SYM_SIZE) {
			uint32_t name = cur_u32(&c);
			cur_skip(&c, 2); /* st_info, st_other */
			uint16_t shndx = cur_u16(&c);
			uint64_t value = cur_u64(&c), size = cur_u64(&c);
			if (shndx == SHN_UNDEF_ || name >= strsize)
				continue;
			const char *n = (const char *)strs + name;
			size_t max = strsize - name;
			for (size_t w = 0; w < nwanted; w++)
				if (!found[w].found && strnlen(n, max) < max && !strcmp(n, sym_names[w]))
					found[w] = (struct found_sym){ true, value, size };
		}
		return true;
	}
	return false;
}

static void find_symbols(struct elf_file *elf, struct found_sym *found, size_t nwanted)
{
	if (!elf->is64 || elf->big_endian)
		return;
	scan_symbols(elf, SHT_DYNSYM_, found, nwanted);
	scan_symbols(elf, SHT_SYMTAB_, found, nwanted);
}

/* CPython exports _PyRuntime for extension modules, so .dynsym has it; .symtab, which can
 * be large, is read only for a file without dynamic symbols (a static executable). */
bool cpy_is_interpreter(struct elf_file *elf)
{
	struct found_sym runtime = { 0 };
	if (!elf->is64 || elf->big_endian)
		return false;
	if (!scan_symbols(elf, SHT_DYNSYM_, &runtime, 1))
		scan_symbols(elf, SHT_SYMTAB_, &runtime, 1);
	return runtime.found;
}

/* PY_VERSION_HEX from the Py_Version constant: 0, or -ENOENT without it (before 3.11). */
static int read_version(struct elf_file *elf, const struct found_sym *sym, uint32_t *hex)
{
	uint64_t off;
	if (!sym->found || sym->size < 4 || elf_vaddr_to_offset(elf, sym->addr, &off) ||
	    off > elf->size || elf->size - off < 4)
		return -ENOENT;
	struct cur c = cur_make(elf->map + off, 4, false);
	*hex = cur_u32(&c);
	return 0;
}

/* One offset the layout needs: member path of type, stored at out (a uint32_t in struct
 * cpy_layout), whose type must be size bytes (0: any). */
struct field {
	const char *type, *path;
	size_t out;
	uint8_t size;
};
#define FIELD(type, path, member, size) { type, path, offsetof(struct cpy_layout, member), size }
static const struct field fields[] = {
	FIELD("_PyRuntimeState", "interpreters.head", runtime.interpreters_head, 8),
	FIELD("struct _is", "next", interp.next, 8),
	FIELD("struct _is", "threads.head", interp.threads_head, 8),
	FIELD("struct _ts", "next", thread.next, 8),
	FIELD("struct _ts", "interp", thread.interp, 8),
	FIELD("struct _ts", "native_thread_id", thread.native_thread_id, 8),
	FIELD("struct _ts", "thread_id", thread.thread_id, 8),
	FIELD("struct _ts", "cframe", thread.cframe, 8),
	FIELD("struct _PyCFrame", "current_frame", cframe.current_frame, 8),
	FIELD("struct _PyInterpreterFrame", "f_code", frame.f_code, 8),
	FIELD("struct _PyInterpreterFrame", "previous", frame.previous, 8),
	FIELD("struct _PyInterpreterFrame", "prev_instr", frame.prev_instr, 8),
	FIELD("struct _PyInterpreterFrame", "is_entry", frame.is_entry, 1),
	FIELD("struct _PyInterpreterFrame", "owner", frame.owner, 1),
	FIELD("PyCodeObject", "co_qualname", code.qualname, 8),
	FIELD("PyCodeObject", "co_name", code.name, 8),
	FIELD("PyCodeObject", "co_filename", code.filename, 8),
	FIELD("PyCodeObject", "co_firstlineno", code.firstlineno, 4),
	FIELD("PyCodeObject", "co_linetable", code.linetable, 8),
	FIELD("PyCodeObject", "co_code_adaptive", code.code_adaptive, 0),
	FIELD("PyCodeObject", "_co_firsttraceable", code.firsttraceable, 4),
	FIELD("PyObject", "ob_type", object.ob_type, 8),
	FIELD("PyVarObject", "ob_size", object.ob_size, 8),
	FIELD("PyBytesObject", "ob_sval", object.bytes_sval, 0),
	FIELD("PyASCIIObject", "length", unicode.length, 8),
	FIELD("PyCompactUnicodeObject", "utf8_length", unicode.utf8_length, 8),
	FIELD("PyCompactUnicodeObject", "utf8", unicode.utf8, 8),
};

struct bitfield {
	const char *type, *path;
	size_t out; /* a struct cpy_bitfield in struct cpy_layout */
};
#define BITFIELD(type, path, member) { type, path, offsetof(struct cpy_layout, member) }
static const struct bitfield bitfields[] = {
	BITFIELD("PyASCIIObject", "state.kind", unicode.kind),
	BITFIELD("PyASCIIObject", "state.compact", unicode.compact),
	BITFIELD("PyASCIIObject", "state.ascii", unicode.ascii),
	BITFIELD("PyASCIIObject", "state.ready", unicode.ready),
};

struct type_size {
	const char *type;
	size_t out;
};
static const struct type_size type_sizes[] = {
	{ "PyASCIIObject", offsetof(struct cpy_layout, unicode.ascii_size) },
	{ "PyCompactUnicodeObject", offsetof(struct cpy_layout, unicode.compact_size) },
};

static int layout_bad(const char *path, const char *type, const char *member, const char *what)
{
	return err_set(CPY_E_LAYOUT, "%s: CPython's %s%s%s %s in the debug information", path,
		       type, member ? "." : "", member ? member : "", what);
}

static int find_type(struct dwarf_types *types, const char *path, const char *name,
		     uint64_t *type)
{
	int err = dwarf_type_find(types, name, type);
	if (err == -ENOENT)
		return layout_bad(path, name, NULL, "is missing");
	return err;
}

static int find_member(struct dwarf_types *types, const char *path, const char *type_name,
		       const char *member, struct dwarf_member *m)
{
	uint64_t type;
	int err = find_type(types, path, type_name, &type);
	if (err)
		return err;
	err = dwarf_type_member(types, type, member, m);
	if (err == -ENOENT)
		return layout_bad(path, type_name, member, "is missing");
	if (!err && m->offset > UINT32_MAX)
		return layout_bad(path, type_name, member, "lies beyond 4 GiB");
	return err;
}

static int read_fields(struct dwarf_types *types, const char *path, struct cpy_layout *l)
{
	char *base = (char *)l;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field *f = &fields[i];
		struct dwarf_member m;
		int err = find_member(types, path, f->type, f->path, &m);
		if (err)
			return err;
		if (m.bit_size || (f->size && m.size != f->size)) {
			char what[64];
			snprintf(what, sizeof(what), "is %llu bytes%s, not %u",
				 (unsigned long long)m.size, m.bit_size ? " (a bit-field)" : "",
				 f->size);
			return layout_bad(path, f->type, f->path, what);
		}
		uint32_t off = (uint32_t)m.offset;
		memcpy(base + f->out, &off, sizeof(off));
	}
	for (size_t i = 0; i < sizeof(bitfields) / sizeof(bitfields[0]); i++) {
		const struct bitfield *f = &bitfields[i];
		struct dwarf_member m;
		int err = find_member(types, path, f->type, f->path, &m);
		if (err)
			return err;
		if (!m.bit_size || m.bit_size > 32 || m.bit_offset > UINT32_MAX)
			return layout_bad(path, f->type, f->path, "is not a bit-field of 1 to 32 bits");
		struct cpy_bitfield bf = { (uint32_t)m.bit_offset, m.bit_size };
		memcpy(base + f->out, &bf, sizeof(bf));
	}
	for (size_t i = 0; i < sizeof(type_sizes) / sizeof(type_sizes[0]); i++) {
		uint64_t type, size;
		int err = find_type(types, path, type_sizes[i].type, &type);
		if (err)
			return err;
		if ((err = dwarf_type_size(types, type, &size)) == -ENOENT || size > UINT32_MAX)
			return layout_bad(path, type_sizes[i].type, NULL, "has no size");
		if (err)
			return err;
		uint32_t sz = (uint32_t)size;
		memcpy(base + type_sizes[i].out, &sz, sizeof(sz));
	}
	return 0;
}

/* Whether f's DWARF describes CPython's thread state: a module built with -g carries its
 * own; a stripped one only a few units, or none. */
static int layout_from(struct elf_file *f, const char *path, struct cpy_layout *l)
{
	struct dwarf *d;
	int err = dwarf_open(f, &d);
	if (err)
		return err;
	struct dwarf_types *types;
	if ((err = dwarf_types_open(d, &types))) {
		dwarf_close(d);
		return err;
	}
	uint64_t ts;
	err = dwarf_type_find(types, "struct _ts", &ts);
	if (!err)
		err = read_fields(types, path, l);
	else if (err == -ENOENT && d->unsupported)
		err = err_set(CPY_E_NO_DEBUG_INFO, "%s: its debug information (%s) uses %s, which "
			      "tally does not read", path, f->path, d->unsupported);
	dwarf_types_close(types);
	dwarf_close(d);
	return err;
}

static int no_debug_info(struct elf_file *elf)
{
	const uint8_t *id;
	size_t len;
	char hex[2 * 64 + 1] = "";
	if (!elf_build_id(elf, &id, &len))
		for (size_t i = 0; i < len && i < 64; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return err_set(CPY_E_NO_DEBUG_INFO,
		       "%s: no debug information for CPython's structures%s%s%s; install the "
		       "interpreter's debug symbols (Debian: python3.11-dbg, or "
		       "libpython3.11-dbg for libpython3.11.so) or point DEBUGINFOD_URLS at a "
		       "debuginfod server",
		       elf->path, *hex ? " (build-id " : "", hex, *hex ? ")" : "");
}

/* The layout from the module's own DWARF, else from its separate debug file, whose symbol
 * table also gives the symbols a stripped module lacks (the local .cold part). */
static int layout_from_debug_info(struct elf_file *elf, const struct cpy_layout_opts *opts,
				  struct cpy_layout *l, struct found_sym *syms)
{
	int err = layout_from(elf, elf->path, l);
	if (err != -ENOENT)
		return err;
	struct elf_file *dbg = NULL;
	err = elf_open_debug_file(elf, opts->debug_dir, elf_debug_cache_dir(), &dbg);
	if (err == -ENOENT && !opts->no_debuginfod)
		err = elf_debuginfod_open(elf, &dbg);
	if (err)
		return err == -ENOENT ? no_debug_info(elf) : err;
	err = layout_from(dbg, elf->path, l);
	if (!err)
		find_symbols(dbg, syms, NSYMS);
	elf_close(dbg);
	return err == -ENOENT ? no_debug_info(elf) : err;
}

static int check_version(struct elf_file *elf, const struct found_sym *sym, uint32_t *hex)
{
	if (read_version(elf, sym, hex))
		return err_set(CPY_E_VERSION,
			       "%s: a CPython older than 3.11 (it has no Py_Version); only "
			       "CPython 3.11's frames are understood",
			       elf->path);
	if (*hex >> 16 != CPY_VERSION_MAJOR_MINOR)
		return err_set(CPY_E_VERSION,
			       "%s: CPython %u.%u (Py_Version 0x%08x); only CPython 3.11's frames "
			       "are understood",
			       elf->path, *hex >> 24, (*hex >> 16) & 0xff, *hex);
	return 0;
}

int cpy_layout_load_elf(struct elf_file *elf, const struct cpy_layout_opts *caller_opts,
			struct cpy_layout *out)
{
	struct cpy_layout_opts opts;
	int err = OPTS_READ(cpy_layout_opts, no_debuginfod, &opts, caller_opts);
	if (err)
		return err;
	if (!out || out->sz < sizeof(out->sz))
		return err_set(-EINVAL, "cpy_layout_load: the layout's sz is not set");
	struct found_sym syms[NSYMS] = { { 0 } };
	find_symbols(elf, syms, NSYMS);
	if (!syms[SYM_RUNTIME].found && syms[SYM_INITIALIZE].found)
		return err_set(CPY_E_VERSION,
			       "%s: a CPython older than 3.7 (it has no _PyRuntime); only CPython "
			       "3.11's frames are understood",
			       elf->path);
	if (!syms[SYM_RUNTIME].found)
		return err_set(CPY_E_NOT_INTERPRETER,
			       "%s: not a CPython interpreter (it does not define _PyRuntime)",
			       elf->path);
	struct cpy_layout l = { .sz = sizeof(l) };
	if ((err = check_version(elf, &syms[SYM_VERSION], &l.version_hex)))
		return err;
	if ((err = layout_from_debug_info(elf, &opts, &l, syms)))
		return err;
	if (!syms[SYM_CODE_TYPE].found || !syms[SYM_EVAL].found)
		return err_set(CPY_E_LAYOUT, "%s: no symbol %s", elf->path,
			       syms[SYM_CODE_TYPE].found ? sym_names[SYM_EVAL]
							 : sym_names[SYM_CODE_TYPE]);
	l.runtime_addr = syms[SYM_RUNTIME].addr;
	l.code_type_addr = syms[SYM_CODE_TYPE].addr;
	l.eval_lo = syms[SYM_EVAL].addr;
	l.eval_hi = l.eval_lo + syms[SYM_EVAL].size;
	if (syms[SYM_EVAL_COLD].found) {
		l.eval_cold_lo = syms[SYM_EVAL_COLD].addr;
		l.eval_cold_hi = l.eval_cold_lo + syms[SYM_EVAL_COLD].size;
	}
	size_t sz = out->sz < sizeof(l) ? out->sz : sizeof(l);
	memcpy((char *)out + sizeof(out->sz), (char *)&l + sizeof(l.sz), sz - sizeof(l.sz));
	return 0;
}

int cpy_layout_load(const char *elf_path, const struct cpy_layout_opts *opts,
		    struct cpy_layout *out)
{
	struct elf_file *elf;
	int err = elf_open(elf_path, &elf);
	if (err)
		return err;
	err = cpy_layout_load_elf(elf, opts, out);
	elf_close(elf);
	return err;
}

int cpy_bitfield_get(const struct cpy_bitfield *bf, const uint8_t *obj, size_t n,
		     uint32_t *value)
{
	if (!bf->bit_size || bf->bit_size > 32)
		return -ERANGE;
	uint64_t first = bf->bit_offset / 8, last = ((uint64_t)bf->bit_offset + bf->bit_size - 1) / 8;
	if (last >= n)
		return -ERANGE;
	uint64_t word = 0;
	for (uint64_t i = first; i <= last; i++)
		word |= (uint64_t)obj[i] << (8 * (i - first));
	word >>= bf->bit_offset % 8;
	*value = (uint32_t)(word & ((1ull << bf->bit_size) - 1));
	return 0;
}
