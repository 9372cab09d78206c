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

/* How the walk differs between CPython versions (py_proc_cfg.flags). */
/* The current frame is at tstate->tstate_frame->cframe_current_frame (3.11, 3.12: a
 * _PyCFrame between); without it at tstate->tstate_frame (3.13). */
#define PY_CFG_CFRAME 1u
/* Each eval activation pushes a frame owned by the C stack (owner == owner_cstack) below
 * its first frame (3.12, 3.13): such frames are skipped, and the frame above one is its
 * activation's entry frame. Without it the frame's own is_entry says so (3.11). */
#define PY_CFG_CSTACK_ENTRY 2u
/* Frames are PyFrameObjects (3.8-3.10): the innermost at tstate->tstate_frame, each caller
 * at frame_previous (f_back), the instruction at frame_lasti (an int, -1 before the
 * first); every frame is its own eval activation's, so each is marked an entry frame. */
#define PY_CFG_FRAME_OBJECTS 4u
/* frame_lasti counts bytes (3.8, 3.9), not code units (3.10). */
#define PY_CFG_LASTI_BYTES 8u
/* A thread state is the sampled thread's when its tstate_native_tid field (thread_id,
 * pthread_self()) is the thread's thread pointer, its FS base on x86-64 (3.8-3.10 keep no
 * kernel tid), read from the task at py_settings.task_fsbase; without it the field holds
 * the kernel tid (native_thread_id). */
#define PY_CFG_THREAD_POINTER 16u

/* One process's interpreter: absolute addresses in it and the struct offsets (bytes) the
 * walk needs, from the interpreter itself (its _Py_DebugOffsets or debug information). */
struct py_proc_cfg {
	__u64 runtime;   /* &_PyRuntime */
	__u64 code_type; /* &PyCode_Type */
	__u64 pidns_dev, pidns_ino; /* the process's pid namespace: native_thread_id's */
	__u16 runtime_interp_head;  /* _PyRuntime.interpreters.head */
	__u16 interp_next, interp_threads_head;
	__u16 tstate_next, tstate_native_tid; /* PY_CFG_THREAD_POINTER: thread_id */
	__u16 tstate_frame;         /* tstate->cframe, or tstate->current_frame (PY_CFG_CFRAME) */
	__u16 cframe_current_frame; /* _PyCFrame.current_frame (PY_CFG_CFRAME) */
	/* _PyInterpreterFrame: f_code (3.13: f_executable), previous, the code unit whose line
	 * is the frame's (prev_instr; 3.13: instr_ptr), is_entry (3.11), owner */
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
	__u8 flags;           /* PY_CFG_* */
	__u8 owner_cstack;    /* _frameowner's FRAME_OWNED_BY_CSTACK (PY_CFG_CSTACK_ENTRY) */
	/* Told apart from an earlier process of the same pid (code records are per process). */
	__u32 gen;
	__u16 frame_lasti; /* PyFrameObject.f_lasti (PY_CFG_FRAME_OBJECTS) */
	__u16 code_flags;  /* PERF_PY_CODE_LINES_* of this version's line tables */
	/* The GIL (struct _gil_runtime_state): at runtime + gil_runtime (3.8-3.11), or where
	 * the thread's interpreter (tstate + tstate_interp) points at + gil_interp (3.12,
	 * 3.13); both 0: not read. Its locked (int) and last_holder (PyThreadState *). */
	__u32 gil_runtime;
	__u16 gil_interp, tstate_interp;
	__u16 gil_locked, gil_last_holder;
	/* &PyUnicode_Type, &PyBytes_Type: what a code object's names and line table must be
	 * (a pointer to anything else is read as a failed read, never as text) */
	__u64 str_type, bytes_type;
};

/* Tally's own pid namespace, in which the map's keys are; where the running kernel keeps a
 * task's FS base (task_struct.thread.fsbase, from its BTF; 0: unknown, and processes that
 * need it are not read). */
struct py_settings {
	__u64 pidns_dev, pidns_ino;
	__u32 task_fsbase;
	__u32 pad;
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
