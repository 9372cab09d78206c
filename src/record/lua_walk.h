/*
 * A thread's Lua 5.4 frames read from user space while it is stopped (ptrace mode), for
 * a Lua interpreter without debug information (Debian's stripped lua5.4): the running
 * lua_State is found among the thread's registers and the words of its native stack
 * (each candidate checked through its global_State: l_G->mainthread->l_G == l_G), and
 * the states nested in it (a coroutine and the threads that resumed it) come out in the
 * order the stack holds them. Each state's CallInfo chain gives the frames; the records
 * are perf/interp_records.h's Lua section. The target's memory is input: every read is
 * bounded, every count capped, cycles found (docs/lua.md).
 */
#ifndef TALLY_RECORD_LUA_WALK_H
#define TALLY_RECORD_LUA_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "lua/lua.h"
#include "perf/interp_records.h"
#include "record/interp.h"

/* Words of a thread's stack searched for lua_States, from its stack pointer up. */
#define REC_LUA_SCAN_BYTES (64 * 1024)
/* Nested states (coroutines resumed inside one another) followed at most. */
#define REC_LUA_MAX_STATES 32
/* The address caches: slots, a power of two. */
#define REC_LUA_NOT_STATE_SLOTS 1024
#define REC_LUA_SEEN_SLOTS 16384

/* What a process's walks keep: its layout, the global_State last checked, the words
 * known not to be states, the prototypes whose record was written. Owns nothing outside
 * itself; zero it (then set lay and pid) to start. */
struct rec_lua_proc {
	const struct lua_layout *lay;
	uint32_t pid;
	uint64_t g, mainthread;
	uint64_t not_state[REC_LUA_NOT_STATE_SLOTS];
	uint64_t seen[REC_LUA_SEEN_SLOTS][3]; /* proto, source, lineinfo; all zero: free */
	size_t nseen;
};

/* Emits the thread's records (the proto records its stack needs, then the stack). What
 * emit returned (0 when all were emitted). th->cache is not used. */
int rec_lua_walk(struct rec_lua_proc *p, const struct rec_mem *mem,
		 const struct rec_interp_thread *th, rec_interp_emit_fn emit, void *arg);

/* Forgets which proto records were written (a new output file). */
void rec_lua_regen(struct rec_lua_proc *p);

#endif
