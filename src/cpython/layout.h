/*
 * The layout of CPython 3.8-3.13's runtime structures (3.8-3.10: frames are PyFrameObjects;
 * 3.11-3.13: _PyInterpreterFrames), read from the interpreter itself: 3.13 carries its own
 * offsets (_Py_DebugOffsets at the start of _PyRuntime), 3.8-3.12 from their debug
 * information where they have any, else from tally's table for the version
 * (layout_table.c), used only when the file's own type objects agree with it. One struct
 * cpy_layout says where a reader of another process's memory finds the threads, their
 * frames, the code objects and the strings in them; its variant says how the walk
 * differs. Other versions are refused with a message, never read with the wrong layout.
 */
#ifndef TALLY_CPYTHON_LAYOUT_H
#define TALLY_CPYTHON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf.h"

/* The major.minor versions understood (PY_VERSION_HEX >> 16). */
#define CPY_VERSION_FIRST 0x0308
#define CPY_VERSION_LAST 0x030d

/* What a walk of the frames does differently per version (struct cpy_layout.variant). */
enum cpy_variant {
	/* 3.11: the current frame is tstate->cframe->current_frame; the first frame of each
	 * _PyEval_EvalFrameDefault activation has is_entry set. */
	CPY_VARIANT_311 = 1,
	/* 3.12: is_entry is gone; each activation pushes a frame owned by the C stack
	 * (FRAME_OWNED_BY_CSTACK) below its first frame, which walks skip. */
	CPY_VARIANT_312 = 2,
	/* 3.13: as 3.12, but the current frame is tstate->current_frame (no _PyCFrame),
	 * f_code became f_executable and prev_instr instr_ptr (same use for the line). */
	CPY_VARIANT_313 = 3,
	/* 3.8, 3.9, 3.10: heap frame objects, the innermost at tstate->frame
	 * (thread_current_frame), each caller at f_back; each frame is run by an eval
	 * activation of its own. The current instruction is f_lasti (frame_lasti): 3.8 and
	 * 3.9 count it in bytes, 3.10 in code units. No co_qualname: code.qualname is co_name.
	 * No native_thread_id: a thread state is the sampled thread's by thread_id
	 * (pthread_self(), the thread pointer on x86-64). */
	CPY_VARIANT_38 = 4,
	CPY_VARIANT_39 = 5,
	CPY_VARIANT_310 = 6,
};

/* Whether a variant is of the frame-object family (3.8-3.10). */
#define CPY_FRAME_OBJECTS(variant) ((variant) >= CPY_VARIANT_38)

/* Where a layout came from (struct cpy_layout.source). */
enum cpy_layout_source {
	CPY_FROM_DWARF = 1,         /* the interpreter's debug information */
	CPY_FROM_DEBUG_OFFSETS = 2, /* its _Py_DebugOffsets, with facts of ours for the rest */
	CPY_FROM_TABLE = 3,         /* tally's table for its version */
};

/* _PyInterpreterFrame.owner values (Include/internal/pycore_frame.h). */
#define CPY_FRAME_OWNED_BY_THREAD 0
#define CPY_FRAME_OWNED_BY_GENERATOR 1
#define CPY_FRAME_OWNED_BY_FRAME_OBJECT 2
#define CPY_FRAME_OWNED_BY_CSTACK 3 /* 3.12 and 3.13 */

/* PEP 393 string kinds (bytes per character). */
#define CPY_UNICODE_1BYTE 1
#define CPY_UNICODE_2BYTE 2
#define CPY_UNICODE_4BYTE 4

/* A bit-field: its first bit counted from the start of the containing object, bits
 * numbered from the least significant bit of each byte up (x86-64 and aarch64 are
 * little-endian; the loader refuses a big-endian interpreter), and its width. */
struct cpy_bitfield {
	uint32_t bit_offset;
	uint32_t bit_size;
};

/*
 * Every offset is in bytes from the start of its structure. The fields read are of
 * fixed size on every 64-bit build, which cpy_layout_load() checks against the debug
 * information (it refuses anything else): pointers, Py_ssize_t and unsigned long are 8
 * bytes, co_firstlineno and _co_firsttraceable are int (4 bytes), is_entry (bool) and
 * owner (char) 1 byte.
 *
 * Callers set sz to sizeof(struct cpy_layout) before cpy_layout_load(); fields added later
 * go at the end, so an older caller's smaller struct is filled as far as it reaches.
 */
struct cpy_layout {
	size_t sz;
	uint32_t version_hex; /* PY_VERSION_HEX of the interpreter, e.g. 0x030b02f0 */
	/* Link-time virtual addresses in the module that defines _PyRuntime (the runtime
	 * address is this plus the module's load bias): */
	uint64_t runtime_addr;   /* _PyRuntime */
	uint64_t code_type_addr; /* PyCode_Type: a code object's ob_type must be this */
	uint64_t eval_lo;        /* _PyEval_EvalFrameDefault: [eval_lo, eval_hi) */
	uint64_t eval_hi;
	/* Its part that gcc moved out of line (_PyEval_EvalFrameDefault.cold: the same
	 * activation, entered by a jump), [eval_cold_lo, eval_cold_hi); both 0 if none. */
	uint64_t eval_cold_lo;
	uint64_t eval_cold_hi;
	struct {
		uint32_t interpreters_head; /* _PyRuntimeState.interpreters.head */
	} runtime;
	struct {
		uint32_t next;         /* PyInterpreterState.next */
		uint32_t threads_head; /* PyInterpreterState.threads.head (3.8-3.10: tstate_head) */
	} interp;
	struct {
		uint32_t next;             /* PyThreadState.next */
		uint32_t interp;           /* PyThreadState.interp */
		uint32_t native_thread_id; /* the kernel's tid; 3.11 on (0 before) */
		uint32_t thread_id;        /* pthread_self() */
		uint32_t cframe;           /* PyThreadState.cframe (a _PyCFrame *); 3.11, 3.12 */
	} thread;
	struct {
		uint32_t current_frame; /* _PyCFrame.current_frame (a _PyInterpreterFrame *) */
	} cframe;
	struct {
		/* PyCodeObject * (3.13: f_executable, a code object here; 3.8-3.10:
		 * PyFrameObject.f_code) */
		uint32_t f_code;
		uint32_t previous;   /* _PyInterpreterFrame * (3.8-3.10: PyFrameObject.f_back) */
		/* _Py_CODEUNIT *: the code unit whose line is the frame's (3.11, 3.12:
		 * prev_instr, the last one started; 3.13: instr_ptr, the one executing). Both
		 * versions' own line lookups take (it - the code's first unit) as lasti. */
		uint32_t prev_instr;
		uint32_t is_entry;   /* bool; 3.11 only (0 otherwise) */
		uint32_t owner;      /* char: CPY_FRAME_OWNED_BY_* */
	} frame;
	struct {
		uint32_t qualname;     /* PyObject * (str); co_name before 3.11 (no co_qualname) */
		uint32_t name;         /* PyObject * (str) */
		uint32_t filename;     /* PyObject * (str) */
		uint32_t firstlineno;  /* int */
		/* PyObject * (bytes): the line table, of format linetable_format (3.8, 3.9:
		 * co_lnotab) */
		uint32_t linetable;
		uint32_t code_adaptive; /* the bytecode array itself: _PyCode_CODE(co) */
		/* int: code units before the first traceable instruction. A frame whose
		 * prev_instr lies before code_adaptive + 2 * this, and that a generator does
		 * not own, is incomplete (being set up) and is not shown by CPython. */
		uint32_t firsttraceable;
	} code;
	struct {
		uint32_t ob_type;    /* PyObject.ob_type */
		uint32_t ob_size;    /* PyVarObject.ob_size */
		uint32_t bytes_sval; /* PyBytesObject.ob_sval: the bytes, NUL-terminated */
	} object;
	struct {
		uint32_t ascii_size;   /* sizeof(PyASCIIObject): an ASCII string's text follows */
		uint32_t compact_size; /* sizeof(PyCompactUnicodeObject): other compact text */
		uint32_t length;       /* PyASCIIObject.length (Py_ssize_t), in characters */
		/* PyASCIIObject.state; ready only in 3.11 (bit_size 0 after: always ready) */
		struct cpy_bitfield kind, compact, ascii, ready;
		uint32_t utf8_length;  /* PyCompactUnicodeObject.utf8_length */
		uint32_t utf8;         /* PyCompactUnicodeObject.utf8 (char *, may be NULL) */
	} unicode;
	uint32_t variant;              /* enum cpy_variant */
	uint32_t source;               /* enum cpy_layout_source */
	uint32_t thread_current_frame; /* PyThreadState.current_frame (3.13), .frame (3.8-3.10) */
	uint32_t frame_lasti;          /* PyFrameObject.f_lasti (int); 3.8-3.10 */
	uint32_t linetable_format;     /* enum cpy_linetable_format (code.h) */
	/* The GIL, a struct _gil_runtime_state: where it is, and the two members that say
	 * who holds it (locked, an int that is 1 while a thread holds it; last_holder, the
	 * PyThreadState * that took it last). 3.8-3.11 have one per runtime, in _PyRuntime;
	 * 3.12 and 3.13 one per interpreter that owns one, which each interpreter points to
	 * (its own or the main interpreter's). */
	struct {
		uint32_t runtime;     /* _PyRuntimeState.ceval.gil; 3.8-3.11 (0 after) */
		uint32_t interp;      /* PyInterpreterState.ceval.gil (a pointer); 3.12, 3.13 */
		uint32_t locked;      /* _gil_runtime_state.locked (int) */
		uint32_t last_holder; /* _gil_runtime_state.last_holder (PyThreadState *) */
	} gil;
	/* PyUnicode_Type and PyBytes_Type: the ob_type of a code object's names and of its
	 * line table */
	uint64_t unicode_type_addr, bytes_type_addr;
	/* PyInterpreterState.modules, sys.modules (3.12 and 3.13: imports.modules): where
	 * thread_names.h finds the threading module */
	uint32_t interp_modules;
};

/* Where to look for the layout of 3.8-3.12, libbpf-style (NULL: the defaults). The
 * order: the module's own DWARF; its debug file by build-id in tally's debug cache,
 * debug_dir and /usr/lib/debug, then by .gnu_debuglink; tally's table for the version, if
 * the file fits it; then debuginfod when $DEBUGINFOD_URLS is set (last: a download, where
 * the table needs none). */
struct cpy_layout_opts {
	size_t sz;
	const char *debug_dir; /* NULL: only /usr/lib/debug */
	bool no_debuginfod;
	/* 3.13: its layout from the DWARF instead of _Py_DebugOffsets (a test compares the
	 * two); an error when the file has no debug information. */
	bool prefer_dwarf;
	/* 3.8-3.12: the table alone, as if there were no debug information. */
	bool table_only;
};

/* Errors of cpy_layout_load(), besides those of opening the files (negative errno). */
#define CPY_E_NOT_INTERPRETER (-2001) /* the module does not define _PyRuntime */
#define CPY_E_VERSION (-2002)         /* a CPython other than 3.8-3.13, or a build of it
					* whose layout is not understood (free-threaded) */
#define CPY_E_NO_DEBUG_INFO (-2003)   /* no debug information, and no table that fits */
#define CPY_E_LAYOUT (-2004)          /* the debug information or _Py_DebugOffsets lacks or
					* misshapes a field */

/* Whether elf is the module that holds the interpreter: it defines _PyRuntime (in .dynsym;
 * in .symtab for a file without dynamic symbols). Cheap enough for every mapped module:
 * one pass over the dynamic symbols, no debug information read. */
bool cpy_is_interpreter(struct elf_file *elf);

/* Reads the layout of the interpreter in elf_path (/usr/bin/python3.11 or a
 * libpython3.11.so: the module that defines _PyRuntime). Its version: Py_Version from 3.11;
 * before, the PY_VERSION string that Py_GetVersion() formats (x86-64 only). 0 and *out filled, or a negative
 * code with the message set (err.h): CPY_E_NOT_INTERPRETER, CPY_E_VERSION naming the
 * version found, CPY_E_NO_DEBUG_INFO saying why the table does not fit and what to
 * install, CPY_E_LAYOUT naming the field. */
int cpy_layout_load(const char *elf_path, const struct cpy_layout_opts *opts,
		    struct cpy_layout *out);
/* The same for a file already open (it is only read). */
int cpy_layout_load_elf(struct elf_file *elf, const struct cpy_layout_opts *opts,
			struct cpy_layout *out);

/* Bytes of _Py_DebugOffsets (3.13) read from the start of _PyRuntime. */
#define CPY_DEBUG_OFFSETS_SIZE 584

/* Fills the offsets of l (variant 3.13) from the n bytes of a _Py_DebugOffsets at buf
 * (the initial contents of the interpreter's _PyRuntime), for an interpreter whose
 * Py_Version is version_hex; what _Py_DebugOffsets does not hold comes from facts of
 * 3.13's headers. 0, or CPY_E_LAYOUT (a wrong cookie, a version other than version_hex's,
 * an offset outside its structure) or CPY_E_VERSION (a free-threaded build), with a
 * message naming path. Everything is checked: buf is untrusted input. */
int cpy_debug_offsets_parse(const uint8_t *buf, size_t n, uint32_t version_hex,
			    const char *path, struct cpy_layout *l);

/* Reads the bit-field bf of an object whose first n bytes are at obj: 0 and *value, or
 * -ERANGE when the field lies beyond n bytes or is wider than 32 bits. */
int cpy_bitfield_get(const struct cpy_bitfield *bf, const uint8_t *obj, size_t n,
		     uint32_t *value);

#endif
