/*
 * What tally record and its BPF program (python_stack.bpf.c) share besides the records the
 * program writes (perf/interp_records.h, which replay reads too): the per-process
 * configuration the program reads from its map, its settings and counters, and the caps of
 * what it reads. Both sides are x86-64 little-endian C, so the structs are the layout.
 */
#ifndef TALLY_RECORD_PYTHON_ABI_H
#define TALLY_RECORD_PYTHON_ABI_H

#include <linux/types.h>

/* Caps of what a code record carries (bytes). */
#define PY_QUALNAME_MAX 256
#define PY_FILENAME_MAX 1024
#define PY_LINETABLE_MAX 16384

/* Every read of an object is one block of this many bytes at most: offsets of the fields
 * read from it must lie below. CPython 3.11's frame is 72 bytes, its code object's fixed
 * part 192 (x86-64); a layout with fields further out is not captured. */
#define PY_BLOCK 256

/* One process's interpreter: absolute addresses in it and the struct offsets (bytes) the
 * walk needs, from the interpreter's debug information. */
struct py_proc_cfg {
	__u64 runtime;   /* &_PyRuntime */
	__u64 code_type; /* &PyCode_Type */
	__u64 pidns_dev, pidns_ino; /* the process's pid namespace: native_thread_id's */
	__u16 runtime_interp_head;  /* _PyRuntime.interpreters.head */
	__u16 interp_next, interp_threads_head;
	__u16 tstate_next, tstate_native_tid, tstate_cframe;
	__u16 cframe_current_frame;
	__u16 frame_code, frame_previous, frame_prev_instr, frame_is_entry, frame_owner;
	__u16 frame_size; /* bytes of a frame read: past the last field used */
	__u16 code_size;  /* bytes of a code object read: past the last field used */
	__u16 code_qualname, code_filename, code_firstlineno, code_linetable;
	__u16 code_adaptive, code_firsttraceable;
	__u16 bytes_size, bytes_sval; /* PyBytesObject: ob_size, ob_sval */
	/* PyUnicode: the state word, its length, where compact ASCII and compact data
	 * start, the cached UTF-8 of a compact object and its length. */
	__u16 str_state, str_length, str_ascii_data, str_compact_data, str_utf8, str_utf8_len;
	__u8 state_kind_shift, state_compact_bit, state_ascii_bit;
	__u8 owner_generator; /* _frameowner's FRAME_OWNED_BY_GENERATOR */
	__u16 max_threads;    /* thread states walked before giving up */
	__u16 pad;
	/* Told apart from an earlier process of the same pid (code records are per process). */
	__u32 gen;
	__u32 pad2;
};

/* Tally's own pid namespace, in which the map's keys are. */
struct py_settings {
	__u64 pidns_dev, pidns_ino;
};

/* Per-CPU counters the program keeps, read by tally record at the end. */
struct py_counters {
	__u64 stacks;       /* stack records written */
	__u64 codes;        /* code records written */
	__u64 output_lost;  /* records the bpf-output event refused (its ring full) */
	__u64 no_thread;    /* samples of a Python process on a thread with no thread state */
	__u64 runs, run_ns; /* samples of Python processes, and the program's time on them */
};

#endif
