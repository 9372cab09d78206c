/*
 * The layout of CPython 3.11's runtime structures, read from the interpreter's own debug
 * information (never from a table of offsets: a rebuilt interpreter moves them). One
 * struct cpy_layout says where a reader of another process's memory finds the threads,
 * their frames, the code objects and the strings in them.
 *
 * Only 3.11 is understood (its frames are _PyInterpreterFrame, reached through _PyCFrame);
 * other versions are refused with a message, never read with the wrong layout.
 */
#ifndef TALLY_CPYTHON_LAYOUT_H
#define TALLY_CPYTHON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf.h"

/* The only major.minor understood: PY_VERSION_HEX >> 16. */
#define CPY_VERSION_MAJOR_MINOR 0x030b

/* _PyInterpreterFrame.owner values (Include/internal/pycore_frame.h). */
#define CPY_FRAME_OWNED_BY_THREAD 0
#define CPY_FRAME_OWNED_BY_GENERATOR 1
#define CPY_FRAME_OWNED_BY_FRAME_OBJECT 2

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
		uint32_t threads_head; /* PyInterpreterState.threads.head */
	} interp;
	struct {
		uint32_t next;             /* PyThreadState.next */
		uint32_t interp;           /* PyThreadState.interp */
		uint32_t native_thread_id; /* the kernel's tid */
		uint32_t thread_id;        /* pthread_self() */
		uint32_t cframe;           /* PyThreadState.cframe (a _PyCFrame *) */
	} thread;
	struct {
		uint32_t current_frame; /* _PyCFrame.current_frame (a _PyInterpreterFrame *) */
	} cframe;
	struct {
		uint32_t f_code;     /* PyCodeObject * */
		uint32_t previous;   /* _PyInterpreterFrame * */
		uint32_t prev_instr; /* _Py_CODEUNIT *: the last instruction started */
		uint32_t is_entry;   /* bool */
		uint32_t owner;      /* char: CPY_FRAME_OWNED_BY_* */
	} frame;
	struct {
		uint32_t qualname;     /* PyObject * (str) */
		uint32_t name;         /* PyObject * (str) */
		uint32_t filename;     /* PyObject * (str) */
		uint32_t firstlineno;  /* int */
		uint32_t linetable;    /* PyObject * (bytes): the 3.11 location table */
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
		struct cpy_bitfield kind, compact, ascii, ready; /* PyASCIIObject.state */
		uint32_t utf8_length;  /* PyCompactUnicodeObject.utf8_length */
		uint32_t utf8;         /* PyCompactUnicodeObject.utf8 (char *, may be NULL) */
	} unicode;
};

/* Where to look for the debug information, libbpf-style (NULL: the defaults). The order:
 * the module's own DWARF; its debug file by build-id in tally's debug cache, debug_dir and
 * /usr/lib/debug, then by .gnu_debuglink; then debuginfod when $DEBUGINFOD_URLS is set. */
struct cpy_layout_opts {
	size_t sz;
	const char *debug_dir; /* NULL: only /usr/lib/debug */
	bool no_debuginfod;
};

/* Errors of cpy_layout_load(), besides those of opening the files (negative errno). */
#define CPY_E_NOT_INTERPRETER (-2001) /* the module does not define _PyRuntime */
#define CPY_E_VERSION (-2002)         /* a CPython other than 3.11 */
#define CPY_E_NO_DEBUG_INFO (-2003)   /* no debug information with CPython's structures */
#define CPY_E_LAYOUT (-2004)          /* the debug information lacks or misshapes a field */

/* Whether elf is the module that holds the interpreter: it defines _PyRuntime (in .dynsym;
 * in .symtab for a file without dynamic symbols). Cheap enough for every mapped module:
 * one pass over the dynamic symbols, no debug information read. */
bool cpy_is_interpreter(struct elf_file *elf);

/* Reads the layout of the interpreter in elf_path (/usr/bin/python3.11 or a
 * libpython3.11.so: the module that defines _PyRuntime). 0 and *out filled, or a negative
 * code with the message set (err.h): CPY_E_NOT_INTERPRETER, CPY_E_VERSION naming the
 * version found, CPY_E_NO_DEBUG_INFO saying what to install, CPY_E_LAYOUT naming the
 * field. */
int cpy_layout_load(const char *elf_path, const struct cpy_layout_opts *opts,
		    struct cpy_layout *out);
/* The same for a file already open (it is only read). */
int cpy_layout_load_elf(struct elf_file *elf, const struct cpy_layout_opts *opts,
			struct cpy_layout *out);

/* Reads the bit-field bf of an object whose first n bytes are at obj: 0 and *value, or
 * -ERANGE when the field lies beyond n bytes or is wider than 32 bits. */
int cpy_bitfield_get(const struct cpy_bitfield *bf, const uint8_t *obj, size_t n,
		     uint32_t *value);

#endif
