/*
 * The Lua 5.4 module (build/lua/tally.so): profiles a Lua program with the agent
 * (include/tally/agent.h), through Lua's public C API only (lua_sethook, lua_getinfo,
 * lua_getstack). `lua5.4 -ltally script.lua` starts profiling when the module loads;
 * docs/agent.md describes the environment variables and tally.start{...}/tally.stop().
 * This file holds the bindings: luaopen_tally, tally.start, tally.stop and tally.run.
 *
 * Lua's dispatch loop is not ours, so the module cannot store a pc before each
 * instruction. It keeps the agent's shadow stack with call and return hooks instead (a
 * frame per Lua or C function, as lua_getinfo names it: lua/hooks.c, lua/shadow.c,
 * lua/functions.c), which the agent's sampler reads; exact mode adds a count hook that
 * fires at every VM instruction and charges one unit to the current line of the running
 * Lua function, through the agent's exact hooks (the calling-context tree of the profile
 * module, as the sBPF CU profile). Timer mode (lua/timer.c) samples with no hook between
 * ticks. Coroutines and errors are repaired by rebuilds (lua/coroutines.c).
 *
 * Mixed mode (`tally record`, docs/agent.md) needs the shadow stack in a native frame of
 * ours below the Lua code, where the kernel's copy of the stack carries it: tally.run(f,
 * ...) calls f in a C frame that holds a struct tally_agent_loop and the frames, and the
 * hooks write there while it runs (elsewhere into a state nobody reads). The module has
 * no frame in Lua's own dispatch loop, so the Lua frames replace tally.run's native frame
 * and Lua's native frames (its dispatch loop, string.rep's code, ...) sit above them all.
 * Without a line hook a Lua frame's pc is the line it last called from (or its first
 * line): what the call and return hooks see.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "ltally.h"

#define LUA_TALLY_API __attribute__((visibility("default")))

static int config_mode(const char *s, unsigned *mode)
{
	if (!strcmp(s, "sample"))
		*mode = TALLY_AGENT_SAMPLE;
	else if (!strcmp(s, "exact"))
		*mode = TALLY_AGENT_EXACT;
	else if (!strcmp(s, "both"))
		*mode = TALLY_AGENT_SAMPLE | TALLY_AGENT_EXACT;
	else if (!strcmp(s, "mixed"))
		*mode = TALLY_AGENT_MIXED;
	else if (!strcmp(s, "timer"))
		*mode = LTALLY_MODE_TIMER;
	else if (!strcmp(s, "off"))
		*mode = 0;
	else
		return -EINVAL;
	return 0;
}

static const char *opt_string(lua_State *L, const char *key, const char *dflt)
{
	lua_getfield(L, 1, key);
	const char *s = lua_isnil(L, -1) ? dflt : luaL_checkstring(L, -1);
	lua_pop(L, 1); /* the table keeps the string alive */
	return s;
}

/* tally.start{mode = "sample"|"exact"|"both"|"mixed"|"timer", output = PATH, exact_output = PATH,
 * registry_dir = DIR, hz = N} */
static int l_start(lua_State *L)
{
	struct ltally_config c = { .mode = TALLY_AGENT_SAMPLE };
	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TTABLE);
		const char *mode = opt_string(L, "mode", "sample");
		if (config_mode(mode, &c.mode) || !c.mode)
			return luaL_error(L, "tally.start: mode is sample, exact, both, mixed or timer, not %s",
					  mode);
		c.output = opt_string(L, "output", NULL);
		c.registry_dir = opt_string(L, "registry_dir", NULL);
		c.exact_output = opt_string(L, "exact_output", NULL);
		lua_getfield(L, 1, "hz");
		lua_Integer hz = lua_isnil(L, -1) ? 0 : luaL_checkinteger(L, -1);
		lua_pop(L, 1);
		if (hz < 0 || hz > 100000)
			return luaL_error(L, "tally.start: hz is 1 to 100000");
		c.hz = (uint32_t)hz;
	}
	const char *err = ltally_start(ltally_state(), L, &c);
	if (err)
		return luaL_error(L, "%s", err);
	return 0;
}

static int l_stop(lua_State *L)
{
	const char *err = ltally_stop(ltally_state(), L);
	if (err)
		return luaL_error(L, "%s", err);
	return 0;
}

/* tally.run(f, ...): f(...), its results returned. In mixed mode the shadow stack lives
 * in this function's native frame while f runs (a Lua error is caught and raised again
 * once the frame's record is closed: the hooks never write to a frame that is gone). */
static int l_run(lua_State *L)
{
	struct ltally *s = ltally_state();
	luaL_checkany(L, 1);
	int base = 1, n = lua_gettop(L) - 1;
	struct tally_agent *a = s->agent;
	if (!a || !s->mixed) {
		lua_call(L, n, LUA_MULTRET);
		return lua_gettop(L) - base + 1;
	}
	struct tally_agent_frame frames[LTALLY_SHADOW_FRAMES];
	struct tally_agent_loop loop;
	struct tally_agent_thread *outer = s->shadow, *t =
		tally_agent_loop_begin(a, &loop, frames, LTALLY_SHADOW_FRAMES);
	ltally_shadow_move(s, t);
	int status = lua_pcall(L, n, LUA_MULTRET, 0);
	if (s->agent == a && s->shadow == t) /* not stopped meanwhile */
		ltally_shadow_move(s, outer);
	tally_agent_loop_end(&loop);
	if (status != LUA_OK)
		return lua_error(L);
	return lua_gettop(L) - base + 1;
}

/* The state closes (the end of lua5.4, or os.exit(code, true)): write what was profiled. */
static int l_gc(lua_State *L)
{
	struct ltally *s = ltally_state();
	if (s->agent) {
		const char *err = ltally_stop(s, L);
		if (err)
			fprintf(stderr, "%s\n", err);
	}
	return 0;
}

/* Started by the environment: TALLY_LUA_MODE (sample, the default; exact; both; mixed;
 * timer; off), TALLY_LUA_OUTPUT, TALLY_LUA_EXACT_OUTPUT, TALLY_LUA_REGISTRY_DIR, TALLY_LUA_HZ. */
static void start_from_env(lua_State *L)
{
	const char *mode = getenv("TALLY_LUA_MODE"), *hz = getenv("TALLY_LUA_HZ");
	struct ltally_config c = { .mode = TALLY_AGENT_SAMPLE, .output = getenv("TALLY_LUA_OUTPUT"),
				   .exact_output = getenv("TALLY_LUA_EXACT_OUTPUT"),
				   .registry_dir = getenv("TALLY_LUA_REGISTRY_DIR") };
	if (mode && config_mode(mode, &c.mode)) {
		luaL_error(L, "tally: TALLY_LUA_MODE is sample, exact, both, mixed, timer or off, not %s",
			   mode);
		return;
	}
	if (hz) {
		char *end;
		unsigned long v = strtoul(hz, &end, 10);
		if (*end || !v || v > 100000) {
			luaL_error(L, "tally: TALLY_LUA_HZ is 1 to 100000, not %s", hz);
			return;
		}
		c.hz = (uint32_t)v;
	}
	if (!c.mode)
		return;
	const char *err = ltally_start(ltally_state(), L, &c);
	if (err)
		luaL_error(L, "%s", err);
}

LUA_TALLY_API int luaopen_tally(lua_State *L)
{
	static const luaL_Reg fns[] = { { "start", l_start }, { "stop", l_stop }, { "run", l_run },
					{ NULL, NULL } };
	/* A value in the registry whose finalizer runs when the state closes. */
	if (lua_getfield(L, LUA_REGISTRYINDEX, "tally.closer") == LUA_TNIL) {
		lua_newuserdatauv(L, 1, 0);
		lua_createtable(L, 0, 1);
		lua_pushcfunction(L, l_gc);
		lua_setfield(L, -2, "__gc");
		lua_setmetatable(L, -2);
		lua_setfield(L, LUA_REGISTRYINDEX, "tally.closer");
		start_from_env(L);
	}
	lua_pop(L, 1);
	luaL_newlib(L, fns);
	return 1;
}
