/*
 * CPython's layouts for interpreters without debug information, as most distributions and
 * containers ship them: one entry per minor version that keeps no offsets of its own (3.13
 * has _Py_DebugOffsets), the offsets of a release build for x86-64 Linux, written from
 * that version's headers. tests/cpython/layout.test.sh checks
 * every entry against the DWARF of builds of its version, member by member.
 *
 * CPython keeps these structures fixed within a minor version (3.11.2 and 3.11.7 agree
 * field for field; 3.12's entry is 3.12.1's), but a build configured otherwise has other offsets: --with-trace-refs
 * puts two pointers in front of every object, --with-pydebug changes more. Such a build
 * is told apart by what its file holds (cpy_layout_table_fits), never guessed: the sizes
 * that the interpreter's own static type objects give for code, bytes and str objects are
 * fixed by the very fields the table lists.
 */
#include <errno.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "cpython/layout_table.h"

struct table_entry {
	uint16_t major_minor; /* PY_VERSION_HEX >> 16 */
	/* sizeof(PyCodeObject), PyCode_Type's tp_basicsize: before 3.11 the bytecode is a
	 * bytes object of its own; from 3.11 it follows the fixed part (code_adaptive) */
	uint16_t code_basicsize;
	struct cpy_layout layout; /* the offsets; no addresses */
};

/* 3.8-3.10: frame objects (layout.h's variants), no co_qualname (qualname is co_name), no
 * native_thread_id; the line table is co_lnotab in 3.8 and 3.9, co_linetable in 3.10.
 * 3.8 and 3.9 agree field for field (3.9 moved the interpreter state's definition to
 * another header, not its members); 3.10 dropped f_stacktop (f_lasti moves up by 8). */
#define LEGACY_COMMON                                                                    \
	.runtime = { .interpreters_head = 32 }, .interp = { .next = 0, .threads_head = 8 }, \
	.thread = { .next = 8, .interp = 16, .thread_id = 176 },                           \
	.thread_current_frame = 24,                                                        \
	.code = { .qualname = 112, .name = 112, .filename = 104, .firstlineno = 40,        \
		  .linetable = 120 },                                                      \
	.object = { .ob_type = 8, .ob_size = 16, .bytes_sval = 32 },                      \
	.unicode = { .ascii_size = 48, .compact_size = 72, .length = 16,                  \
		     .kind = { 258, 3 }, .compact = { 261, 1 }, .ascii = { 262, 1 },      \
		     .ready = { 263, 1 }, .utf8_length = 48, .utf8 = 56 }

/* struct _gil_runtime_state, the same from 3.8 to 3.13: interval (unsigned long), then
 * last_holder, then locked. */
#define GIL_MEMBERS .locked = 16, .last_holder = 8

static const struct table_entry tables[] = {
	{
		.major_minor = 0x0308,
		.code_basicsize = 176,
		/* 3.8's ceval state holds the pending calls, 3.9 moved them to interpreters */
		.layout = { LEGACY_COMMON, .frame = { .f_code = 32, .previous = 24 },
			    .frame_lasti = 104, .gil = { .runtime = 1152, GIL_MEMBERS },
			    .interp_modules = 56 },
	},
	{
		.major_minor = 0x0309,
		.code_basicsize = 176,
		.layout = { LEGACY_COMMON, .frame = { .f_code = 32, .previous = 24 },
			    .frame_lasti = 104, .gil = { .runtime = 352, GIL_MEMBERS },
			    .interp_modules = 856 },
	},
	{
		.major_minor = 0x030a,
		.code_basicsize = 176,
		.layout = { LEGACY_COMMON, .frame = { .f_code = 32, .previous = 24 },
			    .frame_lasti = 96, .gil = { .runtime = 352, GIL_MEMBERS },
			    .interp_modules = 856 },
	},
	{
		.major_minor = 0x030b,
		.code_basicsize = 184,
		.layout = {
			.runtime = { .interpreters_head = 40 },
			.interp = { .next = 0, .threads_head = 16 },
			.thread = { .next = 8, .interp = 16, .native_thread_id = 160,
				    .thread_id = 152, .cframe = 56 },
			.cframe = { .current_frame = 8 },
			.frame = { .f_code = 32, .previous = 48, .prev_instr = 56,
				   .is_entry = 68, .owner = 69 },
			.code = { .qualname = 128, .name = 120, .filename = 112,
				  .firstlineno = 72, .linetable = 136, .code_adaptive = 184,
				  .firsttraceable = 168 },
			.object = { .ob_type = 8, .ob_size = 16, .bytes_sval = 32 },
			.unicode = { .ascii_size = 48, .compact_size = 72, .length = 16,
				     .kind = { 258, 3 }, .compact = { 261, 1 },
				     .ascii = { 262, 1 }, .ready = { 263, 1 },
				     .utf8_length = 48, .utf8 = 56 },
			.gil = { .runtime = 360, GIL_MEMBERS },
			.interp_modules = 888,
		},
	},
	{
		/* is_entry and the str state's ready bit are gone (layout.h's variant). */
		.major_minor = 0x030c,
		.code_basicsize = 192,
		.layout = {
			.runtime = { .interpreters_head = 40 },
			.interp = { .next = 0, .threads_head = 72 },
			.thread = { .next = 8, .interp = 16, .native_thread_id = 144,
				    .thread_id = 136, .cframe = 56 },
			.cframe = { .current_frame = 0 },
			.frame = { .f_code = 0, .previous = 8, .prev_instr = 56, .owner = 70 },
			.code = { .qualname = 128, .name = 120, .filename = 112,
				  .firstlineno = 68, .linetable = 136, .code_adaptive = 192,
				  .firsttraceable = 176 },
			.object = { .ob_type = 8, .ob_size = 16, .bytes_sval = 32 },
			.unicode = { .ascii_size = 40, .compact_size = 56, .length = 16,
				     .kind = { 258, 3 }, .compact = { 261, 1 },
				     .ascii = { 262, 1 }, .utf8_length = 40, .utf8 = 48 },
			.gil = { .interp = 384, GIL_MEMBERS },
			.interp_modules = 944,
		},
	},
};

static const struct table_entry *entry_of(uint32_t version_hex)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].major_minor == version_hex >> 16)
			return &tables[i];
	return NULL;
}

int cpy_layout_table(uint32_t version_hex, struct cpy_layout *l)
{
	const struct table_entry *e = entry_of(version_hex);
	if (e) {
		const struct cpy_layout *t = &e->layout;
		l->runtime = t->runtime;
		l->interp = t->interp;
		l->thread = t->thread;
		l->cframe = t->cframe;
		l->frame = t->frame;
		l->code = t->code;
		l->object = t->object;
		l->unicode = t->unicode;
		l->thread_current_frame = t->thread_current_frame;
		l->frame_lasti = t->frame_lasti;
		l->gil = t->gil;
		l->interp_modules = t->interp_modules;
		l->source = CPY_FROM_TABLE;
		return 0;
	}
	return -ENOENT;
}

/* PyTypeObject.tp_basicsize: after PyObject_VAR_HEAD (refcount, type, size) and tp_name. */
#define TP_BASICSIZE 32

/* The tp_basicsize that the static type object at addr holds in the file: 0, or -ENOENT
 * when it lies outside the file's contents. */
static int basicsize(struct elf_file *elf, uint64_t addr, uint64_t *size)
{
	const uint8_t *p = elf_vaddr_bytes(elf, addr + TP_BASICSIZE, 8);
	if (!p)
		return -ENOENT;
	struct cur c = cur_make(p, 8, false);
	*size = cur_u64(&c);
	return 0;
}

/* Sizes the layout implies: a code object's fixed part is the entry's (from 3.11 it ends
 * where its code units begin), a bytes object's ends with its first byte (the terminating
 * NUL of an empty one), and a str object (PyUnicodeObject) has a data pointer after the
 * compact part. */
int cpy_layout_table_fits(struct elf_file *elf, const struct cpy_type_addrs *types,
			  const struct cpy_layout *l)
{
	const struct table_entry *e = entry_of(l->version_hex);
	if (!e)
		return err_set(-ENOENT, "no entry for its version");
	const struct {
		const char *name;
		uint64_t addr, want;
	} checks[] = {
		{ "PyCode_Type", types->code, e->code_basicsize },
		{ "PyBytes_Type", types->bytes, l->object.bytes_sval + 1 },
		{ "PyUnicode_Type", types->unicode, l->unicode.compact_size + 8 },
	};
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		uint64_t size;
		if (!checks[i].addr || basicsize(elf, checks[i].addr, &size))
			return err_set(-ENOENT, "its %s is not in the file", checks[i].name);
		if (size != checks[i].want)
			return err_set(-ENOENT, "its %s gives objects of %llu bytes, not %llu",
				       checks[i].name, (unsigned long long)size,
				       (unsigned long long)checks[i].want);
	}
	return 0;
}
