/*
 * CPython 3.8-3.13's layout (see layout.h). The version comes first, from the Py_Version
 * constant (3.11 added it; before, the PY_VERSION string Py_GetVersion() formats), so that
 * another version is refused by name before anything is looked up. 3.13's offsets then
 * come from its _Py_DebugOffsets (debug_offsets.c); 3.8-3.12's from the DWARF by a table
 * of (versions, type, member path, field, size), and a
 * field whose size is not the one the readers assume is refused too; without debug
 * information, from tally's own table for the version (layout_table.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/opts.h"
#include "cpython/code.h"
#include "cpython/layout.h"
#include "cpython/layout_table.h"
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
	SYM_BYTES_TYPE,
	SYM_UNICODE_TYPE,
	SYM_REF_TOTAL,
	SYM_GET_VERSION,
	NSYMS
};
static const char *const sym_names[NSYMS] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_VERSION] = "Py_Version",
	[SYM_EVAL] = "_PyEval_EvalFrameDefault",
	[SYM_EVAL_COLD] = "_PyEval_EvalFrameDefault.cold",
	[SYM_INITIALIZE] = "Py_Initialize", /* every CPython: tells an old one from no Python */
	[SYM_BYTES_TYPE] = "PyBytes_Type",
	[SYM_UNICODE_TYPE] = "PyUnicode_Type",
	[SYM_REF_TOTAL] = "_Py_RefTotal", /* a debug build's (Py_REF_DEBUG) */
	[SYM_GET_VERSION] = "Py_GetVersion",
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
	const uint8_t *p = sym->found && sym->size >= 4 ? elf_vaddr_bytes(elf, sym->addr, 4) : NULL;
	if (!p)
		return -ENOENT;
	struct cur c = cur_make(p, 4, false);
	*hex = cur_u32(&c);
	return 0;
}

#define EM_X86_64_ 62
#define VERSION_MAX 24 /* "3.10.13rc2+" and room to spare */

/* Whether s (NUL-terminated within n bytes) reads as a PY_VERSION: "3.MINOR.MICRO", then
 * an optional a/b/rc and serial, an optional "+" (a build between releases). 0 and the
 * PY_VERSION_HEX it stands for, or -EINVAL. */
static int parse_py_version(const char *s, size_t n, uint32_t *hex)
{
	if (!memchr(s, 0, n))
		return -EINVAL;
	unsigned long part[3];
	const char *p = s;
	for (int i = 0; i < 3; i++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		char *end;
		part[i] = strtoul(p, &end, 10);
		if (end - p > 3 || part[i] > 255 || (i < 2 && *end != '.'))
			return -EINVAL;
		p = end + (i < 2);
	}
	unsigned level = 0xf, serial = 0;
	if (*p == 'a' || *p == 'b' || (p[0] == 'r' && p[1] == 'c')) {
		level = *p == 'a' ? 0xa : *p == 'b' ? 0xb : 0xc;
		p += *p == 'r' ? 2 : 1;
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (!isdigit((unsigned char)*p) || v > 15)
			return -EINVAL;
		serial = (unsigned)v;
		p = end;
	}
	if (*p == '+')
		p++;
	if (*p || part[0] != 3)
		return -EINVAL;
	*hex = (uint32_t)(part[0] << 24 | part[1] << 16 | part[2] << 8 | level << 4 | serial);
	return 0;
}

/* Where the instruction at code[i] (of n bytes, at link-time address at) loads a constant
 * address: a rip-relative lea (REX.W 8D, ModRM mod 00 rm 101: position-independent code),
 * or a mov of an absolute 32-bit immediate (B8+r, or REX.W C7 /0 sign-extended: code
 * linked without -pie). 0 and *target, or -ENOENT. */
static int address_loaded(const uint8_t *code, uint64_t n, uint64_t i, uint64_t at,
			  uint64_t *target)
{
	struct cur c;
	if (i + 7 <= n && (code[i] & 0xf8) == 0x48 && code[i + 1] == 0x8d &&
	    (code[i + 2] & 0xc7) == 0x05) {
		c = cur_make(code + i + 3, 4, false);
		*target = at + i + 7 + (uint64_t)(int64_t)(int32_t)cur_u32(&c);
		return 0;
	}
	if (i + 5 <= n && (code[i] & 0xf8) == 0xb8) {
		c = cur_make(code + i + 1, 4, false);
		*target = cur_u32(&c);
		return 0;
	}
	if (i + 7 <= n && (code[i] & 0xf8) == 0x48 && code[i + 1] == 0xc7 &&
	    (code[i + 2] & 0xf8) == 0xc0) {
		c = cur_make(code + i + 3, 4, false);
		*target = (uint64_t)(int64_t)(int32_t)cur_u32(&c);
		return 0;
	}
	return -ENOENT;
}

/* PY_VERSION_HEX before Py_Version: Py_GetVersion() formats "%.80s (%.80s) %.80s" with
 * PY_VERSION first, a string constant whose address it loads (address_loaded: a lea, or a
 * mov in a build without -pie). Its bytes are searched, at every offset, for such
 * instructions whose target reads as a version; the linker may have merged the constant
 * into the tail of a longer string (pyenv's "/root/.pyenv/versions/3.10.13"), so only the
 * target is looked at, and exactly one version must be found. 0, or -ENOENT. */
static int read_version_string(struct elf_file *elf, const struct found_sym *fn, uint32_t *hex)
{
	const uint8_t *code = fn->found && elf->machine == EM_X86_64_ && fn->size >= 7 &&
				      fn->size <= 4096 ? elf_vaddr_bytes(elf, fn->addr, fn->size) : NULL;
	if (!code)
		return -ENOENT;
	int found = 0;
	for (uint64_t i = 0; i < fn->size; i++) {
		uint64_t target, toff;
		uint32_t v;
		if (address_loaded(code, fn->size, i, fn->addr, &target) ||
		    elf_vaddr_to_offset(elf, target, &toff) || toff >= elf->size)
			continue;
		size_t room = elf->size - toff < VERSION_MAX ? elf->size - toff : VERSION_MAX;
		if (parse_py_version((const char *)elf->map + toff, room, &v))
			continue;
		if (found && v != *hex)
			return -ENOENT;
		*hex = v;
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

/* One offset the layout needs: member path of type, stored at out (a uint32_t in struct
 * cpy_layout), whose type must be size bytes (0: any), in the versions of the mask
 * (bits of enum cpy_variant). */
#define V11 (1u << CPY_VARIANT_311)
#define V12 (1u << CPY_VARIANT_312)
#define V13 (1u << CPY_VARIANT_313)
#define V08 (1u << CPY_VARIANT_38)
#define V09 (1u << CPY_VARIANT_39)
#define V10 (1u << CPY_VARIANT_310)
#define VNEW (V11 | V12 | V13)
#define VOLD (V08 | V09 | V10)
#define VALL (VNEW | VOLD)
struct field {
	uint8_t versions;
	const char *type, *path;
	size_t out;
	uint8_t size;
};
#define FIELD(v, type, path, member, size) \
	{ v, type, path, offsetof(struct cpy_layout, member), size }
static const struct field fields[] = {
	FIELD(VALL, "_PyRuntimeState", "interpreters.head", runtime.interpreters_head, 8),
	FIELD(VALL, "struct _is", "next", interp.next, 8),
	FIELD(VNEW, "struct _is", "threads.head", interp.threads_head, 8),
	FIELD(VOLD, "struct _is", "tstate_head", interp.threads_head, 8),
	FIELD(VALL, "struct _ts", "next", thread.next, 8),
	FIELD(VALL, "struct _ts", "interp", thread.interp, 8),
	FIELD(VNEW, "struct _ts", "native_thread_id", thread.native_thread_id, 8),
	FIELD(VALL, "struct _ts", "thread_id", thread.thread_id, 8),
	FIELD(V11 | V12, "struct _ts", "cframe", thread.cframe, 8),
	FIELD(V13, "struct _ts", "current_frame", thread_current_frame, 8),
	FIELD(VOLD, "struct _ts", "frame", thread_current_frame, 8),
	FIELD(VOLD, "struct _frame", "f_code", frame.f_code, 8),
	FIELD(VOLD, "struct _frame", "f_back", frame.previous, 8),
	FIELD(VOLD, "struct _frame", "f_lasti", frame_lasti, 4),
	FIELD(V11 | V12, "struct _PyCFrame", "current_frame", cframe.current_frame, 8),
	FIELD(V11 | V12, "struct _PyInterpreterFrame", "f_code", frame.f_code, 8),
	FIELD(V13, "struct _PyInterpreterFrame", "f_executable", frame.f_code, 8),
	FIELD(VNEW, "struct _PyInterpreterFrame", "previous", frame.previous, 8),
	FIELD(V11 | V12, "struct _PyInterpreterFrame", "prev_instr", frame.prev_instr, 8),
	FIELD(V13, "struct _PyInterpreterFrame", "instr_ptr", frame.prev_instr, 8),
	FIELD(V11, "struct _PyInterpreterFrame", "is_entry", frame.is_entry, 1),
	FIELD(VNEW, "struct _PyInterpreterFrame", "owner", frame.owner, 1),
	FIELD(VNEW, "PyCodeObject", "co_qualname", code.qualname, 8),
	FIELD(VOLD, "PyCodeObject", "co_name", code.qualname, 8), /* no co_qualname yet */
	FIELD(VALL, "PyCodeObject", "co_name", code.name, 8),
	FIELD(VALL, "PyCodeObject", "co_filename", code.filename, 8),
	FIELD(VALL, "PyCodeObject", "co_firstlineno", code.firstlineno, 4),
	FIELD(VNEW | V10, "PyCodeObject", "co_linetable", code.linetable, 8),
	FIELD(V08 | V09, "PyCodeObject", "co_lnotab", code.linetable, 8),
	FIELD(VNEW, "PyCodeObject", "co_code_adaptive", code.code_adaptive, 0),
	FIELD(VNEW, "PyCodeObject", "_co_firsttraceable", code.firsttraceable, 4),
	FIELD(VALL, "PyObject", "ob_type", object.ob_type, 8),
	FIELD(VALL, "PyVarObject", "ob_size", object.ob_size, 8),
	FIELD(VALL, "PyBytesObject", "ob_sval", object.bytes_sval, 0),
	FIELD(VALL, "PyASCIIObject", "length", unicode.length, 8),
	FIELD(VALL, "PyCompactUnicodeObject", "utf8_length", unicode.utf8_length, 8),
	FIELD(VALL, "PyCompactUnicodeObject", "utf8", unicode.utf8, 8),
	FIELD(VOLD | V11, "_PyRuntimeState", "ceval.gil", gil.runtime, 0),
	FIELD(V12 | V13, "struct _is", "ceval.gil", gil.interp, 8),
	/* _Py_atomic_int and _Py_atomic_address before 3.13: one-member structs */
	FIELD(VALL, "struct _gil_runtime_state", "locked", gil.locked, 4),
	FIELD(VALL, "struct _gil_runtime_state", "last_holder", gil.last_holder, 8),
	FIELD(VOLD | V11, "struct _is", "modules", interp_modules, 8),
	FIELD(V12 | V13, "struct _is", "imports.modules", interp_modules, 8),
};

struct bitfield {
	uint8_t versions;
	const char *type, *path;
	size_t out; /* a struct cpy_bitfield in struct cpy_layout */
};
#define BITFIELD(v, type, path, member) { v, type, path, offsetof(struct cpy_layout, member) }
static const struct bitfield bitfields[] = {
	BITFIELD(VALL, "PyASCIIObject", "state.kind", unicode.kind),
	BITFIELD(VALL, "PyASCIIObject", "state.compact", unicode.compact),
	BITFIELD(VALL, "PyASCIIObject", "state.ascii", unicode.ascii),
	/* 3.12 dropped it with the legacy strings' non-ready state */
	BITFIELD(V11 | VOLD, "PyASCIIObject", "state.ready", unicode.ready),
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
	uint32_t mine = 1u << l->variant;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field *f = &fields[i];
		struct dwarf_member m;
		if (!(f->versions & mine))
			continue;
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
		if (!(f->versions & mine))
			continue;
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
	if (!err) {
		err = read_fields(types, path, l);
		l->source = CPY_FROM_DWARF;
	} else if (err == -ENOENT && d->unsupported)
		err = err_set(CPY_E_NO_DEBUG_INFO, "%s: its debug information (%s) uses %s, which "
			      "tally does not read", path, f->path, d->unsupported);
	dwarf_types_close(types);
	dwarf_close(d);
	return err;
}

static int no_debug_info(struct elf_file *elf, uint32_t version_hex, const char *why_no_table)
{
	unsigned minor = (version_hex >> 16) & 0xff;
	const uint8_t *id;
	size_t len;
	char hex[2 * 64 + 1] = "";
	if (!elf_build_id(elf, &id, &len))
		for (size_t i = 0; i < len && i < 64; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return err_set(CPY_E_NO_DEBUG_INFO,
		       "%s: no debug information for CPython's structures%s%s%s, and tally's "
		       "table for its version does not fit it (%s); install the interpreter's "
		       "debug symbols (Debian: python3.%u-dbg, or libpython3.%u-dbg for "
		       "libpython3.%u.so) or point DEBUGINFOD_URLS at a debuginfod server",
		       elf->path, *hex ? " (build-id " : "", hex, *hex ? ")" : "", why_no_table,
		       minor, minor, minor);
}

/* The layout of elf from its separate debug file dbg (closed here), whose symbol table
 * also gives the symbols a stripped module lacks (the local .cold part). */
static int layout_from_debug_file(struct elf_file *elf, struct elf_file *dbg,
				  struct cpy_layout *l, struct found_sym *syms)
{
	int err = layout_from(dbg, elf->path, l);
	if (!err)
		find_symbols(dbg, syms, NSYMS);
	elf_close(dbg);
	return err;
}

/* The layout from the module's own DWARF, else from its separate debug file on this
 * machine: 0, -ENOENT when neither is there, or another error. */
static int layout_from_local_debug_info(struct elf_file *elf, const struct cpy_layout_opts *opts,
					struct cpy_layout *l, struct found_sym *syms)
{
	int err = layout_from(elf, elf->path, l);
	if (err != -ENOENT)
		return err;
	struct elf_file *dbg = NULL;
	if ((err = elf_open_debug_file(elf, opts->debug_dir, elf_debug_cache_dir(), &dbg)))
		return err;
	return layout_from_debug_file(elf, dbg, l, syms);
}

/* Tally's table for the version, when the file is a release build that fits it: 0, or
 * -ENOENT with the message set to why not. */
static int layout_from_table(struct elf_file *elf, const struct found_sym *syms,
			     struct cpy_layout *l)
{
	if (syms[SYM_REF_TOTAL].found)
		return err_set(-ENOENT, "a debug build: it defines %s", sym_names[SYM_REF_TOTAL]);
	if (cpy_layout_table(l->version_hex, l))
		return err_set(-ENOENT, "no entry for CPython %u.%u", l->version_hex >> 24,
			       (l->version_hex >> 16) & 0xff);
	struct cpy_type_addrs types = {
		syms[SYM_CODE_TYPE].found ? syms[SYM_CODE_TYPE].addr : 0,
		syms[SYM_BYTES_TYPE].found ? syms[SYM_BYTES_TYPE].addr : 0,
		syms[SYM_UNICODE_TYPE].found ? syms[SYM_UNICODE_TYPE].addr : 0,
	};
	return cpy_layout_table_fits(elf, &types, l);
}

/* 3.8-3.12's layout: the debug information on this machine, else the table, else
 * debuginfod's. */
static int layout_from_debug_info(struct elf_file *elf, const struct cpy_layout_opts *opts,
				  struct cpy_layout *l, struct found_sym *syms)
{
	int err = opts->table_only ? -ENOENT : layout_from_local_debug_info(elf, opts, l, syms);
	if (err != -ENOENT)
		return err;
	if (!layout_from_table(elf, syms, l))
		return 0;
	char why[256];
	snprintf(why, sizeof(why), "%s", err_msg());
	err_clear();
	struct elf_file *dbg = NULL;
	err = opts->table_only || opts->no_debuginfod ? -ENOENT : elf_debuginfod_open(elf, &dbg);
	if (!err)
		err = layout_from_debug_file(elf, dbg, l, syms);
	return err == -ENOENT ? no_debug_info(elf, l->version_hex, why) : err;
}

#define UNDERSTOOD "only CPython 3.8 to 3.13's frames are understood"

static int check_version(struct elf_file *elf, const struct found_sym *syms, uint32_t *hex)
{
	const char *from = "Py_Version";
	if (read_version(elf, &syms[SYM_VERSION], hex)) {
		from = "PY_VERSION";
		if (read_version_string(elf, &syms[SYM_GET_VERSION], hex))
			return err_set(CPY_E_VERSION,
				       "%s: a CPython older than 3.11 (it has no Py_Version) whose "
				       "version could not be read from Py_GetVersion; " UNDERSTOOD,
				       elf->path);
		if (*hex >> 16 >= 0x030b) /* 3.11 and later have Py_Version: not a CPython */
			return err_set(CPY_E_VERSION, "%s: says it is CPython %u.%u but has no "
				       "Py_Version; " UNDERSTOOD, elf->path, *hex >> 24,
				       (*hex >> 16) & 0xff);
	}
	if (*hex >> 16 < CPY_VERSION_FIRST || *hex >> 16 > CPY_VERSION_LAST)
		return err_set(CPY_E_VERSION,
			       "%s: CPython %u.%u (%s 0x%08x); " UNDERSTOOD,
			       elf->path, *hex >> 24, (*hex >> 16) & 0xff, from, *hex);
	return 0;
}

/* The variant of a version that check_version() let through. */
static uint32_t variant_of(uint32_t hex)
{
	unsigned minor = (hex >> 16) & 0xff;
	return minor >= 11 ? minor - 11 + CPY_VARIANT_311 : minor - 8 + CPY_VARIANT_38;
}

/* 3.13's layout from the _Py_DebugOffsets at the start of _PyRuntime, as the file holds it
 * (the initial contents of its .PyRuntime section). */
static int layout_from_debug_offsets(struct elf_file *elf, const struct found_sym *runtime,
				     struct cpy_layout *l)
{
	const uint8_t *p = runtime->size >= CPY_DEBUG_OFFSETS_SIZE
				   ? elf_vaddr_bytes(elf, runtime->addr, CPY_DEBUG_OFFSETS_SIZE)
				   : NULL;
	if (!p)
		return err_set(CPY_E_LAYOUT, "%s: _PyRuntime's initial contents are not in the "
			       "file (no _Py_DebugOffsets to read)", elf->path);
	return cpy_debug_offsets_parse(p, CPY_DEBUG_OFFSETS_SIZE, l->version_hex, elf->path, l);
}

int cpy_layout_load_elf(struct elf_file *elf, const struct cpy_layout_opts *caller_opts,
			struct cpy_layout *out)
{
	struct cpy_layout_opts opts;
	int err = OPTS_READ(cpy_layout_opts, table_only, &opts, caller_opts);
	if (err)
		return err;
	if (!out || out->sz < sizeof(out->sz))
		return err_set(-EINVAL, "cpy_layout_load: the layout's sz is not set");
	struct found_sym syms[NSYMS] = { { 0 } };
	find_symbols(elf, syms, NSYMS);
	if (!syms[SYM_RUNTIME].found && syms[SYM_INITIALIZE].found)
		return err_set(CPY_E_VERSION,
			       "%s: a CPython older than 3.7 (it has no _PyRuntime); " UNDERSTOOD,
			       elf->path);
	if (!syms[SYM_RUNTIME].found)
		return err_set(CPY_E_NOT_INTERPRETER,
			       "%s: not a CPython interpreter (it does not define _PyRuntime)",
			       elf->path);
	struct cpy_layout l = { .sz = sizeof(l) };
	if ((err = check_version(elf, syms, &l.version_hex)))
		return err;
	l.variant = variant_of(l.version_hex);
	l.linetable_format = l.variant == CPY_VARIANT_310     ? CPY_LINES_310
			     : CPY_FRAME_OBJECTS(l.variant) ? CPY_LINES_LNOTAB
							    : CPY_LINES_LOCATIONS;
	if (l.variant == CPY_VARIANT_313 && !opts.prefer_dwarf)
		err = layout_from_debug_offsets(elf, &syms[SYM_RUNTIME], &l);
	else
		err = layout_from_debug_info(elf, &opts, &l, syms);
	if (err)
		return err;
	/* The types are what the BPF program checks every object it follows against. */
	static const enum wanted_sym needed[] = { SYM_CODE_TYPE, SYM_UNICODE_TYPE, SYM_BYTES_TYPE,
						  SYM_EVAL };
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!syms[needed[i]].found)
			return err_set(CPY_E_LAYOUT, "%s: no symbol %s", elf->path,
				       sym_names[needed[i]]);
	l.runtime_addr = syms[SYM_RUNTIME].addr;
	l.code_type_addr = syms[SYM_CODE_TYPE].addr;
	l.unicode_type_addr = syms[SYM_UNICODE_TYPE].addr;
	l.bytes_type_addr = syms[SYM_BYTES_TYPE].addr;
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
