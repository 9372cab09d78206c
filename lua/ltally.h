/*
 * The pieces of the Lua 5.4 module (the C files of lua/) and the one profiling state they
 * share. Lua calls hooks, the timer's signal handler and atexit handlers with no context of
 * ours, so the state is one per process (ltally_state()); below those entry points every
 * function is given it. lua/tally.c says how the module works as a whole.
 */
#ifndef LUA_LTALLY_H
#define LUA_LTALLY_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <lua.h>

#include "tally/agent.h"

/* The module's own mode beside the agent's: sampled by a timer (TALLY_AGENT_SAMPLE with
 * caller_samples inside). */
#define LTALLY_MODE_TIMER 0x100

/* Frames a shadow stack holds (mixed mode's on tally.run's native stack: 8 KiB). */
#define LTALLY_SHADOW_FRAMES 512

#define LTALLY_CHAIN_MAX 64

struct ltally_config {
	unsigned mode;
	const char *output, *exact_output, *registry_dir;
	uint32_t hz;
};

/* A frame as the shadow stack enters it: its function's agent id (0: unknown), the
 * function object (a pointer to compare, never followed) and its first pc (a Lua
 * function's first line, 0 for C). */
struct ltally_frame {
	uint32_t id;
	const void *obj;
	uint64_t first;
};

/* Functions seen so far, each mapped to its agent id (lua/functions.c); owns its slots. */
struct ltally_fn_table {
	struct ltally_fn_slot *slots;
	size_t cap, n;
};

/* The resumers of the state whose stack the shadow stack holds (lua/coroutines.c). */
struct ltally_coroutines {
	lua_State *cur; /* whose stack the shadow stack holds; NULL: rebuild at the next hook */
	lua_State *chain[LTALLY_CHAIN_MAX]; /* the resumers of cur, oldest first */
	size_t nchain;
	bool chain_lost; /* resumed deeper than LTALLY_CHAIN_MAX: stacks start at cur */
};

/* Timer mode (lua/timer.c): the state whose hook the signal arms (NULL: none), the timer
 * and the handler SIGPROF had. */
struct ltally_timer {
	lua_State *armed; /* atomic: read by the handler */
	bool made;
	timer_t timer;
	struct sigaction old_prof;
};

/* One profiled Lua state per process. Owns the agent, the function table and the arrays
 * below; stop frees them. */
struct ltally {
	struct tally_agent *agent;
	struct tally_agent_thread *t; /* the registered thread (sampling, exact mode) */
	/* The shadow stack the hooks keep: t's, or in mixed mode tally.run's record while it
	 * runs and spare outside it. */
	struct tally_agent_thread *shadow;
	struct tally_agent_thread spare;
	struct tally_agent_frame spare_frames[LTALLY_SHADOW_FRAMES];
	bool mixed, exact;
	int failed; /* the first failure inside a hook, reported at stop */
	struct ltally_fn_table fns;
	struct ltally_frame *walk; /* the frames of a rebuild, innermost first */
	size_t walk_cap;
	const void **objs; /* the function object of each shadow frame (lua_topointer) */
	size_t objs_cap;
	struct ltally_coroutines co;
	struct ltally_timer timer;
};

struct ltally *ltally_state(void);

static inline void ltally_fail(struct ltally *s, int rc)
{
	if (!s->failed)
		s->failed = rc;
}

/* lua/functions.c */
struct ltally_frame ltally_fn_frame(struct ltally *s, lua_State *L, lua_Debug *ar);
const void *ltally_fn_object(lua_State *L, lua_Debug *ar);
void ltally_fn_table_free(struct ltally_fn_table *fns);

/* lua/shadow.c */
void ltally_shadow_enter(struct ltally *s, struct ltally_frame fr, uint64_t call_pc);
void ltally_shadow_leave(struct ltally *s);
void ltally_shadow_clear(struct ltally *s);
size_t ltally_shadow_collect(struct ltally *s, lua_State *L);
void ltally_shadow_walk(struct ltally *s, lua_State *L);
void ltally_shadow_move(struct ltally *s, struct tally_agent_thread *to);
uint64_t ltally_call_line(lua_State *L, int level);
bool ltally_wants_call_lines(const struct ltally *s);

/* lua/coroutines.c */
void ltally_rebuild(struct ltally *s, lua_State *L);

/* lua/hooks.c */
void ltally_hook(lua_State *L, lua_Debug *ar);

/* lua/timer.c */
const char *ltally_timer_start(struct ltally_timer *tm, lua_State *L, uint32_t hz);
void ltally_timer_stop(struct ltally_timer *tm);

/* lua/session.c */
const char *ltally_start(struct ltally *s, lua_State *L, const struct ltally_config *c);
const char *ltally_stop(struct ltally *s, lua_State *L);

#endif
