/*
 * CPython 3.13's layout from the interpreter itself: _Py_DebugOffsets, which 3.13 puts at
 * the start of _PyRuntime (its own .PyRuntime section), so a build without debug
 * information still says where its fields are. Its shape is fixed within a minor version
 * only: a cookie, the version, a free-threaded flag, then groups of u64s, each a
 * structure's size followed by member offsets. Four things a reader needs are not in it
 * and come from facts of 3.13's headers, relative to fields that are (see own_facts());
 * tests/cpython/layout.test.sh checks all of them against the DWARF of a 3.13 build.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "cpython/layout.h"

/* Groups of 3.13.0's _Py_DebugOffsets (Include/internal/pycore_runtime.h), in order, with
 * their member counts (the size field included). */
enum group {
	G_RUNTIME, G_INTERP, G_THREAD, G_FRAME, G_CODE, G_OBJECT, G_TYPE, G_TUPLE, G_LIST,
	G_DICT, G_FLOAT, G_LONG, G_BYTES, G_UNICODE, G_GC, NGROUPS
};
static const uint8_t group_len[NGROUPS] = { 3, 13, 9, 6, 10, 2, 4, 3, 3, 3, 2, 3, 3, 4, 2 };
#define HEAD_SIZE 24 /* cookie[8], version, free_threaded */

/* A structure's size caps its members' offsets; the runtime state is the largest (some
 * 280 KiB in 3.13.0), and nothing a reader uses is past 16 MiB. */
#define MAX_STRUCT_SIZE (16u << 20)

/* One member the layout takes: group, index in it (1: the first after size), bytes the
 * reader reads there, where it goes in struct cpy_layout, and its name for messages. */
struct member {
	uint8_t group, index, size;
	size_t out;
	const char *name;
};
#define M(g, i, sz, field, name) { g, i, sz, offsetof(struct cpy_layout, field), name }
static const struct member members[] = {
	M(G_RUNTIME, 2, 8, runtime.interpreters_head, "runtime_state.interpreters_head"),
	M(G_INTERP, 2, 8, interp.next, "interpreter_state.next"),
	M(G_INTERP, 3, 8, interp.threads_head, "interpreter_state.threads_head"),
	M(G_INTERP, 5, 8, interp_modules, "interpreter_state.imports_modules"),
	M(G_INTERP, 8, 8, gil.interp, "interpreter_state.ceval_gil"),
	M(G_THREAD, 2, 8, thread.next, "thread_state.next"),
	M(G_THREAD, 3, 8, thread.interp, "thread_state.interp"),
	M(G_THREAD, 4, 8, thread_current_frame, "thread_state.current_frame"),
	M(G_THREAD, 5, 8, thread.thread_id, "thread_state.thread_id"),
	M(G_THREAD, 6, 8, thread.native_thread_id, "thread_state.native_thread_id"),
	M(G_FRAME, 1, 8, frame.previous, "interpreter_frame.previous"),
	M(G_FRAME, 2, 8, frame.f_code, "interpreter_frame.executable"),
	M(G_FRAME, 3, 8, frame.prev_instr, "interpreter_frame.instr_ptr"),
	M(G_FRAME, 5, 1, frame.owner, "interpreter_frame.owner"),
	M(G_CODE, 1, 8, code.filename, "code_object.filename"),
	M(G_CODE, 2, 8, code.name, "code_object.name"),
	M(G_CODE, 3, 8, code.qualname, "code_object.qualname"),
	M(G_CODE, 4, 8, code.linetable, "code_object.linetable"),
	M(G_CODE, 5, 4, code.firstlineno, "code_object.firstlineno"),
	M(G_CODE, 9, 0, code.code_adaptive, "code_object.co_code_adaptive"),
	M(G_OBJECT, 1, 8, object.ob_type, "pyobject.ob_type"),
	M(G_BYTES, 1, 8, object.ob_size, "bytes_object.ob_size"),
	M(G_BYTES, 2, 0, object.bytes_sval, "bytes_object.ob_sval"),
	M(G_UNICODE, 2, 8, unicode.length, "unicode_object.length"),
};
/* The interpreter's own GIL and two of its members, as offsets in the interpreter state:
 * the members' offsets in the GIL are the differences. */
#define I_GIL 9
#define I_GIL_LOCKED 11
#define I_GIL_HOLDER 12
#define GIL_MAX 64 /* locked and last_holder lie this near the GIL's start at most */
#define U_STATE 1 /* unicode_object.state: the state word, whose bits are facts of ours */
#define U_ASCII_SIZE 3 /* unicode_object.asciiobject_size */

static size_t group_start(enum group g)
{
	size_t at = HEAD_SIZE;
	for (int i = 0; i < (int)g; i++)
		at += 8u * group_len[i];
	return at;
}

static uint64_t u64_at(const uint8_t *buf, size_t at)
{
	struct cur c = cur_make(buf + at, 8, false);
	return cur_u64(&c);
}

static int bad(const char *path, const char *what, const char *name, uint64_t v)
{
	return err_set(CPY_E_LAYOUT, "%s: _Py_DebugOffsets %s%s%s (0x%llx)", path, what,
		       name ? ": " : "", name ? name : "", (unsigned long long)v);
}

/* Member m's offset, checked to lie (with the bytes read there) inside its structure. */
static int take(const uint8_t *buf, const struct member *m, const char *path, uint32_t *off)
{
	size_t g = group_start((enum group)m->group);
	uint64_t size = u64_at(buf, g), v = u64_at(buf, g + 8u * m->index);
	if (size > MAX_STRUCT_SIZE)
		return bad(path, "gives a structure of implausible size", m->name, size);
	if (v > size || size - v < m->size)
		return bad(path, "puts a field outside its structure", m->name, v);
	*off = (uint32_t)v;
	return 0;
}

/* The GIL's members from their offsets in the interpreter state, which holds one (_gil). */
static int gil_members(const uint8_t *buf, const char *path, struct cpy_layout *l)
{
	size_t g = group_start(G_INTERP);
	uint64_t size = u64_at(buf, g), gil = u64_at(buf, g + 8u * I_GIL),
		 locked = u64_at(buf, g + 8u * I_GIL_LOCKED),
		 holder = u64_at(buf, g + 8u * I_GIL_HOLDER);
	if (gil > size || locked < gil || locked - gil > GIL_MAX || locked > size - 4)
		return bad(path, "puts a field outside its structure",
			   "interpreter_state.gil_runtime_state_locked", locked);
	if (holder < gil || holder - gil > GIL_MAX || holder > size - 8)
		return bad(path, "puts a field outside its structure",
			   "interpreter_state.gil_runtime_state_holder", holder);
	l->gil.runtime = 0;
	l->gil.locked = (uint32_t)(locked - gil);
	l->gil.last_holder = (uint32_t)(holder - gil);
	return 0;
}

/* 3.13's PyASCIIObject.state (Include/cpython/unicodeobject.h): interned (2 bits), kind
 * (3), compact (1), ascii (1), least significant first; PyCompactUnicodeObject is the
 * ASCII object then utf8_length (Py_ssize_t) and utf8 (char *). _PyCode_DEF
 * (Include/cpython/code.h): after co_linetable come co_weakreflist, co_executors,
 * _co_cached, _co_instrumentation_version and _co_monitoring (8 bytes each), then
 * _co_firsttraceable. */
static int own_facts(const uint8_t *buf, const char *path, struct cpy_layout *l)
{
	size_t u = group_start(G_UNICODE);
	uint64_t usize = u64_at(buf, u), state = u64_at(buf, u + 8u * U_STATE),
		 ascii = u64_at(buf, u + 8u * U_ASCII_SIZE);
	if (usize > MAX_STRUCT_SIZE || state > usize || usize - state < 4)
		return bad(path, "puts a field outside its structure", "unicode_object.state", state);
	if (ascii > usize || ascii < state + 4)
		return bad(path, "gives an implausible size", "unicode_object.asciiobject_size",
			   ascii);
	uint32_t bit = (uint32_t)state * 8;
	l->unicode.kind = (struct cpy_bitfield){ bit + 2, 3 };
	l->unicode.compact = (struct cpy_bitfield){ bit + 5, 1 };
	l->unicode.ascii = (struct cpy_bitfield){ bit + 6, 1 };
	l->unicode.ready = (struct cpy_bitfield){ 0, 0 };
	l->unicode.ascii_size = (uint32_t)ascii;
	l->unicode.utf8_length = (uint32_t)ascii;
	l->unicode.utf8 = (uint32_t)ascii + 8;
	l->unicode.compact_size = (uint32_t)ascii + 16;
	l->code.firsttraceable = l->code.linetable + 8 + 5 * 8;
	if (l->code.firsttraceable + 4 > l->code.code_adaptive)
		return bad(path, "leaves no room for _co_firsttraceable before",
			   "code_object.co_code_adaptive", l->code.code_adaptive);
	return 0;
}

int cpy_debug_offsets_parse(const uint8_t *buf, size_t n, uint32_t version_hex,
			    const char *path, struct cpy_layout *l)
{
	if (n < CPY_DEBUG_OFFSETS_SIZE)
		return bad(path, "is cut short", NULL, n);
	if (memcmp(buf, "xdebugpy", 8))
		return err_set(CPY_E_LAYOUT, "%s: _PyRuntime does not begin with _Py_DebugOffsets "
			       "(no \"xdebugpy\" cookie)", path);
	uint64_t version = u64_at(buf, 8), free_threaded = u64_at(buf, 16);
	if (version >> 16 != version_hex >> 16 || version_hex >> 16 != 0x030d)
		return bad(path, "is of another version than Py_Version", NULL, version);
	if (free_threaded)
		return err_set(CPY_E_VERSION, "%s: CPython %u.%u built free-threaded (Py_GIL_DISABLED),"
			       " whose frames tally does not read", path, version_hex >> 24,
			       (version_hex >> 16) & 0xff);
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		uint32_t off = 0;
		int err = take(buf, &members[i], path, &off);
		if (err)
			return err;
		memcpy((char *)l + members[i].out, &off, sizeof(off));
	}
	int err = own_facts(buf, path, l);
	if (!err)
		err = gil_members(buf, path, l);
	if (err)
		return err;
	l->variant = CPY_VARIANT_313;
	l->source = CPY_FROM_DEBUG_OFFSETS;
	return 0;
}
