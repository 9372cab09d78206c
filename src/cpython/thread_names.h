/*
 * Python's own names of a CPython 3.8-3.13 process's threads (threading.Thread.name), read
 * from its memory: each interpreter's modules dict, its 'threading' module, the module's
 * '_active' dict (ident -> Thread), and in each Thread's instance attributes '_native_id'
 * (the kernel's tid) and '_name' (a str). The objects' layouts (dicts, split keys and their
 * values arrays, instance dicts: 3.8-3.10 at tp_dictoffset, 3.11-3.12 managed before the
 * object, 3.13 inline values after it; ints) are facts of each version's headers, held
 * here. The memory is untrusted: every count is capped, every object's shape checked, and
 * a walk that meets anything unexpected gives no name, never a wrong one.
 */
#ifndef TALLY_CPYTHON_THREAD_NAMES_H
#define TALLY_CPYTHON_THREAD_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/layout.h"

/* Where a version keeps what the walk reads in objects, in bytes from their starts: facts
 * of its headers (tests/cpython/layout.test.sh checks each against the DWARF of pyenv's
 * build). Besides these, from the headers' own accessors: 3.11's and 3.12's managed dict
 * 24 bytes before the object (3.11: its values 32 before), 3.13's inline values right
 * after the object's fixed part (tp_basicsize). */
struct cpy_object_facts {
	uint16_t major_minor; /* PY_VERSION_HEX >> 16 */
	uint16_t tp_basicsize, tp_flags, tp_dictoffset; /* PyTypeObject */
	uint16_t ht_cached_keys;                        /* PyHeapTypeObject */
	uint16_t ma_keys, ma_values;                    /* PyDictObject */
	uint16_t md_dict;                               /* PyModuleObject */
	/* PyDictKeysObject: dk_size (3.8-3.10) or dk_log2_size (3.11+, then
	 * dk_log2_index_bytes and dk_kind, a byte each), dk_nentries, dk_indices */
	uint16_t dk_size, dk_nentries, dk_indices;
	/* PyLongObject: ob_size (3.8-3.11) or long_value.lv_tag (3.12+), the digits */
	uint16_t long_size, ob_digit;
	/* PyDictValues: the values (3.13: after a header) and its valid byte (3.13) */
	uint16_t values, values_valid;
};

/* The facts of version_hex's minor version, NULL when it is not 3.8-3.13. */
const struct cpy_object_facts *cpy_object_facts(uint32_t version_hex);

/* Reads n bytes of the target at addr into buf: 0, or nonzero when any of them could not
 * be read. */
typedef int (*cpy_read_fn)(void *arg, uint64_t addr, void *buf, size_t n);

/* Bytes of a name kept, with its NUL (longer names are cut at a character boundary). */
#define CPY_THREAD_NAME_MAX 64

struct cpy_thread_name {
	uint32_t tid; /* Thread._native_id */
	char name[CPY_THREAD_NAME_MAX];
};

/* Where the threading module keeps its threads: its _active dict, and the type of dicts
 * (the modules dict's ob_type), by which a cached active is checked before each use. */
struct cpy_threading {
	uint64_t active;
	uint64_t dict_type;
};

/* Finds the threading module's _active dict in the first interpreter (from
 * _PyRuntime.interpreters.head, at runtime) that imported it: 0 and *out, -ENOENT when no
 * interpreter has (yet), -EIO when the memory could not be read or held what no CPython
 * does. */
int cpy_threading_find(const struct cpy_layout *l, uint64_t runtime, cpy_read_fn read,
		       void *arg, struct cpy_threading *out);

/* The Threads of t->active with a _native_id and a str _name, at most max of them written to
 * out: their number, or -EIO as above (t no longer a dict: the caller finds it again). */
int cpy_thread_names(const struct cpy_layout *l, const struct cpy_threading *t,
		     cpy_read_fn read, void *arg, struct cpy_thread_name *out, size_t max);

#endif
