/*
 * The records tally record's BPF programs write as the raw data of bpf-output samples, with
 * an interpreter's frames at a sample's instant: the contract between the BPF side (compiled
 * by clang -target bpf), the recorder and replay, declared once here (docs/python.md, "In
 * the perf.data"). Little-endian; the structs are the layout, which the asserts pin down.
 * One section per interpreter, each with a magic of its own: CPython's (the BPF program's,
 * or ptrace mode's), Ruby's and Lua's (written by tally itself in ptrace mode, as samples
 * of the same kind of attribute).
 */
#ifndef TALLY_PERF_INTERP_RECORDS_H
#define TALLY_PERF_INTERP_RECORDS_H

#include <linux/types.h>
#include <stddef.h>

/* CPython: a stack record per sample, a code record the first time a process's stack names
 * a code object (before that stack). */
#define PERF_PY_MAGIC 0x31595054u /* "TPY1" */
#define PERF_PY_STACK 1
#define PERF_PY_CODE 2
#define PERF_PY_STACK_CUT 1u         /* more frames than PERF_PY_MAX_FRAMES */
#define PERF_PY_STACK_READ_FAILED 2u /* a read failed, or the frames made a cycle: the
				      * stack stops there (after a cycle it is empty) */
/* The thread's GIL could be read (CPython's runtime or interpreter lock, at the sample),
 * and whether the thread held it then. Neither: not known (a thread with no thread state,
 * or a recording from before these bits). */
#define PERF_PY_STACK_GIL_KNOWN 4u
#define PERF_PY_STACK_GIL_HELD 8u
#define PERF_PY_CODE_CUT 1u          /* a string or the line table was longer than its cap */
/* A string or the line table could not be read, or was not a str (bytes): it is empty */
#define PERF_PY_CODE_READ_FAILED 8u
/* The line table's format (none of these: 3.11-3.13's location table, co_linetable) */
#define PERF_PY_CODE_LINES_LNOTAB 2u /* 3.8 and 3.9's co_lnotab */
#define PERF_PY_CODE_LINES_310 4u    /* 3.10's co_linetable */
#define PERF_PY_FRAME_ENTRY 1u       /* the first frame its _PyEval_EvalFrameDefault ran
				      * (3.8-3.10: every frame, each runs in its own) */
#define PERF_PY_MAX_FRAMES 1024

/* A stack: nframes struct perf_py_frame follow, innermost first. */
struct perf_py_stack_head {
	__u32 magic;
	__u16 type;
	__u16 flags; /* PERF_PY_STACK_* */
	__u32 pid, tid;
	__u32 nframes;
	__u32 reserved; /* 0 */
};

struct perf_py_frame {
	__u64 code;   /* address of its PyCodeObject */
	__s32 lasti;  /* code-unit index of its current instruction, -1 unknown */
	__u32 fflags; /* PERF_PY_FRAME_* */
};

/* A code object: qualname (before 3.11: co_name), filename (UTF-8) and the line table (its
 * format in flags) follow at once, unaligned, so the head is packed: 36 bytes. */
struct perf_py_code_head {
	__u32 magic;
	__u16 type;
	__u16 flags; /* PERF_PY_CODE_* */
	__u32 pid, reserved;
	__u64 code;
	__s32 firstlineno;
	__u16 qualname_len, filename_len;
	__u32 linetable_len;
} __attribute__((packed));

_Static_assert(sizeof(struct perf_py_stack_head) == 24, "python stack head: 24 bytes");
_Static_assert(offsetof(struct perf_py_stack_head, type) == 4, "stack: type at 4");
_Static_assert(offsetof(struct perf_py_stack_head, flags) == 6, "stack: flags at 6");
_Static_assert(offsetof(struct perf_py_stack_head, pid) == 8, "stack: pid at 8");
_Static_assert(offsetof(struct perf_py_stack_head, tid) == 12, "stack: tid at 12");
_Static_assert(offsetof(struct perf_py_stack_head, nframes) == 16, "stack: nframes at 16");
_Static_assert(offsetof(struct perf_py_stack_head, reserved) == 20, "stack: reserved at 20");

_Static_assert(sizeof(struct perf_py_frame) == 16, "python frame: 16 bytes");
_Static_assert(offsetof(struct perf_py_frame, lasti) == 8, "frame: lasti at 8");
_Static_assert(offsetof(struct perf_py_frame, fflags) == 12, "frame: fflags at 12");

_Static_assert(sizeof(struct perf_py_code_head) == 36, "python code head: 36 bytes");
_Static_assert(offsetof(struct perf_py_code_head, type) == 4, "code: type at 4");
_Static_assert(offsetof(struct perf_py_code_head, flags) == 6, "code: flags at 6");
_Static_assert(offsetof(struct perf_py_code_head, pid) == 8, "code: pid at 8");
_Static_assert(offsetof(struct perf_py_code_head, reserved) == 12, "code: reserved at 12");
_Static_assert(offsetof(struct perf_py_code_head, code) == 16, "code: code at 16");
_Static_assert(offsetof(struct perf_py_code_head, firstlineno) == 24, "code: line at 24");
_Static_assert(offsetof(struct perf_py_code_head, qualname_len) == 28, "code: names at 28");
_Static_assert(offsetof(struct perf_py_code_head, filename_len) == 30, "code: file at 30");
_Static_assert(offsetof(struct perf_py_code_head, linetable_len) == 32, "code: table at 32");

/* Ruby (docs/ruby.md, "In the perf.data"): written by tally record's ptrace sampler while the
 * sampled thread is stopped. A stack record per sample, and before the first stack of a
 * process that names them, an iseq record per instruction sequence (label, path, first line,
 * its line table) and a cfunc record per method entry of a C function (its name, and the
 * function's address, by which replay finds its native frame). */
#define PERF_RB_MAGIC 0x31425254u /* "TRB1" */
#define PERF_RB_STACK 1
#define PERF_RB_ISEQ 2
#define PERF_RB_CFUNC 3
#define PERF_RB_STACK_CUT 1u         /* more frames than PERF_RB_MAX_FRAMES */
#define PERF_RB_STACK_READ_FAILED 2u /* a read failed or the frames lied (a pointer outside
				      * the thread's VM stack, a cycle): the stack stops there */
#define PERF_RB_NAME_CUT 1u          /* a string or the line table was longer than its cap */
#define PERF_RB_NAME_READ_FAILED 8u  /* a string or the line table could not be read, or was
				      * not what it should be: it is empty */
#define PERF_RB_FRAME_FINISH 1u      /* the first frame its rb_vm_exec activation ran (Ruby's
				      * VM_FRAME_FLAG_FINISH): entered from C */
#define PERF_RB_FRAME_CFUNC 2u       /* a C function's frame: addr is its method entry */
#define PERF_RB_MAX_FRAMES 1024
#define PERF_RB_LABEL_MAX 256
#define PERF_RB_PATH_MAX 1024
#define PERF_RB_LINES_MAX 8192       /* line table entries kept per iseq */

/* A stack: nframes struct perf_rb_frame follow, innermost first. */
struct perf_rb_stack_head {
	__u32 magic;
	__u16 type;
	__u16 flags; /* PERF_RB_STACK_* */
	__u32 pid, tid;
	__u32 nframes;
	__u32 reserved; /* 0 */
};

struct perf_rb_frame {
	__u64 addr;   /* its rb_iseq_t, or (PERF_RB_FRAME_CFUNC) its method entry */
	__s32 pc;     /* iseq: cfp->pc - iseq_encoded in VALUE words (Ruby's own calc_pos
		       * takes the instruction before it); -1 unknown or a cfunc */
	__u32 fflags; /* PERF_RB_FRAME_* */
};

/* An instruction sequence: label, path (UTF-8, as Ruby holds them) and nlines struct
 * perf_rb_line follow at once, unaligned, so the head is packed: 36 bytes. */
struct perf_rb_iseq_head {
	__u32 magic;
	__u16 type;
	__u16 flags; /* PERF_RB_NAME_* */
	__u32 pid, reserved;
	__u64 iseq;
	__s32 first_lineno;
	__u16 label_len, path_len;
	__u32 nlines;
} __attribute__((packed));

/* The line of the instructions from pos (in VALUE words) up to the next entry's pos. */
struct perf_rb_line {
	__u32 pos;
	__s32 line;
};

/* A C function's method entry: its name (the method's original id) follows. */
struct perf_rb_cfunc_head {
	__u32 magic;
	__u16 type;
	__u16 flags; /* PERF_RB_NAME_* */
	__u32 pid, reserved;
	__u64 me;   /* the rb_callable_method_entry_t */
	__u64 func; /* the C function it calls, in the process's address space */
	__u16 name_len, reserved2;
	__u32 reserved3;
} __attribute__((packed));

_Static_assert(sizeof(struct perf_rb_stack_head) == 24, "ruby stack head: 24 bytes");
_Static_assert(offsetof(struct perf_rb_stack_head, nframes) == 16, "rb stack: nframes at 16");
_Static_assert(sizeof(struct perf_rb_frame) == 16, "ruby frame: 16 bytes");
_Static_assert(offsetof(struct perf_rb_frame, fflags) == 12, "rb frame: fflags at 12");
_Static_assert(sizeof(struct perf_rb_iseq_head) == 36, "ruby iseq head: 36 bytes");
_Static_assert(offsetof(struct perf_rb_iseq_head, iseq) == 16, "rb iseq: iseq at 16");
_Static_assert(offsetof(struct perf_rb_iseq_head, nlines) == 32, "rb iseq: nlines at 32");
_Static_assert(sizeof(struct perf_rb_line) == 8, "ruby line: 8 bytes");
_Static_assert(sizeof(struct perf_rb_cfunc_head) == 40, "ruby cfunc head: 40 bytes");
_Static_assert(offsetof(struct perf_rb_cfunc_head, func) == 24, "rb cfunc: func at 24");
_Static_assert(offsetof(struct perf_rb_cfunc_head, name_len) == 32, "rb cfunc: name at 32");

/* Lua 5.4 (read by tally in ptrace mode, record/lua_walk.h): a stack record per sample, a
 * proto record the first time a process's stack names a function prototype (before that
 * stack). A stack's frames are its threads' CallInfos, innermost first: the running
 * coroutine's, then those of the thread that resumed it, and so on out to the main
 * thread's; no thread's base CallInfo (the C level that started it). */
#define PERF_LUA_MAGIC 0x3141554cu /* "LUA1" */
#define PERF_LUA_STACK 1
#define PERF_LUA_PROTO 2
#define PERF_LUA_STACK_CUT 1u         /* more frames than PERF_LUA_MAX_FRAMES */
#define PERF_LUA_STACK_READ_FAILED 2u /* a read failed, or the CallInfos made a cycle: the
				       * stack stops at a frame marked PERF_LUA_FRAME_FAILED */
#define PERF_LUA_STACK_NO_STATE 4u    /* no running lua_State was found on the thread */
#define PERF_LUA_FRAME_C 1u        /* a C function (light or closure): addr is the function */
#define PERF_LUA_FRAME_TAIL 2u     /* it was tail called (CIST_TAIL): its callers are gone */
#define PERF_LUA_FRAME_PC_REG 4u   /* pc from a register of the VM, not ci->savedpc */
#define PERF_LUA_FRAME_THREAD 8u   /* the outermost frame of its thread (coroutine) */
#define PERF_LUA_FRAME_FAILED 16u  /* its function could not be read: addr 0 */
#define PERF_LUA_PROTO_CUT 1u         /* the source or the line information was cut */
#define PERF_LUA_PROTO_READ_FAILED 2u /* the source or line information was unreadable */
#define PERF_LUA_MAX_FRAMES 1024
/* A proto record's caps, which keep it under 60 KiB (a perf sample is at most 64 KiB):
 * the source, lineinfo, abslineinfo pairs, instructions, and the names block. A name
 * (a constant string, a local's or an upvalue's) is cut to PERF_LUA_NAME_MAX bytes. */
#define PERF_LUA_SOURCE_MAX 256
#define PERF_LUA_LINEINFO_MAX 16384
#define PERF_LUA_ABS_MAX 256
#define PERF_LUA_CODE_MAX 6144
#define PERF_LUA_NAMES_MAX 16384
#define PERF_LUA_NAME_MAX 64
#define PERF_LUA_KSTR_MAX 256
#define PERF_LUA_LOCVARS_MAX 256
#define PERF_LUA_UPVALS_MAX 64

/* A stack: nframes struct perf_lua_frame follow, innermost first. */
struct perf_lua_stack_head {
	__u32 magic;
	__u16 type;
	__u16 flags; /* PERF_LUA_STACK_* */
	__u32 pid, tid;
	__u32 nframes;
	__u32 release; /* N of Lua 5.4.N */
};

struct perf_lua_frame {
	__u64 addr;   /* a Lua function's Proto, a C function's entry (runtime addresses) */
	__s32 pc;     /* a Lua function's current instruction (0-based), -1 unknown or C */
	__u32 fflags; /* PERF_LUA_FRAME_* */
};

/* A function prototype: its source (as Lua keeps it: "@file", "=name" or the chunk's
 * text), its lineinfo (one signed byte per instruction), abslineinfo (nabs pairs of __s32
 * pc, line), its code (ncode little-endian instructions, for the names of the functions it
 * calls) and names_len bytes of names follow at once: nkstr string constants (__u32 index
 * in k, __u8 length, the bytes), nlocvars locals (__s32 startpc, __s32 endpc, __u8
 * length, the bytes), nupvals upvalue names (__u8 length, the bytes). The head is packed:
 * 64 bytes. */
struct perf_lua_proto_head {
	__u32 magic;
	__u16 type;
	__u16 flags; /* PERF_LUA_PROTO_* */
	__u32 pid, reserved;
	__u64 proto;
	__s32 linedefined, lastlinedefined;
	__u32 sizecode;
	__u16 source_len, reserved2;
	__u32 lineinfo_len, nabs;
	__u32 ncode, names_len;
	__u16 nkstr, nlocvars, nupvals, reserved3;
} __attribute__((packed));

_Static_assert(sizeof(struct perf_lua_stack_head) == 24, "lua stack head: 24 bytes");
_Static_assert(offsetof(struct perf_lua_stack_head, nframes) == 16, "lua stack: nframes at 16");
_Static_assert(sizeof(struct perf_lua_frame) == 16, "lua frame: 16 bytes");
_Static_assert(offsetof(struct perf_lua_frame, fflags) == 12, "lua frame: fflags at 12");
_Static_assert(sizeof(struct perf_lua_proto_head) == 64, "lua proto head: 64 bytes");
_Static_assert(offsetof(struct perf_lua_proto_head, ncode) == 48, "lua proto: code at 48");
_Static_assert(offsetof(struct perf_lua_proto_head, nkstr) == 56, "lua proto: names at 56");
_Static_assert(offsetof(struct perf_lua_proto_head, proto) == 16, "lua proto: proto at 16");
_Static_assert(offsetof(struct perf_lua_proto_head, source_len) == 36, "lua proto: source at 36");
_Static_assert(offsetof(struct perf_lua_proto_head, nabs) == 44, "lua proto: nabs at 44");

#endif
