/*
 * The names of the counters a profile of a recording carries (unwind quality, and what
 * the frame sources counted). They are named here because the builder (replay) and the
 * reader (a report's header) must agree on them, also in a profile merged or read back
 * from pprof: they are the model's vocabulary, not any source's.
 */
#ifndef TALLY_PROFILE_COUNTERS_H
#define TALLY_PROFILE_COUNTERS_H

/* Counts of samples (unwound stacks), of complete, truncated and single-frame stacks, the
 * frames of all stacks, and the JIT frames among them. */
#define PROF_COUNTER_SAMPLES "samples"
#define PROF_COUNTER_COMPLETE "unwind: complete stacks"
#define PROF_COUNTER_TRUNCATED "unwind: truncated stacks"
#define PROF_COUNTER_SINGLE "unwind: single-frame stacks"
#define PROF_COUNTER_FRAMES "unwind: frames"
/* Of those, the frames named as JIT code (perf maps); only when there are some. */
#define PROF_COUNTER_JIT_FRAMES "unwind: JIT frames"
/* Truncated stacks whose walk ended in JIT code, and the steps made with the CFI a JIT
 * wrote (jitdump's JIT_CODE_UNWINDING_INFO); only when there are some. */
#define PROF_COUNTER_JIT_STOPS "unwind: stopped in JIT code"
#define PROF_COUNTER_JIT_CFI_STEPS "unwind: JIT CFI steps"
/* Python frames (recordings with them only): the samples that have some, the frames, and
 * the samples that kept native frames in their place, by reason. */
#define PROF_COUNTER_PY_SAMPLES "python: samples with Python frames"
#define PROF_COUNTER_PY_FRAMES "python: frames"
#define PROF_COUNTER_PY_INCONSISTENT "python: stacks inconsistent"
#define PROF_COUNTER_PY_CODE_UNKNOWN "python: code unknown"
#define PROF_COUNTER_PY_UNRECORDED "python: stacks not recorded"
#define PROF_COUNTER_PY_CUT "python: stacks cut"
#define PROF_COUNTER_PY_READ_FAILED "python: stacks read failed"
#define PROF_COUNTER_PY_BETWEEN "python: eval loop between frames"
#define PROF_COUNTER_PY_MALFORMED "python: malformed records"
#define PROF_COUNTER_PY_GIL_HELD "python: samples holding the GIL"
#define PROF_COUNTER_PY_GIL_NOT_HELD "python: samples not holding the GIL"
/* Ruby frames (recordings with them only): as Python's; C methods nested in another C
 * method's native frames (rb_funcall) are left out of the splice and counted. */
#define PROF_COUNTER_RB_SAMPLES "ruby: samples with Ruby frames"
#define PROF_COUNTER_RB_FRAMES "ruby: frames"
#define PROF_COUNTER_RB_INCONSISTENT "ruby: stacks inconsistent"
#define PROF_COUNTER_RB_UNKNOWN "ruby: iseq or method unknown"
#define PROF_COUNTER_RB_UNRECORDED "ruby: stacks not recorded"
#define PROF_COUNTER_RB_CUT "ruby: stacks cut"
#define PROF_COUNTER_RB_READ_FAILED "ruby: stacks read failed"
#define PROF_COUNTER_RB_NESTED_C "ruby: nested C methods left out"
#define PROF_COUNTER_RB_MALFORMED "ruby: malformed records"
/* VM frames of mixed mode (recordings with a registry only): the samples that have some,
 * the frames, and the loop records that left their native frame in place, by reason. */
#define PROF_COUNTER_VM_SAMPLES "vm: samples with VM frames"
#define PROF_COUNTER_VM_FRAMES "vm: frames"
#define PROF_COUNTER_VM_MALFORMED "vm: records of another layout"
#define PROF_COUNTER_VM_CHANGING "vm: stacks changing"
#define PROF_COUNTER_VM_EMPTY "vm: records without frames"
#define PROF_COUNTER_VM_TOO_DEEP "vm: stacks deeper than their record"
#define PROF_COUNTER_VM_UNREADABLE "vm: frames outside the stack copy"
#define PROF_COUNTER_VM_NO_REGISTRY "vm: no registry"
#define PROF_COUNTER_VM_UNKNOWN "vm: function not registered"
#define PROF_COUNTER_VM_PC_OUTSIDE "vm: pc outside its function"

/* Lua frames read in ptrace mode (recordings with them only): the samples that have
 * some, the frames, and the samples that kept native frames, by reason. */
#define PROF_COUNTER_LUA_SAMPLES "lua: samples with Lua frames"
#define PROF_COUNTER_LUA_FRAMES "lua: frames"
#define PROF_COUNTER_LUA_INCONSISTENT "lua: stacks inconsistent"
#define PROF_COUNTER_LUA_PROTO_UNKNOWN "lua: function unknown"
#define PROF_COUNTER_LUA_READ_FAILED "lua: stacks read failed"
#define PROF_COUNTER_LUA_NO_STATE "lua: no running state found"
#define PROF_COUNTER_LUA_MALFORMED "lua: malformed records"

#endif
